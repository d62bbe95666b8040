//! Signing in: the one-time link opens the dashboard; a used or wrong code is refused;
//! without the session's proof (a new tab with no signed-in tab open, the cookie alone) the
//! page says how to sign in; a new tab beside a signed-in one is signed in by it; `token
//! revoke` signs the page out; `zeroclaw dashboard --open` reaches the browser through a
//! redirect file.

use crate::browser::{Browser, Test, element, until_text};
use crate::page::{Dash, connected};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;

pub const TESTS: &[Test] = &[
    (
        "login::a_one_time_link_signs_in_once_and_a_used_or_wrong_code_is_refused",
        a_one_time_link_signs_in_once_and_a_used_or_wrong_code_is_refused,
    ),
    (
        "login::a_new_tab_is_signed_in_by_an_open_one_and_the_cookie_alone_signs_in_nobody",
        a_new_tab_is_signed_in_by_an_open_one_and_the_cookie_alone_signs_in_nobody,
    ),
    (
        "login::revoking_the_dashboard_session_signs_the_page_out",
        revoking_the_dashboard_session_signs_the_page_out,
    ),
    (
        "login::dashboard_open_hands_the_opener_a_redirect_file_that_signs_in",
        dashboard_open_hands_the_opener_a_redirect_file_that_signs_in,
    ),
];

fn a_one_time_link_signs_in_once_and_a_used_or_wrong_code_is_refused(b: &Browser) {
    let dash = Dash::new();
    let c = &b.client;
    b.block(async {
        // Not signed in, the page does not connect; it says how to sign in.
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
        // The page holds the proof; the cookie is out of its scripts' reach.
        let held = c
            .execute(
                "return [sessionStorage.getItem('zeroclaw.proof'), document.cookie];",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(held[0].as_str().map(str::len), Some(43), "{held}");
        assert!(
            !held[1].as_str().unwrap().contains("zeroclaw_session"),
            "{held}"
        );

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

fn a_new_tab_is_signed_in_by_an_open_one_and_the_cookie_alone_signs_in_nobody(b: &Browser) {
    let dash = Dash::new();
    let c = &b.client;
    b.block(async {
        dash.sign_in(c).await;
        let first = c.window().await.unwrap();
        // A new tab, typed in: no proof of its own; the open tab hands it over.
        let second = c.new_window(true).await.unwrap().handle;
        c.switch_to_window(second.clone()).await.unwrap();
        c.goto(&dash.url).await.unwrap();
        connected(c).await;
        c.close_window().await.unwrap();

        // No dashboard tab open: a new tab has the browser's cookie and nothing else, and
        // is not signed in.
        c.switch_to_window(first.clone()).await.unwrap();
        c.goto("about:blank").await.unwrap();
        let third = c.new_window(true).await.unwrap().handle;
        c.switch_to_window(third).await.unwrap();
        c.goto(&dash.url).await.unwrap();
        element(c, "#conn[data-state='signed-out']").await;
        until_text(c, "#signin", "zeroclaw dashboard").await;
        c.close_window().await.unwrap();

        // The first tab kept its proof (sessionStorage lives with the tab).
        c.switch_to_window(first).await.unwrap();
        c.goto(&dash.url).await.unwrap();
        connected(c).await;
    });
}

fn revoking_the_dashboard_session_signs_the_page_out(b: &Browser) {
    let dash = Dash::new();
    let c = &b.client;
    b.block(async {
        dash.sign_in(c).await;
        let listed = dash.env.daemon.client().call("token/list", json!({}));
        let session = &listed["tokens"][0];
        assert_eq!(session["kind"], "dashboard", "{listed}");
        let name = session["name"].as_str().unwrap();
        let revoked = dash
            .env
            .daemon
            .client()
            .call("token/revoke", json!({ "name": name }));
        assert_eq!(revoked["revoked"], true);
        element(c, "#conn[data-state='signed-out']").await;
        until_text(c, "#signin", "zeroclaw dashboard").await;
    });
}

/// `zeroclaw dashboard --open` prints the link and runs the system's opener (here a script
/// of that name, first on `PATH`, that writes down what it was given) with a redirect file
/// (never the link: a command line is readable by every local user); the browser opening
/// that file is signed in.
fn dashboard_open_hands_the_opener_a_redirect_file_that_signs_in(b: &Browser) {
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
    let file = std::fs::read_to_string(&opened).unwrap();
    assert!(file.ends_with(".html"), "{file}");
    assert!(!file.contains(printed.split_once("#code=").unwrap().1));

    let c = &b.client;
    b.block(async {
        c.goto(&format!("file://{file}")).await.unwrap();
        connected(c).await;
        assert_eq!(
            c.current_url().await.unwrap().as_str(),
            format!("{}/", dash.url)
        );
    });
}
