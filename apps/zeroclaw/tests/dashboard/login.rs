//! Signing in: the one-time link opens the dashboard; a used or wrong code is refused, and
//! without the cookie the page says how to sign in.

use crate::browser::{Browser, Test, element, until_text};
use crate::page::{Dash, connected};
use std::os::unix::fs::PermissionsExt;

pub const TESTS: &[Test] = &[
    (
        "login::a_one_time_link_signs_in_once_and_a_used_or_wrong_code_is_refused",
        a_one_time_link_signs_in_once_and_a_used_or_wrong_code_is_refused,
    ),
    (
        "login::dashboard_open_prints_the_link_and_hands_the_same_one_to_the_system_opener",
        dashboard_open_prints_the_link_and_hands_the_same_one_to_the_system_opener,
    ),
];

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
        // This daemon has no unattended runs (`runs/list` is not a method): no panel.
        element(c, "#runs[hidden]").await;

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

/// `zeroclaw dashboard --open` prints the link and runs the system's opener with it (here
/// a script of that name, first on `PATH`, that writes down what it was given); the link
/// it was given signs in.
fn dashboard_open_prints_the_link_and_hands_the_same_one_to_the_system_opener(b: &Browser) {
    let dash = Dash::new();
    let bin = dash.env.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let opened = dash.env.dir.path().join("opened.txt");
    let opener = bin.join(if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    });
    std::fs::write(
        &opener,
        format!(
            "#!/bin/sh\nprintf '%s' \"$1\" > {0}.tmp && mv {0}.tmp {0}\n",
            opened.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&opener, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = dash
        .env
        .dir
        .command(&["dashboard", "--open"])
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let printed = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    assert!(
        printed.starts_with(&format!("{}/login#code=", dash.url)),
        "{printed}"
    );
    crate::common::poll_until("the opener to write down its link", || opened.exists());
    assert_eq!(std::fs::read_to_string(&opened).unwrap(), printed);

    let c = &b.client;
    b.block(async {
        c.goto(&printed).await.unwrap();
        connected(c).await;
    });
}
