//! Issue 31: each prompt in the dashboard's transcript has "Rewind to here" and "Fork from
//! here"; the rewind's confirmation lists the files that will change, and confirming puts
//! the files and the conversation back (the page reloads the session on the daemon's
//! `session_rewound`); a fork opens the new session.

use crate::browser::{Browser, Test, click, count, texts, until, until_text};
use crate::common::*;
use crate::page::{Dash, open};
use serde_json::json;
use zeroclaw_testkit::openai;

pub const TESTS: &[Test] = &[(
    "checkpoints::a_prompt_rewinds_to_here_after_listing_the_files_and_forks_from_here",
    a_prompt_rewinds_to_here_after_listing_the_files_and_forks_from_here,
)];

fn a_prompt_rewinds_to_here_after_listing_the_files_and_forks_from_here(b: &Browser) {
    let dash =
        Dash::with("[gateway]\nlisten = \"127.0.0.1:0\"\n[approvals]\nwrite_file = \"allow\"");
    let mut client = dash.env.daemon.client();
    let id = client.new_session(&dash.env.work);
    let f = dash.env.work.join("f.txt");
    for (n, content) in [(1, "one"), (2, "two")] {
        dash.env.fake.push(tool_call(
            &format!("c{n}"),
            "write_file",
            json!({"path": "f.txt", "content": content}),
            1,
        ));
        dash.env.fake.push(openai::text(&["done"]));
        client
            .prompt(&id, &format!("write {content}"), no_questions)
            .result();
    }
    let c = &b.client;
    b.block(async {
        dash.sign_in(c).await;
        open(c, &id).await;
        until(c, "document.querySelectorAll('.rewind-here').length === 2", json!(null)).await;
        // "Rewind to here" on the second prompt: the dialog names the file it puts back.
        c.execute("document.querySelectorAll('.rewind-here')[1].click();", vec![])
            .await
            .unwrap();
        until_text(c, "#checkpoint-h", "Rewind to here?").await;
        assert_eq!(texts(c, "#checkpoint-files li").await, ["f.txt"]);
        click(c, "#checkpoint-confirm").await;
        // The session reloads without the second turn.
        until(
            c,
            "document.querySelectorAll('#transcript .msg.user').length === 1 && document.querySelectorAll('.rewind-here').length === 1",
            json!(null),
        )
        .await;
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "one");
        assert_eq!(count(c, "#checkpoint-dialog[open]").await, 0);

        // "Fork from here" on the first prompt: a new session, with nothing before it.
        click(c, ".fork-here").await;
        until_text(c, "#checkpoint-h", "Fork from here?").await;
        click(c, "#checkpoint-confirm").await;
        until(
            c,
            "document.querySelector('#session').dataset.session !== arguments[0] && document.querySelector('#session').dataset.loaded === 'true'",
            json!(id),
        )
        .await;
        until_text(c, "#session-title", "fork of test").await;
    });
}
