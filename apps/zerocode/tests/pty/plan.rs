//! The agent's plan (`todo_write`) shows as a checklist, printed again at each change.

use crate::harness::*;
use zeroclaw_testkit::openai;

fn todo_write(id: &str, todos: &str) -> zeroclaw_testkit::Reply {
    openai::Builder::new()
        .tool_call(0, id, "todo_write", &format!("{{\"todos\": {todos}}}"), 2)
        .build()
}

#[test]
fn a_plan_is_shown_as_a_checklist_and_again_when_it_changes() {
    let env = Env::new();
    let mut term = env.ready_no_color(&[]);
    env.fake.push(todo_write(
        "call_1",
        r#"[{"content": "Read the code", "status": "in_progress"}, {"content": "Fix the bug", "status": "pending"}]"#,
    ));
    env.fake.push(todo_write(
        "call_2",
        r#"[{"content": "Read the code", "status": "completed"}, {"content": "Fix the bug", "status": "in_progress"}]"#,
    ));
    env.fake.push(openai::text(&["done"]));
    term.send("plan it\r");
    let raw = term.expect_raw("[end_turn]");
    let screen = screen(&raw);
    let first = screen.find("Plan (0/2 done)").expect(&screen);
    let second = screen.find("Plan (1/2 done)").expect(&screen);
    assert!(first < second, "{screen}");
    let (before, after) = screen.split_at(second);
    assert!(
        before.contains("◐ Read the code") && before.contains("☐ Fix the bug"),
        "{screen}"
    );
    assert!(
        after.contains("☑ Read the code") && after.contains("◐ Fix the bug"),
        "{screen}"
    );
    term.expect("> ");
    term.quit();
}
