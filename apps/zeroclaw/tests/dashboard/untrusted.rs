//! Model output is text, never markup: HTML in an answer is shown as written, a
//! `javascript:` link stays text, and only http(s) links become links.

use crate::browser::{Browser, Test, count, texts, until_text};
use crate::page::{Dash, open, prompt};
use serde_json::json;
use zeroclaw_testkit::openai;

pub const TESTS: &[Test] = &[(
    "untrusted::html_in_an_answer_is_shown_as_text_and_only_web_links_are_links",
    html_in_an_answer_is_shown_as_text_and_only_web_links_are_links,
)];

fn html_in_an_answer_is_shown_as_text_and_only_web_links_are_links(b: &Browser) {
    let dash = Dash::new();
    let id = dash.session("untrusted");
    dash.env.fake.push(openai::text(&[
        "<img src=x onerror=\"window.__pwned=1\"> **<script>window.__pwned=2</script>**\n\n",
        "[click](javascript:window.__pwned=3) and [docs](https://example.com/a?b=1)",
    ]));
    let c = &b.client;
    b.block(async {
        dash.sign_in(c).await;
        open(c, &id).await;
        prompt(c, "say something nasty").await;
        until_text(c, ".msg.assistant", "<img src=x onerror=").await;
        until_text(
            c,
            ".msg.assistant strong",
            "<script>window.__pwned=2</script>",
        )
        .await;
        assert_eq!(count(c, "#transcript img, #transcript script").await, 0);
        assert_eq!(
            texts(c, ".msg.assistant a").await,
            ["docs"],
            "only the https link is a link"
        );
        let href = c
            .execute(
                "return document.querySelector('.msg.assistant a').getAttribute('href');",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(href, json!("https://example.com/a?b=1"));
        until_text(c, ".msg.assistant", "click (javascript:window.__pwned=3)").await;
        let pwned = c
            .execute("return window.__pwned === undefined;", vec![])
            .await
            .unwrap();
        assert_eq!(pwned, json!(true));
    });
}
