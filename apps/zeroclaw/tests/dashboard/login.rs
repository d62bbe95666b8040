//! Signing in: the one-time link opens the dashboard; a used or wrong code is refused, and
//! without the cookie the page says how to sign in.

use crate::browser::{Browser, Test, element, until_text};
use crate::page::{Dash, connected};

pub const TESTS: &[Test] = &[(
    "login::a_one_time_link_signs_in_once_and_a_used_or_wrong_code_is_refused",
    a_one_time_link_signs_in_once_and_a_used_or_wrong_code_is_refused,
)];

fn a_one_time_link_signs_in_once_and_a_used_or_wrong_code_is_refused(b: &Browser) {
    let dash = Dash::new();
    let c = &b.client;
    b.block(async {
        // Without the cookie the page does not connect; it says how to sign in.
        c.goto(&dash.url).await.unwrap();
        element(c, "#conn[data-state='signed-out']").await;
        until_text(c, "#signin", "zeroclaw dashboard").await;

        let link = dash.link();
        c.goto(&link).await.unwrap();
        connected(c).await;
        // The code left the address bar at once; the page is the dashboard.
        assert_eq!(
            c.current_url().await.unwrap().as_str(),
            format!("{}/", dash.url)
        );
        until_text(c, "#status-list", env!("CARGO_PKG_VERSION")).await;
        until_text(c, "#status-list [data-field='provider']", "openai · fake").await;
        until_text(c, "#status-list [data-field='gateway']", &dash.url).await;

        // The same link again, without the cookie: refused.
        c.delete_all_cookies().await.unwrap();
        c.goto(&link).await.unwrap();
        until_text(c, "#message", "already used or has expired").await;
        // A code the daemon never gave: refused the same way.
        c.goto(&format!("{}/login#code=zc_not_a_code", dash.url))
            .await
            .unwrap();
        until_text(c, "#message", "already used or has expired").await;
        c.goto(&dash.url).await.unwrap();
        element(c, "#conn[data-state='signed-out']").await;
    });
}
