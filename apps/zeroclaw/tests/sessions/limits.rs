//! Nothing the daemon writes passes its frame cap (issue 11, defect 1): the prompt's
//! result cuts its text, `session/list` pages by `limit` and `cursor`, a `session/messages`
//! page stops at its byte budget and says so, and the CLI follows the pages. A small
//! `daemon.max_frame_bytes` keeps the data small. A single event over the cap is split (text)
//! or cut with a marker (anything else).

use crate::common::*;
use serde_json::{Value, json};
use std::collections::HashSet;
use zeroclaw_testkit::openai;

const CAP: usize = 8 * 1024;

fn small_cap() -> Env {
    Env::new("", &format!("[daemon]\nmax_frame_bytes = {CAP}\n"))
}

/// The answer as one compact line fits the cap.
fn fits(answer: &Value) {
    let len = serde_json::to_string(answer).unwrap().len();
    assert!(len <= CAP, "a {len}-byte answer passes the {CAP}-byte cap");
}

#[test]
fn a_prompt_result_whose_text_passes_the_cap_is_cut_and_says_so() {
    let env = small_cap();
    // 24 KiB of answer in 1 KiB chunks: every event fits, the whole text does not.
    let chunk = "0123456789abcdef".repeat(64);
    let chunks: Vec<&str> = std::iter::repeat_n(chunk.as_str(), 24).collect();
    env.fake.push(openai::text(&chunks));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "talk", no_questions);
    let streamed: String = turn
        .of_type("agent_message_chunk")
        .iter()
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        streamed,
        chunk.repeat(24),
        "the events carry the whole text"
    );
    let answer = turn.answer.clone();
    fits(&answer);
    let result = &answer["result"];
    assert_eq!(result["textTruncated"], json!(true), "{result}");
    let text = result["text"].as_str().unwrap();
    assert!(text.len() <= CAP / 4 && chunk.repeat(24).starts_with(text));

    // The stored answer is longer than a page may be: it comes cut, and says so.
    let page = client.call("session/messages", json!({"sessionId": session}));
    fits(&json!({ "result": page }));
    let stored = page["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(stored["kind"], "assistant");
    assert_eq!(stored["truncated"], json!(true), "{stored}");
}

