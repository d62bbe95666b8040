//! Issue 34 in the dashboard: an image picked with the prompt box's file input is checked,
//! shown as a thumbnail, sent with the prompt as an `image` content block (the provider gets
//! it as an `image_url` part) and shown in the transcript from a blob: URL; after a reload
//! the replayed prompt's image is read back with `session/attachment`. A file that is not
//! an image, or is over 5 MiB, is refused in the page, by name; a prompt the daemon refuses
//! (a model that takes no images) leaves no echo and gives its images and text back.

use crate::browser::{Browser, Test, count, element, until, until_text};
use crate::page::{Dash, loaded, open, prompt};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::json;
use zeroclaw_testkit::{PNG, openai};

pub const TESTS: &[Test] = &[
    (
        "images::a_picked_image_is_sent_with_the_prompt_and_shown_live_and_after_a_reload",
        a_picked_image_is_sent_with_the_prompt_and_shown_live_and_after_a_reload,
    ),
    (
        "images::a_pasted_and_a_dropped_image_join_the_prompt",
        a_pasted_and_a_dropped_image_join_the_prompt,
    ),
    (
        "images::a_refused_prompt_gives_its_images_and_text_back_to_the_prompt_box",
        a_refused_prompt_gives_its_images_and_text_back_to_the_prompt_box,
    ),
];

/// Pastes a PNG (`arguments[0]`, its bytes) into the prompt box as a clipboard image file
/// would, then drops another on the transcript; answers whether the page accepted the
/// drag (a refused one would have the browser leave the page to show the file).
const PASTE_AND_DROP: &str = r#"
const png = (name) => new File([new Uint8Array(arguments[0])], name, {type: "image/png"});
const clipboard = new DataTransfer();
clipboard.items.add(png("pasted.png"));
document.getElementById("prompt").dispatchEvent(new ClipboardEvent("paste", {clipboardData: clipboard, bubbles: true, cancelable: true}));
const dragged = new DataTransfer();
dragged.items.add(png("dropped.png"));
const target = document.getElementById("transcript");
const accepted = !target.dispatchEvent(new DragEvent("dragover", {dataTransfer: dragged, bubbles: true, cancelable: true}));
target.dispatchEvent(new DragEvent("drop", {dataTransfer: dragged, bubbles: true, cancelable: true}));
return accepted;
"#;

/// True once an `<img>` matching `arguments[0]` shows a loaded blob: URL of a 1×1 image.
const SHOWN: &str = "[...document.querySelectorAll(arguments[0])].some((i) => i.src.startsWith('blob:') && i.complete && i.naturalWidth === 1)";

/// Hands `path` to the prompt box's (hidden) file input, as a file picker would.
async fn pick(c: &fantoccini::Client, path: &std::path::Path) {
    element(c, "#image-input")
        .await
        .send_keys(&path.to_string_lossy())
        .await
        .unwrap();
}

