//! `apply_patch` through a real turn: asked about with a diff of every file, then applied
//! to all of them; a patch with one hunk that does not apply writes nothing.

use crate::common::*;
use serde_json::json;
use zeroclaw_testkit::openai;

const TWO_FILES: &str = "--- a/one.txt\n+++ b/one.txt\n@@ -1,2 +1,2 @@\n alpha\n-beta\n+BETA\n\
    --- a/two.txt\n+++ b/two.txt\n@@ -1,2 +1,3 @@\n gamma\n+inserted\n delta\n";

#[test]
fn a_patch_of_two_files_is_previewed_approved_and_applied_to_both() {
    let env = Env::new("", "");
    std::fs::write(env.work.join("one.txt"), "alpha\nbeta\n").unwrap();
    std::fs::write(env.work.join("two.txt"), "gamma\ndelta\n").unwrap();
    env.fake.push(tool_call(
        "call_1",
        "apply_patch",
        json!({ "patch": TWO_FILES }),
        3,
    ));
    env.fake.push(openai::text(&["patched"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "patch it", decide_all("allow_once"));
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let ask = turn.one("approval_request");
    assert_eq!(ask["name"], "apply_patch");
    let diff = ask["preview"]["diff"].as_str().unwrap();
    assert!(
        diff.contains("--- a/one.txt\n+++ b/one.txt\n") && diff.contains("+inserted"),
        "{diff}"
    );
    let result = turn.one("tool_result");
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(
        std::fs::read_to_string(env.work.join("one.txt")).unwrap(),
        "alpha\nBETA\n"
    );
    assert_eq!(
        std::fs::read_to_string(env.work.join("two.txt")).unwrap(),
        "gamma\ninserted\ndelta\n"
    );
}

#[test]
fn a_patch_with_one_failing_hunk_leaves_both_files_byte_identical() {
    let env = Env::new("", "[approvals]\napply_patch = \"allow\"");
    std::fs::write(env.work.join("one.txt"), "alpha\nbeta\n").unwrap();
    std::fs::write(env.work.join("two.txt"), "gamma\r\nDELTA\r\n").unwrap();
    let before = |name: &str| std::fs::read(env.work.join(name)).unwrap();
    let (one, two) = (before("one.txt"), before("two.txt"));
    env.fake.push(tool_call(
        "call_1",
        "apply_patch",
        json!({ "patch": TWO_FILES }),
        1,
    ));
    env.fake.push(openai::text(&["it failed"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "patch it", no_questions);
    let result = turn.one("tool_result");
    assert_eq!(result["isError"], true);
    let text = output(result);
    assert!(
        text.starts_with("apply_patch: two.txt: hunk 1 of 1 does not apply")
            && text.contains("Nothing was changed"),
        "{text}"
    );
    assert_eq!(before("one.txt"), one);
    assert_eq!(before("two.txt"), two);
}
