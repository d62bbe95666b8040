//! An approval card shows the daemon's preview: an edit's diff with its removed and added
//! lines marked, built from text (markup in the file stays text), and a bash command with
//! its cwd.

use crate::browser::{Browser, Test, click, count, element, texts, until_text};
use crate::common::{bash_call, tool_call};
use crate::page::{Dash, open, prompt};
use serde_json::json;
use zeroclaw_testkit::openai;

pub const TESTS: &[Test] = &[(
    "approval_preview::an_approval_card_shows_the_edits_diff_and_the_commands_cwd",
    an_approval_card_shows_the_edits_diff_and_the_commands_cwd,
)];

fn an_approval_card_shows_the_edits_diff_and_the_commands_cwd(b: &Browser) {
    let dash = Dash::new();
    let file = dash.env.work.join("page.html");
    std::fs::write(
        &file,
        "<p>one</p>\n<img src=x onerror=alert(1)>\n<p>three</p>\n",
    )
    .unwrap();
    let id = dash.session("preview");
    dash.env.fake.push(tool_call(
        "call_1",
        "edit_file",
        json!({"path": "page.html", "old_text": "<img src=x onerror=alert(1)>", "new_text": "<b>two</b>"}),
        2,
    ));
    dash.env.fake.push(bash_call("call_2", "echo previewed", 2));
    dash.env.fake.push(openai::text(&["Both done."]));
    let c = &b.client;
    b.block(async {
        dash.sign_in(c).await;
        open(c, &id).await;
        prompt(c, "edit the page").await;
        let card = ".tool[data-call='call_1'] .approval";
        element(c, &format!("{card} pre.diff")).await;
        until_text(
            c,
            &format!("{card} .preview"),
            &format!("changes to {}", file.canonicalize().unwrap().display()),
        )
        .await;
        assert_eq!(
            texts(c, &format!("{card} pre.diff span")).await,
            [
                "@@ -1,3 +1,3 @@",
                " <p>one</p>",
                "-<img src=x onerror=alert(1)>",
                "+<b>two</b>",
                " <p>three</p>"
            ]
        );
        assert_eq!(count(c, &format!("{card} .diff-del")).await, 1);
        assert_eq!(count(c, &format!("{card} .diff-add")).await, 1);
        assert_eq!(count(c, &format!("{card} .diff-hunk")).await, 1);
        // The file's markup is text, never elements.
        assert_eq!(count(c, &format!("{card} img, {card} b")).await, 0);
        click(c, &format!("{card} button[data-decision='allow_once']")).await;

        let card = ".tool[data-call='call_2'] .approval";
        until_text(c, &format!("{card} .preview"), "echo previewed").await;
        until_text(
            c,
            &format!("{card} .preview"),
            &format!("in {}", dash.env.work.display()),
        )
        .await;
        click(c, &format!("{card} button[data-decision='allow_once']")).await;
        until_text(c, ".msg.assistant", "Both done.").await;
    });
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "<p>one</p>\n<b>two</b>\n<p>three</p>\n"
    );
}