#[test]
fn session_list_pages_by_limit_and_cursor_and_by_bytes() {
    let env = small_cap();
    let mut client = env.daemon.client();
    let made: HashSet<String> = (0..40).map(|_| client.new_session(&env.work)).collect();

    // No limit: the page stops at its byte budget (40 summaries are ~12 KiB).
    let mut seen = Vec::new();
    let mut params = json!({});
    let mut pages = 0;
    loop {
        let answer = client.request("session/list", params.clone());
        fits(&answer);
        let page = &answer["result"];
        pages += 1;
        for s in page["sessions"].as_array().unwrap() {
            seen.push(s["sessionId"].as_str().unwrap().to_owned());
        }
        match page.get("nextCursor") {
            Some(cursor) => params = json!({ "cursor": cursor }),
            None => break,
        }
    }
    assert!(
        pages > 1,
        "one page held 40 sessions under an {CAP}-byte cap"
    );
    assert_eq!(seen.len(), 40, "each session exactly once");
    assert_eq!(seen.iter().cloned().collect::<HashSet<_>>(), made);

    // With `limit`: pages of that many, in the same order.
    let first = client.call("session/list", json!({"limit": 7}));
    let ids: Vec<&str> = first["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["sessionId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, seen[..7]);
    let second = client.call(
        "session/list",
        json!({"limit": 7, "cursor": first["nextCursor"]}),
    );
    assert_eq!(second["sessions"][0]["sessionId"], json!(seen[7]));
    // A cursor the daemon did not give is invalid params.
    let error = client.fail("session/list", json!({"cursor": "nope"}));
    assert_eq!(error["code"], json!(-32602));

    // The CLI follows the pages.
    let out = env.dir.command(&["sessions", "--json"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 40);
}

#[test]
fn a_messages_page_stops_at_its_byte_budget_and_the_cli_pages_on() {
    let env = small_cap();
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    // Six 1.5 KiB prompts and their answers: ~10 KiB of history, over a page's budget.
    for n in 0..6 {
        env.fake.push(openai::text(&[&format!("answer {n}")]));
        let prompt = format!("prompt {n} {}", "p".repeat(1500));
        client.prompt(&session, &prompt, no_questions);
    }
    let answer = client.request(
        "session/messages",
        json!({"sessionId": session, "limit": 1000}),
    );
    fits(&answer);
    let page = &answer["result"];
    assert_eq!(page["byteLimited"], json!(true), "{page}");
    assert_eq!(page["total"], json!(12));
    let first = page["messages"].as_array().unwrap();
    assert!(first.len() < 12);
    assert_eq!(
        first.last().unwrap()["text"],
        "answer 5",
        "the newest are kept"
    );
    // Paging on with `before` reaches the oldest.
    let mut all = first.clone();
    while all.len() < 12 {
        let page = client.call(
            "session/messages",
            json!({"sessionId": session, "limit": 1000, "before": all[0]["id"]}),
        );
        let mut older = page["messages"].as_array().unwrap().clone();
        assert!(!older.is_empty());
        older.append(&mut all);
        all = older;
    }
    assert!(all[0]["text"].as_str().unwrap().starts_with("prompt 0 "));

    // `zeroclaw sessions show` follows the pages and prints every message.
    let out = env
        .dir
        .command(&["sessions", "show", &session])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shown = String::from_utf8_lossy(&out.stdout);
    for n in 0..6 {
        assert!(
            shown.contains(&format!("> prompt {n} ")),
            "prompt {n} missing"
        );
        assert!(shown.contains(&format!("answer {n}")), "answer {n} missing");
    }
}

/// A `session/update` frame as the daemon wrote it fits the cap.
fn event_fits(params: &Value) {
    fits(&json!({"jsonrpc": "2.0", "method": "session/update", "params": params}));
}

#[test]
fn an_event_over_the_cap_is_split_if_text_and_cut_with_a_marker_if_not() {
    let env = small_cap();
    // One streamed delta of 20 KiB (quotes and newlines take two bytes on the wire), then a
    // tool whose output is 30 KiB.
    let text = "say \"hi\"\n".repeat(2300);
    env.fake.push(openai::text(&[&text]));
    std::fs::write(env.work.join("big.txt"), "b".repeat(30 * 1024)).unwrap();
    env.fake.push(
        openai::Builder::new()
            .tool_call(0, "call_1", "read_file", r#"{"path": "big.txt"}"#, 1)
            .build(),
    );
    env.fake.push(openai::text(&["done"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);

    let turn = client.prompt(&session, "talk", no_questions);
    let chunks = turn.of_type("agent_message_chunk");
    assert!(chunks.len() > 2, "{} chunks", chunks.len());
    chunks.iter().for_each(|e| event_fits(e));
    let joined: String = chunks.iter().map(|e| e["text"].as_str().unwrap()).collect();
    assert_eq!(joined, text, "the split chunks join to the text");

    let turn = client.prompt(&session, "read it", no_questions);
    let result = turn.of_type("tool_result")[0].clone();
    event_fits(&result);
    let out = output(&result);
    assert!(out.starts_with("bbbb"), "{out}");
    assert!(
        out.contains("…[cut by zeroclaw to fit the frame limit: "),
        "{out}"
    );
    assert!(out.ends_with(" bytes removed]"), "{out}");

    // The history keeps the whole output; its replay is fitted by the same rule.
    let stored = env.fake.wait_for_requests(3)[2].body.to_string();
    assert!(
        stored.contains(&"b".repeat(30 * 1024)),
        "the model got it all"
    );
    let (replayed, _) = client.load_with_replay(&session);
    replayed.iter().for_each(event_fits);
    let joined: String = replayed
        .iter()
        .filter(|e| e["type"] == "agent_message_chunk")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert!(joined.starts_with(&text), "the replayed answer is whole");
    let replayed_result = replayed
        .iter()
        .find(|e| e["type"] == "tool_result")
        .unwrap();
    assert!(output(replayed_result).contains("bytes removed]"));
}
