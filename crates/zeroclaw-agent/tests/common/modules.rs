//! A crate's modules and which use which, read from its sources, for the layer checks of
//! the agent and the daemon (each includes this file).
//!
//! Two rules:
//! - Ranks: the crate's top-level modules in layers, top to bottom; a module may name
//!   (`crate::x`, anywhere in its files, tests and comments included) only modules of a
//!   layer below its own.
//! - Circles: no two files reach each other through their imports. A file's imports are
//!   the `crate::`, `super::` and `self::` paths of its code (tests and comments left
//!   out), each resolved to the file that holds the item, through the `pub use` of a
//!   module's `mod.rs`. What a `mod.rs` (or `lib.rs`) uses of the files inside its own
//!   directory is not counted: it is their face, declaring, re-exporting and composing
//!   them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A module's path in the crate: `["provider", "wire"]`; the root is `[]`.
pub type ModPath = Vec<String>;

pub fn name(path: &[String]) -> String {
    if path.is_empty() {
        "lib".into()
    } else {
        path.join("/")
    }
}

/// The `.rs` files under `src`: their module path and their text.
pub fn files(src: &Path) -> BTreeMap<ModPath, String> {
    let mut out = BTreeMap::new();
    walk(src, &mut Vec::new(), &mut out);
    out
}

fn walk(dir: &Path, at: &mut Vec<String>, out: &mut BTreeMap<ModPath, String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_owned();
        if path.is_dir() {
            at.push(stem);
            walk(&path, at, out);
            at.pop();
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("read source");
            let mut module = at.clone();
            if !(stem == "mod" || (stem == "lib" && at.is_empty())) {
                module.push(stem);
            }
            out.insert(module, text);
        }
    }
}

/// Checks the ranks of the top-level modules; what is wrong, and the graph it read.
pub fn check_ranks(src: &Path, layers: &[&[&str]]) -> (Vec<String>, BTreeMap<String, Vec<String>>) {
    let rank = |module: &str| layers.iter().position(|layer| layer.contains(&module));
    let mut graph: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (path, text) in files(src) {
        let top = path.first().cloned().unwrap_or_else(|| "lib".into());
        graph
            .entry(top)
            .or_default()
            .extend(crate_names(text.as_str()));
    }
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
    (wrong, graph)
}

/// Every `crate::name` a text mentions.
fn crate_names(source: &str) -> Vec<String> {
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

/// The `.rs` files of the crate whose root file is `root` (`src/lib.rs`, `src/main.rs`,
/// `src/bin/x.rs`), found as the compiler finds them: by following its `mod x;`
/// declarations (those under `#[cfg(test)]` left out, being tests), as `files` gives them.
pub fn target_files(root: &Path) -> BTreeMap<ModPath, String> {
    let mut out = BTreeMap::new();
    // A crate root's `mod x;` is looked up beside it, like a `mod.rs`'s.
    let dir = root.parent().unwrap_or(Path::new("."));
    declared(root, dir, &mut Vec::new(), &mut out);
    out
}

fn declared(file: &Path, dir: &Path, at: &mut Vec<String>, out: &mut BTreeMap<ModPath, String>) {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let code = blank_comments_and_strings(&text);
    for (offset, name) in mod_declarations(&code) {
        let is_test = attributes_before(&code[..offset])
            .iter()
            .any(|a| *a == "#[cfg(test)]" || a.starts_with("#[cfg(all(test"));
        if is_test {
            continue;
        }
        let flat = dir.join(format!("{name}.rs"));
        let child = if flat.is_file() {
            flat
        } else {
            dir.join(&name).join("mod.rs")
        };
        at.push(name.clone());
        declared(&child, &dir.join(&name), at, out);
        at.pop();
    }
    out.insert(at.clone(), text);
}

/// Each `mod x;` of the code (not `mod x { … }`): where its visibility or `mod` starts,
/// and the name.
fn mod_declarations(code: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("mod ").map(|a| from + a) {
        from = at + 4;
        if at > 0 && code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = code[from..].trim_start();
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() || !rest[name.len()..].trim_start().starts_with(';') {
            continue;
        }
        // The visibility before it (`pub`, `pub(crate)`) belongs to the declaration.
        let head = code[..at].trim_end();
        let head = match head.strip_suffix(')') {
            Some(inner) => inner.rfind("pub").map_or(head, |p| &head[..p]),
            None => head.strip_suffix("pub").unwrap_or(head),
        };
        found.push((head.len(), name));
    }
    found
}

/// The attributes (`#[…]`) written right before the end of `code`, last first.
fn attributes_before(code: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = code.trim_end();
    while rest.ends_with(']') {
        let Some(open) = rest.rfind("#[") else { break };
        found.push(&rest[open..]);
        rest = rest[..open].trim_end();
    }
    found
}

/// The import graph between files: for each file, the files it uses.
pub fn file_graph(src: &Path) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
    graph_of(&files(src))
}

