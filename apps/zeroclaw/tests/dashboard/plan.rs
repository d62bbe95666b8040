//! The agent's plan: each `todo_write` call redraws the checklist above the prompt box, and
//! opening the session again (a reload's replay) shows the latest one.

use crate::browser::{Browser, Test, until_text};
use crate::common::tool_call;
use crate::page::{Dash, open, prompt};
use serde_json::json;
use zeroclaw_testkit::openai;

pub const TESTS: &[Test] = &[(
    "plan::the_checklist_follows_each_todo_write_and_survives_a_reload",
    the_checklist_follows_each_todo_write_and_survives_a_reload,
)];

fn the_checklist_follows_each_todo_write_and_survives_a_reload(b: &Browser) {
    let dash = Dash::with("[gateway]\nlisten = \"127.0.0.1:0\"\n");
    let id = dash.session("plan");
    let step = |status_a: &str, status_b: &str| {
        json!({"todos": [
            {"content": "Read the code", "status": status_a},
            {"content": "Fix the bug", "status": status_b},
        ]})
    };
    dash.env.fake.push(tool_call(
        "call_1",
        "todo_write",
        step("in_progress", "pending"),
        1,
    ));
    dash.env.fake.push(tool_call(
        "call_2",
        "todo_write",
        step("completed", "in_progress"),
        1,
    ));
    dash.env.fake.push(openai::text(&["Planned."]));
    let c = &b.client;
    b.block(async {
        dash.sign_in(c).await;
        open(c, &id).await;
        prompt(c, "plan it").await;
        until_text(c, ".msg.assistant", "Planned.").await;
        until_text(c, "#plan-summary", "Plan · 1/2 done").await;
        until_text(c, "#plan-list li.completed", "☑Read the code").await;
        until_text(c, "#plan-list li.in_progress", "◐Fix the bug").await;

        // A reload replays the history: the checklist is the latest one again.
        c.refresh().await.unwrap();
        until_text(c, "#plan-summary", "Plan · 1/2 done").await;
        until_text(c, "#plan-list li.in_progress", "◐Fix the bug").await;
    });
}
