//! The mode picker in the session's head: it shows the session's permission mode, sets
//! it (`session/set_mode`), follows a change made by another client, and says why a mode
//! is refused (`auto` without a sandbox) while keeping the session's mode.

use crate::browser::{Browser, Test, click, element, until};
use crate::page::{Dash, open};
use serde_json::json;

pub const TESTS: &[Test] = &[(
    "modes::the_mode_picker_sets_the_mode_and_follows_other_clients",
    the_mode_picker_sets_the_mode_and_follows_other_clients,
)];

fn the_mode_picker_sets_the_mode_and_follows_other_clients(b: &Browser) {
    let dash = Dash::with("[gateway]\nlisten = \"127.0.0.1:0\"\n\n[sandbox]\nmode = \"full\"");
    let id = dash.session("modes");
    let mut other = dash.env.daemon.client();
    other.call("session/load", json!({"sessionId": id}));
    let c = &b.client;
    b.block(async {
        dash.sign_in(c).await;
        open(c, &id).await;
        element(c, "#mode[data-mode='default']").await;
        click(c, "#mode option[value='plan']").await;
        element(c, "#mode[data-mode='plan']").await;
    });
    let list = other.call("session/list", json!({}));
    assert_eq!(list["sessions"][0]["mode"], "plan");

    // Another client changes it: the picker follows.
    other.call(
        "session/set_mode",
        json!({"sessionId": id, "mode": "accept-edits"}),
    );
    b.block(async {
        element(c, "#mode[data-mode='accept-edits']").await;
        // `auto` is refused here (no sandbox): said, and the picker keeps the mode.
        click(c, "#mode option[value='auto']").await;
        until(
            c,
            "!document.getElementById('mode-error').hidden && document.getElementById('mode-error').textContent.includes(arguments[0])",
            json!("allow_auto_without_sandbox"),
        )
        .await;
        until(
            c,
            "document.getElementById('mode').value === arguments[0]",
            json!("accept-edits"),
        )
        .await;
    });
    let list = other.call("session/list", json!({}));
    assert_eq!(list["sessions"][0]["mode"], "accept-edits");
}
