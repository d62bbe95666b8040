//! `glob` through a real turn: it runs without approval, skips what `.gitignore` ignores
//! and stops at its cap.

use crate::common::*;
use serde_json::json;
use zeroclaw_testkit::openai;

#[test]
fn glob_honours_gitignore_and_its_cap_without_asking() {
    let env = Env::new("", "");
    let w = &env.work;
    std::fs::write(w.join(".gitignore"), "build/\n").unwrap();
    std::fs::create_dir_all(w.join("src")).unwrap();
    std::fs::create_dir_all(w.join("build")).unwrap();
    for i in 0..5 {
        std::fs::write(w.join(format!("src/m{i}.rs")), "").unwrap();
    }
    std::fs::write(w.join("build/out.rs"), "").unwrap();
    env.fake
        .push(tool_call("call_1", "glob", json!({"pattern": "*.rs"}), 1));
    env.fake.push(tool_call(
        "call_2",
        "glob",
        json!({"pattern": "**/*.rs", "max_results": 2}),
        1,
    ));
    env.fake.push(openai::text(&["found"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "find rust files", no_questions);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let results = turn.of_type("tool_result");
    let all = output(results[0]);
    assert_eq!(all.lines().count(), 5, "{all}");
    assert!(!all.contains("build"), "{all}");
    let capped = output(results[1]);
    let lines: Vec<&str> = capped.lines().collect();
    assert_eq!(lines.len(), 3, "{capped}");
    assert!(
        lines[2].starts_with("[... 3 more files not shown (5 matched; the limit is 2)"),
        "{capped}"
    );
}
