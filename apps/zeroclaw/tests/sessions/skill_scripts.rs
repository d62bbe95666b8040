//! A project skill's scripts run only once the user trusts the project (`zeroclaw trust`,
//! the real CLI): before, a `bash` call that names the skill's folder is refused without
//! running (even with `bash` allowed), and the model is told how the user can trust it.

use crate::common::*;
use zeroclaw_testkit::openai;

#[test]
fn an_untrusted_projects_skill_script_does_not_run_until_zeroclaw_trust() {
    let env = Env::new("", BASH_ALLOWED);
    std::fs::create_dir_all(env.work.join(".git")).unwrap();
    let skill = env.work.join(".zeroclaw/skills/notes");
    std::fs::create_dir_all(skill.join("scripts")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: notes\ndescription: Collects notes. Run scripts/collect.sh.\n---\nRun it.\n",
    )
    .unwrap();
    let marker = env.work.join("script-ran");
    // `cmd` runs a `.cmd` by its path (with `\`), a shell a `.sh` with `sh`.
    let (file, command) = if cfg!(windows) {
        ("collect.cmd", r".zeroclaw\skills\notes\scripts\collect.cmd")
    } else {
        ("collect.sh", "sh .zeroclaw/skills/notes/scripts/collect.sh")
    };
    std::fs::write(
        skill.join("scripts").join(file),
        format!("{}\n", touch_command(&marker)),
    )
    .unwrap();
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);

    env.fake.push(bash_call("call_1", command, 1));
    env.fake.push(openai::text(&["refused"]));
    client.prompt(&session, "collect", no_questions);
    let refusal = tool_content(&env.fake.wait_for_requests(2)[1].body, "call_1");
    assert!(refusal.contains("is not trusted"), "{refusal}");
    assert!(refusal.contains("zeroclaw trust"), "{refusal}");
    assert!(!marker.exists(), "the untrusted skill's script ran");
    // Another command is not refused.
    env.fake.push(bash_call("call_2", "echo other", 1));
    env.fake.push(openai::text(&["ran"]));
    client.prompt(&session, "other", no_questions);
    let other = tool_content(&env.fake.wait_for_requests(4)[3].body, "call_2");
    assert!(other.contains("other"), "{other}");
    assert!(!other.contains("not trusted"), "{other}");

    let out = env
        .dir
        .command(&["trust", &env.work.display().to_string()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    env.fake.push(bash_call("call_3", command, 1));
    env.fake.push(openai::text(&["ran it"]));
    client.prompt(&session, "collect again", no_questions);
    let ran = tool_content(&env.fake.wait_for_requests(6)[5].body, "call_3");
    assert!(!ran.contains("not trusted"), "{ran}");
    assert!(
        marker.exists(),
        "the trusted skill's script did not run: {ran}"
    );
}
