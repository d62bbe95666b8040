//! Issue 37: the README's quick start, extracted from README.md and run as written against a
//! real daemon (the fake provider behind it), so a command that stops working, or one that
//! only works on some machines (`socat READLINE`), fails here first.

use crate::common::*;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use zeroclaw_testkit::{FakeProvider, openai};

/// A step of the transcript: a shell command, and the lines pasted into it (`socat`'s).
struct Step {
    command: String,
    pasted: Vec<String>,
}

/// The first ```sh block under the README's "## Try it": commands with their trailing
/// comments cut, and the lines that follow "then paste:" as the input of the one before.
fn quick_start() -> Vec<Step> {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    let section = readme.split("\n## Try it\n").nth(1).unwrap();
    let block = section
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .unwrap();
    let mut steps: Vec<Step> = Vec::new();
    for line in block.lines() {
        if line.starts_with('{') {
            steps.last_mut().unwrap().pasted.push(line.to_owned());
            continue;
        }
        let command = line.split("  #").next().unwrap().trim().to_owned();
        steps.push(Step {
            command,
            pasted: Vec::new(),
        });
    }
    steps
}

/// `sh -c COMMAND` with `zeroclaw` on the PATH and this test's config dir.
fn shell(dir: &TestDir, work: &Path, step: &Step) -> Output {
    let bin_dir = Path::new(bin()).parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap());
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(&step.command)
        .current_dir(work)
        .env("PATH", path)
        .env("ZEROCLAW_CONFIG_DIR", dir.config_dir())
        .env_remove("ZEROCLAW_SOCKET")
        .env_remove("ZEROCLAW_DATA_DIR")
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input = step
        .pasted
        .iter()
        .map(|l| format!("{l}\n"))
        .collect::<String>();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn readme_quick_start_runs_as_written() {
    if !Command::new("socat")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        assert!(
            std::env::var_os("CI").is_none(),
            "socat is missing under CI"
        );
        eprintln!("SKIPPED: no socat");
        return;
    }
    let fake = FakeProvider::start_blocking().unwrap();
    fake.push(openai::text(&["A README and a Cargo.toml."]));
    let dir = TestDir::new();
    dir.write_config(&provider_config(&fake.base_url(), "", ""));
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();

    let steps = quick_start();
    let commands: Vec<&str> = steps.iter().map(|s| s.command.as_str()).collect();
    assert_eq!(
        commands,
        [
            "cargo install --path apps/zeroclaw",
            "zeroclaw prompt \"what is in this directory?\"",
            "zeroclaw daemon &",
            "zeroclaw status",
            "zeroclaw sessions",
            "socat - UNIX-CONNECT:$(zeroclaw endpoint)",
            "zeroclaw stop",
        ],
        "the README's quick start changed: change this test with it"
    );
    let mut daemon = None;
    for step in &steps {
        let command = step.command.as_str();
        if command.starts_with("cargo install") {
            // The test's own build of `zeroclaw` is first on the PATH instead.
            continue;
        }
        if command == "zeroclaw daemon &" {
            // The prompt's ephemeral daemon leaves a second after it; a person takes that
            // second to type the next line. The test waits for it to let its data dir go.
            let paths = zeroclaw_ipc::resolve(Some(&dir.config_dir())).unwrap();
            zeroclaw_ipc::wait_data_dir_free(&paths).unwrap();
            daemon = Some(dir.start(&[]));
            continue;
        }
        let out = shell(&dir, &work, step);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{command}:\n{stdout}\n{stderr}");
        let expected = match command.split_whitespace().nth(1).unwrap_or("") {
            "prompt" => "A README and a Cargo.toml.",
            "status" => "zeroclaw daemon",
            // The title is the prompt, cut to the column.
            "sessions" => "what is in this directo",
            "-" => "\"protocolVersion\":1",
            "stop" => "stopped",
            other => panic!("no expectation for {other:?}"),
        };
        assert!(stdout.contains(expected), "{command}:\n{stdout}\n{stderr}");
        if command.starts_with("socat") {
            // Both pasted requests answered, in order.
            let ids: Vec<serde_json::Value> = stdout
                .lines()
                .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["id"].clone())
                .collect();
            assert_eq!(ids, [1, 2], "{stdout}");
        }
    }
    assert!(daemon.unwrap().wait_exit().success());
}
