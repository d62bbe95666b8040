//! A prompt sent with Enter, its answer streamed and rendered as Markdown (highlighted
//! code, folded thoughts), the turn's tokens at its end, and the history after a reload.

use crate::browser::{Browser, Test, count, element, screenshot, texts, until, until_text};
use crate::page::{Dash, loaded, open, prompt};
use serde_json::json;
use zeroclaw_testkit::{Gate, openai};

pub const TESTS: &[Test] = &[(
    "streaming::an_answer_streams_as_markdown_with_its_tokens_and_survives_a_reload",
    an_answer_streams_as_markdown_with_its_tokens_and_survives_a_reload,
)];

fn an_answer_streams_as_markdown_with_its_tokens_and_survives_a_reload(b: &Browser) {
    let dash = Dash::new();
    let id = dash.session("markdown");
    let gate = Gate::new();
    dash.env.fake.push(
        openai::Builder::new()
            .reasoning("The user wants an example.")
            .text("Here is **bold** text")
            .wait_for(&gate)
            .text(" and code:\n\n```rust\nfn main() { let x = 42; }\n```\n\n- one\n- two\n")
            .usage(12, 7)
            .build(),
    );
    let c = &b.client;
    b.block(async {
        dash.sign_in(c).await;
        open(c, &id).await;
        // Shift-Enter makes a new line (Shift down, Enter, keys up); Enter sends.
        prompt(c, "show me\u{E008}\u{E007}\u{E000}some markdown").await;
        // The prompt went on Enter, whole; the box is empty again.
        until_text(c, ".msg.user", "some markdown").await;
        assert_eq!(
            element(c, "#prompt").await.prop("value").await.unwrap(),
            Some(String::new())
        );
        // Mid-stream: the first part is on the page, rendered, and the turn can be stopped.
        until_text(c, ".msg.assistant strong", "bold").await;
        element(c, "#stop:not([hidden])").await;
        let thought = element(c, "details.thought").await;
        assert_eq!(
            thought.attr("open").await.unwrap(),
            None,
            "thoughts are folded"
        );
        until_text(c, "details.thought", "The user wants an example.").await;

        gate.open();
        until_text(c, ".turn-end", "12 in · 7 out tokens").await;
        element(c, "#stop[hidden]").await;
        assert_eq!(
            texts(c, ".msg.assistant pre code .tok-keyword").await,
            ["fn", "let"]
        );
        assert_eq!(
            texts(c, ".msg.assistant pre code .tok-number").await,
            ["42"]
        );
        assert_eq!(texts(c, ".msg.assistant li").await, ["one", "two"]);
        screenshot(c, "session-desktop").await;
        c.set_window_size(390, 844).await.unwrap();
        screenshot(c, "session-phone").await;
        click_back_and_shoot(c).await;
        c.set_window_size(1280, 900).await.unwrap();

        // A reload shows the history (replayed), once.
        c.goto(&format!("{}/#session={id}", dash.url))
            .await
            .unwrap();
        c.refresh().await.unwrap();
        loaded(c, &id).await;
        until_text(c, ".msg.assistant strong", "bold").await;
        assert_eq!(count(c, ".msg.user").await, 1);
        assert_eq!(count(c, ".msg.assistant").await, 1);
        assert_eq!(count(c, "details.thought").await, 1);
        until_text(c, ".msg.user", "show me\nsome markdown").await;
        until(
            c,
            "document.querySelector('.msg.assistant').textContent.includes('fn main()')",
            json!(null),
        )
        .await;
    });
    let messages = dash
        .env
        .daemon
        .client()
        .call("session/messages", json!({"sessionId": id}));
    assert_eq!(messages["messages"][0]["text"], "show me\nsome markdown");
}

/// At phone width the list and the session are one column each, with a back button.
async fn click_back_and_shoot(c: &fantoccini::Client) {
    crate::browser::click(c, "#back").await;
    element(c, "#session[hidden]").await;
    screenshot(c, "sessions-phone").await;
}