/// The import graph between the files of `files` (as `files` or `target_files` give them).
pub fn graph_of(files: &BTreeMap<ModPath, String>) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
    let code: BTreeMap<ModPath, String> = files
        .iter()
        .map(|(path, text)| {
            (
                path.clone(),
                without_tests(&blank_comments_and_strings(text)),
            )
        })
        .collect();
    let exports = reexports(files, &code);
    let mut graph = BTreeMap::new();
    for (module, text) in &code {
        let is_face = files
            .keys()
            .any(|f| f.len() > module.len() && f.starts_with(module));
        let mut used = BTreeSet::new();
        for (base, segments) in prefixed_paths(text, module) {
            let target = resolve(files, &exports, base, &segments);
            let inside_own_dir =
                is_face && target.len() > module.len() && target.starts_with(module);
            if &target != module && !inside_own_dir {
                used.insert(target);
            }
        }
        graph.insert(module.clone(), used);
    }
    graph
}

/// The circles of the graph (its strongly connected components of more than one file),
/// each as its sorted file names.
pub fn circles(graph: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Vec<Vec<String>> {
    struct Tarjan<'a> {
        graph: &'a BTreeMap<ModPath, BTreeSet<ModPath>>,
        index: BTreeMap<&'a ModPath, usize>,
        low: BTreeMap<&'a ModPath, usize>,
        stack: Vec<&'a ModPath>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, v: &'a ModPath) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            for w in self.graph.get(v).into_iter().flatten() {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.stack.contains(&w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    component.push(name(w));
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut tarjan = Tarjan {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !tarjan.index.contains_key(v) {
            tarjan.visit(v);
        }
    }
    tarjan.found.sort();
    tarjan.found
}

/// The text with comments and the contents of string and character literals blanked, so
/// neither a path in a comment nor a brace in a string counts.
fn blank_comments_and_strings(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if let Some(open) = raw_string_start(&chars, i) {
            // A raw string: r"…", r#"…"#, br#"…"#.
            let mut j = open;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            j += 1;
            loop {
                match chars.get(j) {
                    None => break,
                    Some('"') if (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) => {
                        j += 1 + hashes;
                        break;
                    }
                    _ => j += 1,
                }
            }
            out.push_str("\"\"");
            i = j;
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{1F980}'); otherwise a lifetime.
            if next == Some('\\') {
                let mut j = i + 3;
                while j < chars.len() && chars[j] != '\'' {
                    j += 1;
                }
                i = j + 1;
                out.push_str("' '");
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
                out.push_str("' '");
            } else {
                out.push(c);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident_before(chars: &[char], i: usize) -> bool {
    i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')
}

/// Where the hashes (or the quote) of a raw string starting at `i` begin, if one does.
fn raw_string_start(chars: &[char], i: usize) -> Option<usize> {
    if ident_before(chars, i) {
        return None;
    }
    let r = match chars[i] {
        'r' => i,
        'b' if chars.get(i + 1) == Some(&'r') => i + 1,
        _ => return None,
    };
    let mut j = r + 1;
    while chars.get(j) == Some(&'#') {
        j += 1;
    }
    (chars.get(j) == Some(&'"')).then_some(r + 1)
}

/// The code without its `#[cfg(test)]` modules (`#[cfg(all(test, …))]` too).
fn without_tests(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(") {
        let attr_end = rest[at..].find(']').map_or(rest.len(), |e| at + e + 1);
        let attr = &rest[at..attr_end];
        let is_test = attr == "#[cfg(test)]" || attr.starts_with("#[cfg(all(test");
        let after = rest[attr_end..].trim_start();
        let item = after.strip_prefix("pub ").unwrap_or(after).trim_start();
        let body = item
            .strip_prefix("mod ")
            .and_then(|m| m.find(['{', ';']).map(|e| (m, e)))
            .filter(|(m, e)| m.as_bytes()[*e] == b'{');
        match body {
            Some((m, open)) if is_test => {
                out.push_str(&rest[..at]);
                let start = rest.len() - m[open..].len();
                let mut depth = 0usize;
                let mut end = rest.len();
                for (k, ch) in rest[start..].char_indices() {
                    match ch {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = start + k + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                rest = &rest[end..];
            }
            _ => {
                out.push_str(&rest[..attr_end]);
                rest = &rest[attr_end..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Every path of `code` that starts at `crate`, `super` or `self`, as (the module it
/// starts from, its segments), with `use` groups (`a::{b, c::d}`) expanded.
fn prefixed_paths(code: &str, module: &ModPath) -> Vec<(ModPath, Vec<String>)> {
    let tokens = tokenize(code);
    let mut out = Vec::new();
    for i in 0..tokens.len() {
        let head = tokens[i].as_str();
        if !matches!(head, "crate" | "super" | "self")
            || tokens.get(i + 1).map(String::as_str) != Some("::")
            || (i > 0 && tokens[i - 1] == "::")
        {
            continue;
        }
        let base: ModPath = match head {
            "crate" => Vec::new(),
            "super" => module[..module.len().saturating_sub(1)].to_vec(),
            _ => module.clone(),
        };
        let mut at = i + 2;
        for segments in tree(&tokens, &mut at) {
            let mut base = base.clone();
            let mut segments = segments.as_slice();
            while let Some((first, rest)) = segments.split_first() {
                if first != "super" {
                    break;
                }
                base.pop();
                segments = rest;
            }
            out.push((base, segments.to_vec()));
        }
    }
    out
}

/// Identifiers, `::`, and single punctuation characters.
fn tokenize(code: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_alphanumeric() || c == '_' {
            let mut word = String::from(c);
            while let Some(&n) = chars.peek() {
                if n.is_alphanumeric() || n == '_' {
                    word.push(n);
                    chars.next();
                } else {
                    break;
                }
            }
            tokens.push(word);
        } else if c == ':' && chars.peek() == Some(&':') {
            chars.next();
            tokens.push("::".into());
        } else if !c.is_whitespace() {
            tokens.push(c.to_string());
        }
    }
    tokens
}

/// A path or `use` tree starting at `tokens[*at]`, expanded to its paths (without `self`
/// inside a group, which is the group's prefix).
fn tree(tokens: &[String], at: &mut usize) -> Vec<Vec<String>> {
    let mut prefix = Vec::new();
    loop {
        match tokens.get(*at).map(String::as_str) {
            Some("{") => {
                *at += 1;
                let mut out = Vec::new();
                loop {
                    match tokens.get(*at).map(String::as_str) {
                        None => return out,
                        Some("}") => {
                            *at += 1;
                            return out;
                        }
                        Some(",") => *at += 1,
                        _ => {
                            let start = *at;
                            for inner in tree(tokens, at) {
                                let mut path = prefix.clone();
                                path.extend(inner.into_iter().filter(|s| s != "self"));
                                out.push(path);
                            }
                            if *at == start {
                                *at += 1;
                            }
                        }
                    }
                }
            }
            Some("*") => {
                *at += 1;
                return vec![prefix];
            }
            Some(word) if word.chars().all(|c| c.is_alphanumeric() || c == '_') => {
                prefix.push(word.to_owned());
                *at += 1;
                if tokens.get(*at).map(String::as_str) == Some("::") {
                    *at += 1;
                    continue;
                }
                // `as alias` names the same item.
                if tokens.get(*at).map(String::as_str) == Some("as") {
                    *at += 2;
                }
                return vec![prefix];
            }
            _ => return vec![prefix],
        }
    }
}

/// For each module, the names it re-exports (`pub use child::{A, B as C}`) and the module
/// each comes from.
fn reexports(
    files: &BTreeMap<ModPath, String>,
    code: &BTreeMap<ModPath, String>,
) -> BTreeMap<ModPath, BTreeMap<String, ModPath>> {
    let mut out: BTreeMap<ModPath, BTreeMap<String, ModPath>> = BTreeMap::new();
    for (module, text) in code {
        let tokens = tokenize(text);
        for i in 0..tokens.len() {
            if tokens[i] != "use" || i == 0 {
                continue;
            }
            let public = tokens[i - 1] == "pub"
                || (i >= 4 && tokens[i - 1] == ")" && tokens[i - 4] == "pub");
            if !public {
                continue;
            }
            let mut at = i + 1;
            let start = tokens.get(at).cloned().unwrap_or_default();
            let (base, skip) = match start.as_str() {
                "crate" => (Vec::new(), 2),
                "super" => (module[..module.len().saturating_sub(1)].to_vec(), 2),
                "self" => (module.clone(), 2),
                _ => (module.clone(), 0),
            };
            at += skip;
            // The alias, if any, is right after each leaf: read leaves with their aliases.
            let mut leaves = Vec::new();
            collect_leaves(&tokens, &mut at, &mut Vec::new(), &mut leaves);
            for (path, alias) in leaves {
                let Some((last, parent)) = path.split_last() else {
                    continue;
                };
                let from = resolve_modules(files, base.clone(), parent);
                if from == base {
                    // Its own item, or another crate's.
                    continue;
                }
                out.entry(module.clone())
                    .or_default()
                    .insert(alias.unwrap_or_else(|| last.clone()), from);
            }
        }
    }
    out
}

/// The leaves of a `use` tree with their `as` aliases.
fn collect_leaves(
    tokens: &[String],
    at: &mut usize,
    prefix: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>)>,
) {
    let depth = prefix.len();
    loop {
        match tokens.get(*at).map(String::as_str) {
            Some("{") => {
                *at += 1;
                loop {
                    match tokens.get(*at).map(String::as_str) {
                        None | Some(";") => break,
                        Some("}") => {
                            *at += 1;
                            break;
                        }
                        Some(",") => *at += 1,
                        _ => {
                            let start = *at;
                            collect_leaves(tokens, at, prefix, out);
                            if *at == start {
                                *at += 1;
                            }
                        }
                    }
                }
                break;
            }
            Some(word) if word.chars().all(|c| c.is_alphanumeric() || c == '_') => {
                prefix.push(word.to_owned());
                *at += 1;
                if tokens.get(*at).map(String::as_str) == Some("::") {
                    *at += 1;
                    continue;
                }
                let alias = (tokens.get(*at).map(String::as_str) == Some("as"))
                    .then(|| tokens.get(*at + 1).cloned())
                    .flatten();
                if alias.is_some() {
                    *at += 2;
                }
                out.push((prefix.clone(), alias));
                break;
            }
            _ => break,
        }
    }
    prefix.truncate(depth);
}

/// Follows `segments` from `base` through modules only.
fn resolve_modules(
    files: &BTreeMap<ModPath, String>,
    mut base: ModPath,
    segments: &[String],
) -> ModPath {
    for segment in segments {
        let mut next = base.clone();
        next.push(segment.clone());
        if !files.contains_key(&next) {
            break;
        }
        base = next;
    }
    base
}

/// The file that holds what `segments` names from `base`: the deepest module on the path,
/// or the module a name on the way is re-exported from.
fn resolve(
    files: &BTreeMap<ModPath, String>,
    exports: &BTreeMap<ModPath, BTreeMap<String, ModPath>>,
    mut base: ModPath,
    segments: &[String],
) -> ModPath {
    for segment in segments {
        let mut next = base.clone();
        next.push(segment.clone());
        if files.contains_key(&next) {
            base = next;
            continue;
        }
        if let Some(from) = exports.get(&base).and_then(|names| names.get(segment)) {
            return from.clone();
        }
        break;
    }
    base
}
