//! Issue 37: each command's help lists the options it honours, and only those; the hints of
//! the commands name commands (`zeroclaw sessions`), not RPC methods.

use super::zeroclaw;
use crate::common::*;
use predicates::prelude::*;

fn help(dir: &TestDir, command: &str) -> String {
    let out = zeroclaw(dir).args([command, "--help"]).assert().success();
    String::from_utf8_lossy(&out.get_output().stdout).into_owned()
}

#[test]
fn remote_options_are_listed_only_by_the_commands_that_use_them() {
    let dir = TestDir::new();
    for local in ["daemon", "store", "token", "dashboard", "endpoint", "acp"] {
        let text = help(&dir, local);
        for option in ["--url", "--token-env", "--ca-cert"] {
            assert!(
                !text.contains(option),
                "`{local} --help` lists {option}:\n{text}"
            );
        }
    }
    for client in ["status", "prompt", "sessions", "call", "stop"] {
        let text = help(&dir, client);
        for option in ["--url", "--token-env", "--ca-cert"] {
            assert!(
                text.contains(option),
                "`{client} --help` lacks {option}:\n{text}"
            );
        }
    }
    // Before the command, they are refused by a command that would ignore them.
    zeroclaw(&dir)
        .args(["--url", "wss://example.invalid:42617", "daemon"])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "`zeroclaw daemon` does not use --url",
        ));
}

#[test]
fn a_taken_gateway_port_names_the_flag_when_the_address_came_from_it() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let dir = TestDir::new();
    let daemon = dir.start(&["--gateway", &addr]);
    let log = daemon.wait_for_log("the gateway is not serving");
    assert!(log.contains("the address came from --gateway"), "{log}");
    assert!(!log.contains("gateway.listen"), "{log}");
    drop(daemon);

    let dir = TestDir::new();
    dir.write_config(&format!("[gateway]\nlisten = {addr:?}\n"));
    let daemon = dir.start(&[]);
    let log = daemon.wait_for_log("the gateway is not serving");
    assert!(
        log.contains("change gateway.listen in config.toml"),
        "{log}"
    );
}
