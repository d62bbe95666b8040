//! `zeroclaw prompt --command NAME ARGS`: a custom command of the session's project sent as
//! its expanded prompt (docs/project.md), each shell word one `$N`.

use super::zeroclaw;
use crate::common::*;
use zeroclaw_testkit::openai;

#[test]
fn prompt_command_sends_the_commands_expanded_prompt() {
    let env = Env::new("", "");
    let commands = env.work.join(".zeroclaw").join("commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("fix-issue.md"),
        "---\ndescription: Fix an issue\n---\nFix issue #$1 with priority $2.\n",
    )
    .unwrap();
    env.fake.push(openai::text(&["Fixed."]));
    zeroclaw(&env.dir)
        .args(["prompt", "--cwd"])
        .arg(&env.work)
        .args(["--command", "fix-issue", "123", "very high"])
        .assert()
        .code(0)
        .stdout("Fixed.\n");
    let body = &env.fake.wait_for_requests(1)[0].body;
    let user = body["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(user["content"], "Fix issue #123 with priority very high.\n");

    // A name the project has not: the error lists those it has, and nothing is sent.
    let out = zeroclaw(&env.dir)
        .args(["prompt", "--cwd"])
        .arg(&env.work)
        .args(["--command", "nope"])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(stderr.contains("no custom command \"nope\""), "{stderr}");
    assert!(stderr.contains("fix-issue"), "{stderr}");
    assert_eq!(env.fake.request_count(), 1);
}
