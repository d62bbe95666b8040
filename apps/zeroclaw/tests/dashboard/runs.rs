//! Unattended runs in the daemon panel: a schedule run now (`schedule/run`, as `zeroclaw
//! schedules run` does) shows under "Recent runs" once done, and opens its session.

use crate::browser::{Browser, Test, click, until_text};
use crate::page::Dash;
use serde_json::json;
use zeroclaw_testkit::openai;

pub const TESTS: &[Test] = &[(
    "runs::a_finished_schedule_run_is_listed_and_opens_its_session",
    a_finished_schedule_run_is_listed_and_opens_its_session,
)];

fn a_finished_schedule_run_is_listed_and_opens_its_session(b: &Browser) {
    let work = tempfile::tempdir().unwrap();
    let dash = Dash::with(&format!(
        "[gateway]\nlisten = \"127.0.0.1:0\"\n\n[[schedules]]\nname = \"nightly\"\ncron = \"0 3 * * *\"\ncwd = {:?}\nprompt = \"Summarise the day.\"\n",
        work.path().display().to_string()
    ));
    dash.env
        .fake
        .push(openai::text(&["Nothing happened today."]));
    let run = dash
        .env
        .daemon
        .client()
        .call("schedule/run", json!({"name": "nightly"}));
    let c = &b.client;
    b.block(async {
        dash.sign_in(c).await;
        // The panel appears with the run (the page asks again every 5 s while it runs).
        until_text(c, "#runs-list li", "nightly · done").await;
        click(c, "#runs-list li button").await;
        until_text(c, ".msg.user", "Summarise the day.").await;
        until_text(c, ".msg.assistant", "Nothing happened today.").await;
    });
    assert_eq!(run["name"], "nightly");
}
