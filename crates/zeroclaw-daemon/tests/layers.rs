//! The daemon's layers, checked: a module may use only the modules below it, and no two
//! files import each other. (The agent below it, and the workspace's graph, are checked by
//! `zeroclaw-agent`'s `tests/layers.rs`, whose reading of the sources this shares.)
//!
//! `cargo test -p zeroclaw-daemon --test layers` shows the graph it checked on failure.

#![allow(clippy::expect_used, clippy::unwrap_used)]

#[path = "../../zeroclaw-agent/tests/common/modules.rs"]
mod modules;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Top to bottom. A module may use a module of a higher rank number only.
const LAYERS: &[&[&str]] = &[
    &["lib", "testing"],
    &["daemon", "maintenance"],
    &["methods"],
    &["unattended"],
    &["connection"],
    &["state"],
    &["link", "auth", "runs"],
    &["config", "clients"],
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
    let edges: BTreeMap<String, Vec<String>> = graph
        .iter()
        .map(|(file, used)| {
            (
                modules::name(file),
                used.iter().map(|u| modules::name(u)).collect(),
            )
        })
        .collect();
    assert_eq!(
        modules::circles(&graph),
        Vec::<Vec<String>>::new(),
        "import circles between files\n\nthe graph: {edges:#?}"
    );
}
