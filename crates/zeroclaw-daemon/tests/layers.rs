//! The daemon's layers, checked: a module may use only the modules below it, and no two
//! files import each other. (The agent below it, and the workspace's graph, are checked by
//! `zeroclaw-agent`'s `tests/layers.rs`, whose reading of the sources this shares.)
//!
//! `cargo test -p zeroclaw-daemon --test layers` shows the graph it checked on failure.

#![allow(clippy::expect_used, clippy::unwrap_used)]

// Its own rank check reads top-level modules only; this one reads sub-modules too.
#[path = "../../zeroclaw-agent/tests/common/modules.rs"]
#[allow(dead_code)]
mod modules;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top to bottom. A module may use only the modules of the layers below its own. A module
/// is one of the crate's top-level modules, or one inside it written as a path
/// (`unattended/rules`): a file belongs to the longest of them its own path starts with.
const LAYERS: &[&[&str]] = &[
    &["lib", "testing"],
    &["daemon", "maintenance"],
    &["methods"],
    &["unattended"],
    &["connection"],
    &["state"],
    // Unattended work's parts that run nothing: the state holds its queues.
    &["link", "auth", "unattended/rules"],
    &["config", "clients"],
    // Activation, notifications and metrics: plain parts the state holds and `daemon` drives.
    &["service"],
    &["toml_errors"],
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The module of LAYERS that `path` (a file's, or a module's) belongs to, and its rank.
fn layer_of(path: &[String]) -> Option<(&'static str, usize)> {
    if path.is_empty() {
        return Some(("lib", 0));
    }
    LAYERS
        .iter()
        .enumerate()
        .flat_map(|(rank, layer)| layer.iter().map(move |module| (*module, rank)))
        .filter(|(module, _)| {
            let parts: Vec<&str> = module.split('/').collect();
            parts.len() <= path.len() && parts.iter().zip(path).all(|(a, b)| a == b)
        })
        .max_by_key(|(module, _)| module.split('/').count())
}

/// Every `crate::a::b…` path a text mentions, as its segments up to the first that is
/// not a plain lowercase name (`crate::unattended::{…}` gives `["unattended"]`).
fn crate_paths(text: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        let mut segments = Vec::new();
        let mut tail = rest;
        loop {
            let name: String = tail
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
                break;
            }
            tail = &tail[name.len()..];
            segments.push(name);
            match tail.strip_prefix("::") {
                Some(after) => tail = after,
                None => break,
            }
        }
        if !segments.is_empty() {
            found.push(segments);
        }
    }
    found
}

/// The longest module path of the crate that `segments` starts with; `None` when its first
/// segment is no module (`crate::run`, an item at the root).
fn module_named(
    files: &BTreeMap<modules::ModPath, String>,
    segments: &[String],
) -> Option<Vec<String>> {
    (1..=segments.len())
        .rev()
        .map(|n| segments[..n].to_vec())
        .find(|path| files.contains_key(path))
}

