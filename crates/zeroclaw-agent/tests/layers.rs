//! The agent's layers, checked: a module may use only the modules below it, no two files
//! import each other, and the agent depends on no door: neither on a crate of ours that
//! serves or connects (`zeroclaw-rpc`, `-ipc`, `-gateway`, `-client`) nor on an HTTP or
//! WebSocket server. Also the workspace's graph, which shows the architecture.
//!
//! `cargo test -p zeroclaw-agent --test layers` shows the graph it checked on failure.

#![allow(clippy::expect_used, clippy::unwrap_used)]

#[path = "common/modules.rs"]
// Reading a crate from its root (`target_files`) serves the daemon's workspace-wide check.
#[allow(dead_code)]
mod modules;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Top to bottom. A module may use a module of a higher rank number only.
const LAYERS: &[&[&str]] = &[
    &["lib"],
    &["turn"],
    &["state"],
    &["session"],
    &["history"],
    &["provider", "mcp", "checkpoints"],
    &["tools", "store"],
    // A prompt as the agent takes it (text and images): data, used by the provider, the
    // store and the turn.
    &["config", "link", "prompt"],
    // Below `config`, which holds its `[hooks]` (`project/hooks.rs`).
    &["project"],
    &["sandbox"],
    // Windows job objects, for `bash` calls and hooks alike.
    &["process_tree"],
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn every_module_uses_only_the_layers_below_it() {
    let (wrong, graph) = modules::check_ranks(&src(), LAYERS);
    assert!(
        wrong.is_empty(),
        "{}\n\nthe graph: {graph:#?}",
        wrong.join("\n")
    );
}

#[test]
fn no_files_import_each_other() {
    let graph = modules::file_graph(&src());
    let found = modules::circles(&graph);
    let edges: BTreeMap<String, Vec<String>> = graph
        .iter()
        .map(|(file, used)| {
            (
                modules::name(file),
                used.iter().map(|u| modules::name(u)).collect(),
            )
        })
        .collect();
    assert!(
        found.is_empty(),
        "import circles between files: {found:?}\n\nthe graph: {edges:#?}"
    );
}

/// The checks of the crate graph, through `cargo`. They run on Unix only: the graph is the same
/// whichever platform builds it, and under Wine (scripts/windows-tests.sh) the host's `cargo` is
/// a Linux program a Windows process cannot start.
#[cfg(unix)]
mod graph {
    use super::*;
    use std::collections::BTreeSet;
    use std::process::Command;

    /// The crates that make a door: ours that serve or connect, and the servers.
    const DOORS: &[&str] = &[
        "zeroclaw-rpc",
        "zeroclaw-ipc",
        "zeroclaw-gateway",
        "zeroclaw-client",
        "axum",
        "tokio-tungstenite",
    ];

    /// Crates the agent reaches only as the HTTP client of `reqwest` (its providers' and MCP
    /// servers' HTTP): they must never come any other way.
    const CLIENT_ONLY: &[&str] = &["hyper", "hyper-util"];

    /// `cargo` in the workspace's directory.
    fn cargo(args: &[&str]) -> String {
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let out = Command::new(env!("CARGO"))
            .args(args)
            .current_dir(&workspace)
            .output()
            .expect("run cargo");
        assert!(
            out.status.success(),
            "cargo {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("cargo's output is UTF-8")
    }

    #[test]
    fn the_agent_depends_on_no_door_even_through_another_crate() {
        // What building the agent compiles (its normal dependencies, for this platform), each
        // line `<depth><name> v<version> …`, depth first.
        let tree = cargo(&[
            "tree",
            "-p",
            "zeroclaw-agent",
            "-e",
            "normal",
            "--prefix",
            "depth",
            "--format",
            "{p}",
        ]);
        let mut chain: Vec<String> = Vec::new();
        let mut wrong = Vec::new();
        for line in tree.lines() {
            let digits = line.chars().take_while(char::is_ascii_digit).count();
            let Ok(depth) = line[..digits].parse::<usize>() else {
                continue;
            };
            let name = line[digits..]
                .split(' ')
                .next()
                .unwrap_or_default()
                .to_owned();
            chain.truncate(depth);
            chain.push(name.clone());
            let through_reqwest = chain[..depth].iter().any(|c| c == "reqwest");
            if DOORS.contains(&name.as_str())
                || (CLIENT_ONLY.contains(&name.as_str()) && !through_reqwest)
            {
                wrong.push(chain.join(" → "));
            }
        }
        assert!(
            chain.first().is_some_and(|root| root == "zeroclaw-agent"),
            "unexpected `cargo tree` output:\n{tree}"
        );
        assert!(
            wrong.is_empty(),
            "the agent reaches a door:\n{}",
            wrong.join("\n")
        );
    }

    /// Who may depend on whom among the workspace's libraries (normal dependencies): the
    /// protocol at the bottom, JSON-RPC over it, local IPC over that; the agent on the
    /// protocol alone (and, when it uses them, the sandbox and checkpoints); the daemon
    /// composing the agent with its doors; the gateway over the protocol, JSON-RPC and the
    /// client. The apps stand above, and no library depends on one.
    const GRAPH: &[(&str, &[&str])] = &[
        ("zeroclaw-protocol", &[]),
        ("zeroclaw-rpc", &["zeroclaw-protocol"]),
        ("zeroclaw-ipc", &["zeroclaw-rpc"]),
        (
            "zeroclaw-agent",
            &[
                "zeroclaw-protocol",
                "zeroclaw-sandbox",
                "zeroclaw-checkpoint",
            ],
        ),
        (
            "zeroclaw-daemon",
            &[
                "zeroclaw-agent",
                "zeroclaw-protocol",
                "zeroclaw-rpc",
                "zeroclaw-ipc",
                "zeroclaw-gateway",
            ],
        ),
        (
            "zeroclaw-gateway",
            &["zeroclaw-protocol", "zeroclaw-rpc", "zeroclaw-client"],
        ),
        (
            "zeroclaw-client",
            &["zeroclaw-protocol", "zeroclaw-rpc", "zeroclaw-ipc"],
        ),
        ("zeroclaw-sandbox", &[]),
        ("zeroclaw-checkpoint", &[]),
        ("zeroclaw-testkit", &[]),
    ];

    const APPS: &[&str] = &["zeroclaw", "zerocode", "zeroclaw-bench"];

    #[test]
    fn the_workspace_graph_is_the_architecture() {
        let metadata: serde_json::Value =
            serde_json::from_str(&cargo(&["metadata", "--no-deps", "--format-version", "1"]))
                .expect("cargo metadata is JSON");
        let packages = metadata["packages"].as_array().expect("packages");
        let ours: BTreeSet<&str> = packages.iter().filter_map(|p| p["name"].as_str()).collect();
        let mut wrong = Vec::new();
        for package in packages {
            let name = package["name"].as_str().expect("name");
            let uses: BTreeSet<&str> = package["dependencies"]
                .as_array()
                .expect("dependencies")
                .iter()
                .filter(|d| d["kind"].is_null())
                .filter_map(|d| d["name"].as_str())
                .filter(|d| ours.contains(d))
                .collect();
            if APPS.contains(&name) {
                continue;
            }
            let Some((_, allowed)) = GRAPH.iter().find(|(crate_name, _)| *crate_name == name)
            else {
                wrong.push(format!("{name} is not in GRAPH: give it its place"));
                continue;
            };
            for used in uses {
                if !allowed.contains(&used) {
                    wrong.push(format!("{name} depends on {used}"));
                }
            }
        }
        for (name, _) in GRAPH {
            if !ours.contains(name) {
                wrong.push(format!("GRAPH names {name}, which is not in the workspace"));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