fn a_picked_image_is_sent_with_the_prompt_and_shown_live_and_after_a_reload(b: &Browser) {
    let dash = Dash::new();
    let id = dash.session("pictures");
    dash.env.fake.push(openai::text(&["a single pixel"]));
    let files = tempfile::tempdir().unwrap();
    let pixel = files.path().join("pixel.png");
    std::fs::write(&pixel, PNG).unwrap();
    let notes = files.path().join("notes.png");
    std::fs::write(&notes, "not an image at all").unwrap();
    // A PNG's first bytes, and 6 MiB.
    let big = files.path().join("big.png");
    let mut bytes = PNG.to_vec();
    bytes.resize(6 * 1024 * 1024, 0);
    std::fs::write(&big, bytes).unwrap();

    let c = &b.client;
    b.block(async {
        dash.sign_in(c).await;
        open(c, &id).await;

        // Refused in the page, by name: not an image (whatever its name says), too large.
        pick(c, &notes).await;
        until_text(
            c,
            "#attach-error:not([hidden])",
            "notes.png is not a PNG, JPEG, GIF or WebP image",
        )
        .await;
        pick(c, &big).await;
        until_text(
            c,
            "#attach-error:not([hidden])",
            "big.png is 6.0 MiB; an image may be at most 5 MiB",
        )
        .await;
        assert_eq!(count(c, ".attachment").await, 0);

        // Taken: a thumbnail with a remove button; removed, and picked again.
        pick(c, &pixel).await;
        until(c, SHOWN, json!(".attachment img")).await;
        element(c, "#attach-error[hidden]").await;
        crate::browser::click(c, ".attachment .remove").await;
        element(c, "#attachments[hidden]").await;
        pick(c, &pixel).await;
        until(c, SHOWN, json!(".attachment img")).await;

        prompt(c, "what is this?").await;
        // Sent: the box is empty again, and the prompt shows its image.
        element(c, "#attachments[hidden]").await;
        until_text(c, ".msg.user", "what is this?").await;
        until(c, SHOWN, json!(".msg.user .images img")).await;
        until_text(c, ".msg.assistant", "a single pixel").await;
        until_text(c, ".turn-end", "done").await;

        // After a reload the replayed prompt's image is read with `session/attachment`.
        c.refresh().await.unwrap();
        loaded(c, &id).await;
        until_text(c, ".msg.user", "what is this?").await;
        until(c, SHOWN, json!(".msg.user .images img[data-attachment]")).await;
        assert_eq!(count(c, ".msg.user .images img").await, 1);
    });

    // The provider got the image after the text, as OpenAI's data URL.
    let body = &dash.env.fake.requests()[0].body;
    let user = body["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(
        user["content"],
        json!([
            {"type": "text", "text": "what is this?"},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{}", STANDARD.encode(PNG))}},
        ])
    );
}

fn a_pasted_and_a_dropped_image_join_the_prompt(b: &Browser) {
    let dash = Dash::new();
    let id = dash.session("pasted");
    dash.env.fake.push(openai::text(&["two pixels"]));
    let c = &b.client;
    b.block(async {
        dash.sign_in(c).await;
        open(c, &id).await;
        let accepted = c.execute(PASTE_AND_DROP, vec![json!(PNG)]).await.unwrap();
        assert_eq!(accepted, json!(true), "the drag over the session was refused");
        until(
            c,
            "[...document.querySelectorAll('.attachment img')].map((i) => i.alt).join() === 'pasted.png,dropped.png'",
            json!(null),
        )
        .await;
        prompt(c, "and these?").await;
        until(
            c,
            "document.querySelectorAll('.msg.user .images img').length === 2",
            json!(null),
        )
        .await;
        until_text(c, ".turn-end", "done").await;
    });
    let body = &dash.env.fake.requests()[0].body;
    let user = body["messages"].as_array().unwrap().last().unwrap();
    let parts: Vec<&str> = user["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["type"].as_str().unwrap())
        .collect();
    assert_eq!(parts, ["text", "image_url", "image_url"], "{user}");
}

fn a_refused_prompt_gives_its_images_and_text_back_to_the_prompt_box(b: &Browser) {
    let dash = Dash::configured("images = false", "[gateway]\nlisten = \"127.0.0.1:0\"");
    let id = dash.session("text only");
    let files = tempfile::tempdir().unwrap();
    let pixel = files.path().join("pixel.png");
    std::fs::write(&pixel, PNG).unwrap();
    let c = &b.client;
    b.block(async {
        dash.sign_in(c).await;
        open(c, &id).await;
        pick(c, &pixel).await;
        until(c, SHOWN, json!(".attachment img")).await;
        prompt(c, "what is this?").await;
        // The daemon's refusal is said, the prompt's echo is gone, and the box holds the
        // image and the text again.
        until_text(c, ".note.error", "does not take images").await;
        assert_eq!(count(c, ".msg.user").await, 0);
        until(c, SHOWN, json!(".attachment img")).await;
        until(
            c,
            "document.getElementById('prompt').value === 'what is this?'",
            json!(null),
        )
        .await;
    });
    assert_eq!(dash.env.fake.request_count(), 0);
}
