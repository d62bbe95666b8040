//! Issue 37: ids as shown are ids as accepted. Every command that takes a session id takes a
//! unique prefix of it (at least 4 characters), as zerocode shows them; an ambiguous prefix
//! lists the candidates; and the hints name CLI commands, not RPC methods.

use super::zeroclaw;
use crate::common::*;
use predicates::prelude::*;
use serde_json::json;
use std::collections::HashMap;
use zeroclaw_testkit::openai;

#[test]
fn every_command_taking_a_session_id_takes_a_unique_prefix() {
    let env = Env::new("", "");
    env.fake.push(openai::text(&["second answer"]));
    let mut client = env.daemon.client();
    let id = client.new_session(&env.work);
    let short = &id[..8];
    zeroclaw(&env.dir)
        .args(["prompt", "--session", short, "again"])
        .assert()
        .code(0)
        .stdout("second answer\n")
        .stderr(predicate::str::contains(format!("session {id}")));
    zeroclaw(&env.dir)
        .args(["sessions", "show", short])
        .assert()
        .success()
        .stdout(predicate::str::contains("> again\nsecond answer\n"));
    zeroclaw(&env.dir)
        .args(["sessions", "rename", &id[..4], "renamed by prefix"])
        .assert()
        .success()
        .stdout(predicate::str::contains(format!("renamed session {id}")));
    let listed = client.call("session/list", json!({}));
    assert_eq!(listed["sessions"][0]["title"], "renamed by prefix");
    zeroclaw(&env.dir)
        .args(["sessions", "delete", short])
        .assert()
        .success()
        .stdout(format!("deleted session {id}\n"));
    // Gone: the prefix names nothing now, and the hint is the command that lists sessions.
    zeroclaw(&env.dir)
        .args(["sessions", "show", short])
        .assert()
        .failure()
        .stderr(
            predicate::str::contains(format!(
                "no session \"{short}\"; `zeroclaw sessions` lists the sessions there are"
            ))
            .and(predicate::str::contains("session/list").not()),
        );
}

#[test]
fn a_short_or_ambiguous_prefix_is_refused_with_the_candidates() {
    let env = Env::new("", "");
    let mut client = env.daemon.client();
    // Ids are random: make sessions until two share their first 4 characters (about 300
    // on average; 3,000 make a miss a chance of about 1 in 10^30).
    let mut by_prefix: HashMap<String, String> = HashMap::new();
    let (first, second) = (0..3000)
        .find_map(|_| {
            let id = client.new_session(&env.work);
            let prefix = id[..4].to_owned();
            by_prefix
                .insert(prefix, id.clone())
                .map(|earlier| (earlier, id))
        })
        .unwrap();
    let prefix = &first[..4];
    let error = client.fail("session/resolve", json!({ "prefix": prefix }));
    assert_eq!(error["code"], -32602, "{error}");
    let mut candidates = error["data"]["candidates"].as_array().unwrap().clone();
    candidates.sort_by_key(|v| v.as_str().unwrap().to_owned());
    let mut expected = vec![json!(first), json!(second)];
    expected.sort_by_key(|v| v.as_str().unwrap().to_owned());
    assert_eq!(candidates, expected, "{error}");
    zeroclaw(&env.dir)
        .args(["sessions", "show", prefix])
        .assert()
        .failure()
        .stderr(
            predicate::str::contains("starts more than one session id")
                .and(predicate::str::contains(&first))
                .and(predicate::str::contains(&second)),
        );
    // Unique again with one more character (the two differ somewhere after the fourth).
    let longer = (5..=first.len())
        .map(|n| &first[..n])
        .find(|p| !second.starts_with(p))
        .unwrap();
    let resolved = client.call("session/resolve", json!({ "prefix": longer }));
    assert_eq!(resolved["sessionId"], json!(first));
    // Too short to mean one session.
    let error = client.fail("session/resolve", json!({ "prefix": &first[..3] }));
    assert_eq!(error["code"], -32602, "{error}");
    zeroclaw(&env.dir)
        .args(["sessions", "delete", &first[..3]])
        .assert()
        .failure()
        .stderr(predicate::str::contains("give at least 4 characters"));
    // A whole id is its own prefix; one that starts no id is not found.
    let whole = client.call("session/resolve", json!({ "prefix": second }));
    assert_eq!(whole["sessionId"], json!(second));
    let error = client.fail("session/resolve", json!({ "prefix": "zzzzzzzz" }));
    assert_eq!(error["code"], -32000, "{error}");
}