#[test]
fn every_module_uses_only_the_layers_below_it() {
    let files = modules::files(&src());
    let imports = modules::file_graph(&src());
    let mut wrong = BTreeSet::new();
    let mut graph: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (path, text) in &files {
        let Some((own, rank)) = layer_of(path) else {
            wrong.insert(format!(
                "`{}` is in no layer: add it to LAYERS",
                modules::name(path)
            ));
            continue;
        };
        // What it names (`crate::…` anywhere in the file, tests and comments included),
        // and what it imports (`super::…` too).
        let named = crate_paths(text)
            .into_iter()
            .filter_map(|segments| module_named(&files, &segments));
        let imported = imports.get(path).into_iter().flatten().cloned();
        for used in named.chain(imported) {
            let Some((other, other_rank)) = layer_of(&used) else {
                wrong.insert(format!(
                    "`{}` (used by `{own}`) is in no layer",
                    modules::name(&used)
                ));
                continue;
            };
            if other == own {
                continue;
            }
            graph.entry(own).or_default().insert(other);
            if other_rank <= rank {
                wrong.insert(format!(
                    "`{own}` uses `{other}`, a layer above or beside it"
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{}\n\nthe graph: {graph:#?}",
        wrong.into_iter().collect::<Vec<_>>().join("\n")
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

/// The crate roots of a package: `src/lib.rs`, `src/main.rs`, and each `src/bin/` program.
fn targets(package: &Path) -> Vec<PathBuf> {
    let src = package.join("src");
    let mut roots: Vec<PathBuf> = ["lib.rs", "main.rs"]
        .iter()
        .map(|f| src.join(f))
        .filter(|p| p.is_file())
        .collect();
    if let Ok(bins) = std::fs::read_dir(src.join("bin")) {
        let mut bins: Vec<PathBuf> = bins
            .map(|e| e.expect("dir entry").path())
            .map(|p| if p.is_dir() { p.join("main.rs") } else { p })
            .filter(|p| p.extension().is_some_and(|e| e == "rs"))
            .collect();
        bins.sort();
        roots.extend(bins);
    }
    roots
}

/// Each circle of the crate rooted at `root`, written `a ↔ b ↔ c`.
fn circles_of(root: &Path) -> Vec<String> {
    circles_with_edges(root)
        .into_iter()
        .map(|(c, _)| c)
        .collect()
}

/// Each circle of the crate rooted at `root`, with the imports that make it (`a → b`).
fn circles_with_edges(root: &Path) -> Vec<(String, Vec<String>)> {
    let graph = modules::graph_of(&modules::target_files(root));
    let circles = modules::circles(&graph);
    circles
        .into_iter()
        .map(|circle| {
            let edges = graph
                .iter()
                .filter(|(file, _)| circle.contains(&modules::name(file)))
                .flat_map(|(file, used)| {
                    used.iter()
                        .filter(|u| circle.contains(&modules::name(u)))
                        .map(|u| format!("{} → {}", modules::name(file), modules::name(u)))
                })
                .collect();
            (circle.join(" ↔ "), edges)
        })
        .collect()
}

// The daemon's layers are checked above; every crate of the workspace (its library and
// its programs) is read here, so that a circle cannot start in a crate nobody checks.
#[test]
fn every_crate_of_the_workspace_is_free_of_import_circles() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut found = Vec::new();
    let mut read = 0;
    for group in ["crates", "apps"] {
        let mut packages: Vec<PathBuf> = std::fs::read_dir(workspace.join(group))
            .expect("read the workspace")
            .map(|e| e.expect("dir entry").path())
            .filter(|p| p.join("Cargo.toml").is_file())
            .collect();
        packages.sort();
        for package in packages {
            for root in targets(&package) {
                read += 1;
                let at = root
                    .strip_prefix(&workspace)
                    .unwrap_or(&root)
                    .display()
                    .to_string();
                found.extend(
                    circles_with_edges(&root)
                        .into_iter()
                        .map(|(c, edges)| format!("{at}: {c}\n    {}", edges.join("\n    "))),
                );
            }
        }
    }
    // The agent, the daemon and the apps at least: an empty reading proves nothing.
    assert!(
        read >= 13,
        "only {read} crates read under {}",
        workspace.display()
    );
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

// The reading above finds a circle where there is one (and only there).
#[test]
fn a_circle_between_two_files_is_found_and_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("peer")).expect("mkdir");
    let write = |path: &str, text: &str| std::fs::write(src.join(path), text).expect("write");
    write(
        "lib.rs",
        "mod peer;\nmod shared;\n#[cfg(test)]\nmod tests;\n",
    );
    write(
        "peer/mod.rs",
        "pub(crate) mod inbound;\nmod handle;\npub use handle::Handle;\n",
    );
    write(
        "peer/inbound.rs",
        "use super::Handle;\npub type Queue = u8;\n",
    );
    write(
        "peer/handle.rs",
        "use crate::peer::inbound::Queue;\npub struct Handle;\n",
    );
    write("shared.rs", "use crate::peer::Handle;\n");
    // A test file reaching back is a test's business, not the crate's shape.
    write("tests.rs", "use crate::shared;\n");
    assert_eq!(
        circles_of(&src.join("lib.rs")),
        vec!["peer/handle ↔ peer/inbound".to_owned()]
    );
    write("peer/inbound.rs", "pub type Queue = u8;\n");
    assert_eq!(circles_of(&src.join("lib.rs")), Vec::<String>::new());
}
