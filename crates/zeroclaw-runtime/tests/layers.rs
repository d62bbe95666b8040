//! The runtime's layers, checked: a module may use only the modules below it, so data
//! flows one way and there is no import cycle. Reads the sources' `crate::` paths.
//!
//! `cargo test -p zeroclaw-runtime --test layers` shows the graph it checked on failure.

#![allow(clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;

/// Top to bottom. A module may use a module of a higher rank number only.
const LAYERS: &[&[&str]] = &[
    &["lib", "testing"],
    &["daemon", "maintenance"],
    &["methods"],
    &["unattended"],
    &["connection"],
    &["turn"],
    &["state"],
    &["session"],
    &["history"],
    &["provider", "mcp", "auth", "runs"],
    &["tools", "store"],
    &["config", "clients"],
];

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

/// Every `crate::name` a file mentions.
fn uses(source: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = source;
    while let Some(at) = rest.find("crate::") {
        let name: String = rest[at + 7..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
            found.push(name);
        }
        rest = &rest[at + 7..];
    }
    found
}

fn modules(dir: &Path, top: Option<&str>, out: &mut BTreeMap<String, Vec<String>>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("dir entry").path();
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_owned();
        let module = top.map(str::to_owned).unwrap_or(stem.clone());
        if path.is_dir() {
            modules(&path, Some(&module), out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let source = std::fs::read_to_string(&path).expect("read source");
            let used = out.entry(module).or_default();
            used.extend(uses(&source));
        }
    }
}

#[test]
fn every_module_uses_only_the_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph = BTreeMap::new();
    modules(&src, None, &mut graph);
    let names: Vec<String> = graph.keys().cloned().collect();
    let mut wrong = Vec::new();
    for (module, used) in &mut graph {
        // Items at the crate root (`crate::run`) are not modules.
        used.retain(|name| names.contains(name));
        used.sort();
        used.dedup();
        let Some(own) = rank(module) else {
            wrong.push(format!("`{module}` is in no layer: add it to LAYERS"));
            continue;
        };
        for name in used.iter() {
            match rank(name) {
                Some(r) if r > own || name == module => {}
                Some(_) => wrong.push(format!(
                    "`{module}` uses `{name}`, a layer above or beside it"
                )),
                None => wrong.push(format!("`{name}` (used by `{module}`) is in no layer")),
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{}\n\nthe graph: {graph:#?}",
        wrong.join("\n")
    );
}
