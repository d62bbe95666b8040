//! `zeroclaw prompt --image FILE`: the file goes with the prompt as an image block, which
//! the provider receives; a file that is no image is refused before any session is made.
//! Also `zeroclaw prompt`'s exit status 4 when a turn stops at its budget.

use super::zeroclaw;
use crate::common::*;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use zeroclaw_testkit::openai;

#[test]
fn prompt_with_image_sends_the_file_as_an_image() {
    let env = Env::new("", "");
    let shot = env.work.join("shot.png");
    std::fs::write(&shot, zeroclaw_testkit::PNG).unwrap();
    env.fake.push(openai::text(&["A screenshot."]));
    zeroclaw(&env.dir)
        .args(["prompt", "--approve", "none", "--image"])
        .arg(&shot)
        .arg("--cwd")
        .arg(&env.work)
        .arg("what is it?")
        .assert()
        .code(0);
    let body = &env.fake.wait_for_requests(1)[0].body;
    let user = body["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(
        user["content"][1]["image_url"]["url"],
        format!(
            "data:image/png;base64,{}",
            STANDARD.encode(zeroclaw_testkit::PNG)
        ),
        "{body}"
    );

    let notes = env.work.join("notes.txt");
    std::fs::write(&notes, "x").unwrap();
    let out = zeroclaw(&env.dir)
        .args(["prompt", "--image"])
        .arg(&notes)
        .arg("hi")
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("--image") && stderr.contains("notes.txt: not a PNG, JPEG, GIF or WebP"),
        "{stderr}"
    );
    assert_eq!(env.fake.request_count(), 1);
}

#[test]
fn a_turn_stopped_at_its_budget_exits_4_naming_the_limit() {
    let env = Env::new("", "[limits]\nmax_tokens_per_turn = 100");
    env.fake.push(
        openai::Builder::new()
            .tool_call(0, "call_1", "list_dir", r#"{"path":"."}"#, 1)
            .usage(90, 20)
            .build(),
    );
    let out = zeroclaw(&env.dir)
        .args(["prompt", "--approve", "none", "--cwd"])
        .arg(&env.work)
        .arg("loop")
        .assert()
        .code(4);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("stopped at its budget limits.max_tokens_per_turn (110 tokens of 100)"),
        "{stderr}"
    );
}
