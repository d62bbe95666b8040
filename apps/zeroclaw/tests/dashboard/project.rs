//! Issue 32: the dashboard shows what a session loads from its project (the Context dialog)
//! and completes the project's custom commands in the prompt box: `/` lists them, Enter
//! takes one, and the prompt sent is the command's, its arguments filled in by the daemon.

use crate::browser::{Browser, Test, click, count, texts, type_into, until, until_text};
use crate::page::{Dash, open};
use serde_json::json;
use zeroclaw_testkit::openai;

pub const TESTS: &[Test] = &[(
    "project::the_context_dialog_lists_the_project_s_files_and_slash_completes_and_expands_its_commands",
    the_context_dialog_lists_the_project_s_files_and_slash_completes_and_expands_its_commands,
)];

fn the_context_dialog_lists_the_project_s_files_and_slash_completes_and_expands_its_commands(
    b: &Browser,
) {
    let dash = Dash::new();
    let work = &dash.env.work;
    std::fs::write(
        work.join("AGENTS.md"),
        "Run `make check` before you finish.\n",
    )
    .unwrap();
    let commands = work.join(".zeroclaw/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("review.md"),
        "---\ndescription: Review a file\nargument-hint: FILE\n---\nReview $ARGUMENTS carefully.\n",
    )
    .unwrap();
    std::fs::write(commands.join("release.md"), "Cut a release.\n").unwrap();
    let id = dash.session("project");
    dash.env.fake.push(openai::text(&["reviewed"]));
    let c = &b.client;
    b.block(async {
        dash.sign_in(c).await;
        open(c, &id).await;

        // Context: the instruction file and the commands.
        click(c, "#context").await;
        until(
            c,
            "document.querySelectorAll('#context-body .instruction').length === 1",
            json!(null),
        )
        .await;
        let files = texts(c, "#context-body .instruction").await;
        assert!(files[0].contains("AGENTS.md"), "{files:?}");
        assert_eq!(
            texts(c, "#context-body .command").await,
            ["/release", "/review FILE Review a file"]
        );
        c.execute("document.getElementById('context-dialog').close();", vec![])
            .await
            .unwrap();

        // `/` lists both commands, `/rev` only one; Enter takes it instead of sending.
        type_into(c, "#prompt", "/").await;
        until(
            c,
            "document.querySelectorAll('#command-list li').length === 2",
            json!(null),
        )
        .await;
        type_into(c, "#prompt", "rev").await;
        until(
            c,
            "document.querySelectorAll('#command-list li').length === 1",
            json!(null),
        )
        .await;
        until_text(c, "#command-list li", "/review FILEReview a file").await;
        type_into(c, "#prompt", "\u{E007}").await;
        until(
            c,
            "document.getElementById('prompt').value === '/review '",
            json!(null),
        )
        .await;
        assert_eq!(count(c, "#command-list li").await, 0);
        assert_eq!(dash.env.fake.request_count(), 0);

        // With its argument, Enter sends the command's prompt.
        type_into(c, "#prompt", "src/main.rs\u{E007}").await;
        until_text(c, "#transcript .msg.assistant", "reviewed").await;
        let shown = texts(c, "#transcript .msg.user").await;
        assert_eq!(shown.len(), 1);
        assert_eq!(shown[0].trim_end(), "Review src/main.rs carefully.");
    });
    let body = &dash.env.fake.wait_for_requests(1)[0].body;
    let messages = body["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user");
    let sent = last["content"].as_str().unwrap();
    assert_eq!(sent.trim_end(), "Review src/main.rs carefully.", "{body:#}");
}
