//! The page follows the system's dark or light preference (emulated through Chromium's
//! DevTools protocol, which chromedriver exposes at `goog/cdp/execute`).

use crate::browser::{Browser, Test, element, screenshot, until};
use crate::page::{Dash, open};
use fantoccini::Client;
use serde_json::{Value, json};
use zeroclaw_testkit::openai;

pub const TESTS: &[Test] = &[(
    "theme::the_page_is_dark_or_light_as_the_system_prefers",
    the_page_is_dark_or_light_as_the_system_prefers,
)];

/// chromedriver's `POST /session/{id}/goog/cdp/execute {cmd, params}`.
#[derive(Debug)]
struct Cdp(Value);

impl fantoccini::wd::WebDriverCompatibleCommand for Cdp {
    fn endpoint(
        &self,
        base: &reqwest::Url,
        session: Option<&str>,
    ) -> Result<reqwest::Url, url::ParseError> {
        base.join(&format!(
            "session/{}/goog/cdp/execute",
            session.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _: &reqwest::Url) -> (reqwest::Method, Option<String>) {
        (reqwest::Method::POST, Some(self.0.to_string()))
    }
}

async fn prefer(c: &Client, scheme: &str) {
    c.issue_cmd(Cdp(json!({
        "cmd": "Emulation.setEmulatedMedia",
        "params": {"features": [{"name": "prefers-color-scheme", "value": scheme}]},
    })))
    .await
    .unwrap();
}

/// Waits until the page's background is `rgb`.
async fn background(c: &Client, rgb: &str) {
    until(
        c,
        "getComputedStyle(document.body).backgroundColor === arguments[0]",
        json!(rgb),
    )
    .await;
}

fn the_page_is_dark_or_light_as_the_system_prefers(b: &Browser) {
    let dash = Dash::new();
    let id = dash.session("themes");
    // Some history to look at: a turn run over the socket.
    dash.env.fake.push(openai::text(&[
        "In **both** themes:\n\n```python\n# a comment\nprint(\"hello\", 42)\n```\n",
    ]));
    let mut other = dash.env.daemon.client();
    other.call("session/load", json!({"sessionId": id}));
    other.prompt(&id, "show code", crate::common::no_questions);
    let c = &b.client;
    b.block(async {
        dash.sign_in(c).await;
        open(c, &id).await;
        element(c, ".msg.assistant pre code .tok-comment").await;
        prefer(c, "dark").await;
        background(c, "rgb(21, 22, 26)").await;
        screenshot(c, "session-dark").await;
        prefer(c, "light").await;
        background(c, "rgb(247, 247, 248)").await;
        prefer(c, "").await;
    });
}
