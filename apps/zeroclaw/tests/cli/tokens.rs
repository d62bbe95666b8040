//! Issue 37: one rule for token names, the same for `token create` and `token revoke` and
//! as the help states it; `token list` aligned, and `--json`.

use super::zeroclaw;
use crate::common::*;
use predicates::prelude::*;
use serde_json::Value;

const RULE: &str = "1 to 64 letters, digits, '-', '_', '.', ':' or '+'";

#[test]
fn create_and_revoke_follow_the_one_rule_the_help_states() {
    let env = Env::new("", "");
    let help = zeroclaw(&env.dir)
        .args(["token", "create", "--help"])
        .assert()
        .success();
    assert!(String::from_utf8_lossy(&help.get_output().stdout).contains(RULE));
    // Every character the rule allows, in one name: created, then revoked by it.
    let name = "ci:nightly+v1.2_x-y";
    zeroclaw(&env.dir)
        .args(["token", "create", name])
        .assert()
        .success();
    zeroclaw(&env.dir)
        .args(["token", "revoke", name])
        .assert()
        .success()
        .stdout(predicate::str::contains("revoked"));
    // A name outside the rule: both refuse it in the same words (revoke used to answer
    // "no token named …" for any string).
    for command in ["create", "revoke"] {
        zeroclaw(&env.dir)
            .args(["token", command, "has space"])
            .assert()
            .failure()
            .stderr(predicate::str::contains(format!(
                "a token name is {RULE}; got \"has space\""
            )));
    }
    let too_long = "n".repeat(65);
    zeroclaw(&env.dir)
        .args(["token", "revoke", &too_long])
        .assert()
        .failure()
        .stderr(predicate::str::contains(RULE));
}

#[test]
fn token_list_is_an_aligned_table_and_json() {
    let env = Env::new("", "");
    let long = "a-rather-long-token-name-for-the-nightly-build-machine-42";
    for (name, scope) in [("ci", "read"), (long, "admin")] {
        zeroclaw(&env.dir)
            .args(["token", "create", name, "--scope", scope])
            .assert()
            .success();
    }
    let out = zeroclaw(&env.dir)
        .args(["token", "list"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    // Each column starts at the same place on every line.
    let scope_at = lines[0].find("SCOPE").unwrap();
    let created_at = lines[0].find("CREATED").unwrap();
    for line in &lines[1..] {
        let scope = &line[scope_at..];
        assert!(
            scope.starts_with("read ") || scope.starts_with("admin "),
            "{text}"
        );
        assert!(line[created_at..].starts_with("20"), "{text}");
    }
    let out = zeroclaw(&env.dir)
        .args(["token", "list", "--json"])
        .assert()
        .success();
    let json: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let names: Vec<&str> = json["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"ci") && names.contains(&long), "{json}");
}
