//! Issue 37: a session started from zerocode is titled after its first prompt, as the CLI
//! titles its sessions; `/title NAME` renames it. Both read back from the daemon's list.

use crate::harness::*;
use serde_json::Value;
use zeroclaw_testkit::openai;

/// The titles `zeroclaw sessions --json` lists for this environment's daemon.
fn titles(env: &Env) -> Vec<String> {
    let out = std::process::Command::new(daemon_binary())
        .arg("--config-dir")
        .arg(&env.config_dir)
        .args(["sessions", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    list.as_array()
        .unwrap()
        .iter()
        .map(|s| s["title"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[test]
fn the_first_prompt_titles_the_session_and_title_renames_it() {
    let env = Env::new();
    let mut term = env.ready(&[]);
    env.fake.push(openai::text(&["Two files."]));
    term.send("what is in this directory?\r");
    term.expect("Two files.");
    term.expect("> ");
    term.send("/sessions\r");
    let list = term.expect("/load N resumes one");
    assert!(list.contains("what is in this directory?"), "{list}");
    term.expect("> ");
    assert_eq!(titles(&env), ["what is in this directory?"]);

    term.send("/title the directory tour\r");
    term.expect("title: the directory tour");
    term.expect("> ");
    assert_eq!(titles(&env), ["the directory tour"]);
    // A later prompt keeps the title it was given.
    env.fake.push(openai::text(&["Still two."]));
    term.send("and now?\r");
    term.expect("Still two.");
    term.expect("> ");
    assert_eq!(titles(&env), ["the directory tour"]);
    term.send("/quit\r");
    env.wait_daemon_gone();
}

/// Issue 37: a first prompt that fails (the provider answers 500) leaves a titled session
/// that explains itself: loaded again, its history shows the prompt and why it failed.
#[test]
fn a_failed_first_prompt_is_titled_and_its_error_is_in_the_history() {
    let env = Env::new();
    let mut term = env.ready(&[]);
    let banner = term.screen();
    let first = short_id(&banner, "session ");
    // No scripted reply: the fake provider answers 500.
    term.send("will this work?\r");
    term.expect("the turn failed: ");
    term.expect("> ");
    assert_eq!(titles(&env), ["will this work?"]);
    term.send("/new\r");
    term.expect("> ");
    term.send(&format!("/load {first}\r"));
    let replay = term.expect(&format!("now in session {first}"));
    assert!(replay.contains("> will this work?"), "{replay}");
    assert!(replay.contains("the turn failed: "), "{replay}");
    assert!(replay.contains("HTTP 500"), "{replay}");
    term.expect("> ");
    term.quit();
    env.wait_daemon_gone();
}
