//! `apply_patch`: several hunks in several files, in one call, all or nothing.
//!
//! The patch is a unified diff or the `*** Begin Patch` format (`parse.rs`). Every change is
//! first worked out in memory against the files as they are now (`apply.rs`), every path
//! checked (inside the working directory, allowed by the session's sandbox): if any hunk
//! does not apply, or any path is refused, nothing is written and the error names the file
//! and the hunk. Only then are the files written, each atomically (a temporary file renamed
//! over it, as `write_file` does); should a write still fail (a full disk), the files
//! already written are put back as they were.
//!
//! The patch works on the disk, never on an editor's buffers (ACP's `fs/*`): a patch is
//! whole files' worth of change that an editor's unsaved buffer would contradict.

mod apply;
mod parse;

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use zeroclaw_protocol::events::ApprovalPreview;

use super::confine::{Access, checked};
use super::preview::{self, PreviewAt};
use super::write_file::write_atomic;
use super::{Tool, ToolContext, ToolOutput, blocking, io_error};
use crate::config::Policy;
use parse::Change;

/// The largest file a patch reads.
const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;
/// The most files one patch changes.
const MAX_FILES: usize = 200;

pub(super) struct ApplyPatch;

/// Its name, as its messages begin.
const TOOL: &str = ApplyPatch::NAME;

#[derive(Deserialize, JsonSchema)]
pub(super) struct Args {
    /// The patch: a unified diff (`--- a/PATH`, `+++ b/PATH`, `@@ -a,b +c,d @@` hunks, as
    /// `git diff` writes it; `/dev/null` to create or delete a file) or `*** Begin Patch`,
    /// then `*** Add File: PATH`, `*** Update File: PATH` (optionally `*** Move to: PATH`)
    /// with hunks of ` `/`-`/`+` lines after `@@` lines, or `*** Delete File: PATH`, then
    /// `*** End Patch`. Paths are relative to the working directory.
    patch: String,
}

impl Tool for ApplyPatch {
    const NAME: &'static str = "apply_patch";
    const DESCRIPTION: &'static str = "Apply a patch that changes one or more files at once: several hunks per file, \
        files added, deleted or renamed. Give each hunk 3 lines of unchanged context around \
        its change, copied exactly from the file. All or nothing: every hunk is checked \
        against the files as they are first, and if one does not apply, no file is changed \
        and the error names the file and the hunk. Each file is written atomically.";
    const READ_ONLY: bool = false;
    const APPROVAL: Policy = Policy::Ask;
    type Args = Args;

    fn check(&self, args: &Args) -> Result<(), String> {
        let changes = parse::parse(&args.patch)?;
        if changes.len() > MAX_FILES {
            return Err(format!(
                "the patch changes {} files; at most {MAX_FILES} in one call",
                changes.len()
            ));
        }
        Ok(())
    }

    async fn preview(&self, args: Args, at: &PreviewAt) -> Option<ApprovalPreview> {
        let cwd = at.cwd.clone();
        preview::blocking(move || preview_patch(&cwd, &args.patch)).await
    }

    async fn run(&self, args: Args, ctx: &ToolContext) -> ToolOutput {
        let changes = match parse::parse(&args.patch) {
            Ok(changes) => changes,
            Err(why) => return ToolOutput::error(format!("invalid arguments for {TOOL}: {why}")),
        };
        // Every path the patch writes, allowed by the sandbox, before anything is read.
        for change in &changes {
            let named = std::iter::once(change.path()).chain(match change {
                Change::Update {
                    move_to: Some(to), ..
                } => Some(to.as_str()),
                _ => None,
            });
            for path in named {
                if let Err(refused) = checked(TOOL, path, ctx, Access::Write).await {
                    return refused;
                }
            }
        }
        let cwd = ctx.cwd.clone();
        blocking(TOOL, move || match plan(&cwd, &changes) {
            Ok(plan) => commit(plan),
            Err(out) => out,
        })
        .await
    }
}

/// What the patch leaves, path by path (`None`: the file is deleted), with what was there
/// before, and a line per change for the result.
struct Plan {
    files: BTreeMap<PathBuf, (Option<Vec<u8>>, Option<String>)>,
    summary: Vec<String>,
}

/// Works every change out in memory, in order (a file changed twice sees the first
/// change), without writing anything.
fn plan(cwd: &Path, changes: &[Change]) -> Result<Plan, ToolOutput> {
    let cwd = cwd
        .canonicalize()
        .map_err(|e| io_error(TOOL, cwd, "cannot use the working directory", &e))?;
    let mut files: BTreeMap<PathBuf, (Option<Vec<u8>>, Option<String>)> = BTreeMap::new();
    let mut summary = Vec::new();
    // The current text of `path`: as planned so far, else from the disk.
    fn current(
        files: &mut BTreeMap<PathBuf, (Option<Vec<u8>>, Option<String>)>,
        path: &Path,
        shown: &str,
    ) -> Result<Option<String>, ToolOutput> {
        if let Some((_, planned)) = files.get(path) {
            return Ok(planned.clone());
        }
        let original = read(path, shown)?;
        let text = match &original {
            None => None,
            Some(bytes) => Some(String::from_utf8(bytes.clone()).map_err(|_| {
                ToolOutput::error(format!(
                    "{TOOL}: {shown} is not UTF-8 text; nothing was changed"
                ))
            })?),
        };
        files.insert(path.to_path_buf(), (original, text.clone()));
        Ok(text)
    }
    for change in changes {
        let shown = change.path();
        let path = inside(&cwd, shown)?;
        match change {
            Change::Add { lines, .. } => {
                if current(&mut files, &path, shown)?.is_some() {
                    return Err(failed(shown, "it already exists (update it instead)"));
                }
                let mut text = lines.join("\n");
                if !lines.is_empty() {
                    text.push('\n');
                }
                summary.push(format!("A {shown} ({} lines)", lines.len()));
                set(&mut files, &path, Some(text));
            }
            Change::Delete { .. } => {
                if current(&mut files, &path, shown)?.is_none() {
                    return Err(failed(shown, "it does not exist, so it cannot be deleted"));
                }
                summary.push(format!("D {shown}"));
                set(&mut files, &path, None);
            }
            Change::Update { move_to, hunks, .. } => {
                let Some(text) = current(&mut files, &path, shown)? else {
                    return Err(failed(shown, "it does not exist (add it instead)"));
                };
                let new = apply::apply(&text, hunks).map_err(|(hunk, why)| {
                    failed(
                        shown,
                        &format!("hunk {hunk} of {} does not apply: {why}", hunks.len()),
                    )
                })?;
                let (added, removed) = hunks.iter().fold((0, 0), |(a, r), h| {
                    let (plus, minus) = counts(h);
                    (a + plus, r + minus)
                });
                match move_to {
                    Some(to) => {
                        let target = inside(&cwd, to)?;
                        if target != path && current(&mut files, &target, to)?.is_some() {
                            return Err(failed(
                                shown,
                                &format!("it cannot be moved to {to}, which already exists"),
                            ));
                        }
                        set(&mut files, &path, None);
                        set(&mut files, &target, Some(new));
                        summary.push(format!("R {shown} -> {to} (+{added} -{removed})"));
                    }
                    None => {
                        set(&mut files, &path, Some(new));
                        summary.push(format!("M {shown} (+{added} -{removed})"));
                    }
                }
            }
        }
    }
    Ok(Plan { files, summary })
}

fn set(
    files: &mut BTreeMap<PathBuf, (Option<Vec<u8>>, Option<String>)>,
    path: &Path,
    text: Option<String>,
) {
    if let Some(entry) = files.get_mut(path) {
        entry.1 = text;
    }
}

/// A hunk's added and removed lines: what is left of each side once the lines they share
/// at their start and end (the context) are taken away.
fn counts(hunk: &parse::Hunk) -> (usize, usize) {
    let (old, new) = (&hunk.old, &hunk.new);
    let head = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let tail = old[head..]
        .iter()
        .rev()
        .zip(new[head..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    (new.len() - head - tail, old.len() - head - tail)
}

/// The error for a change to `shown` that cannot be made.
fn failed(shown: &str, why: &str) -> ToolOutput {
    ToolOutput::error(format!(
        "{TOOL}: {shown}: {why}. Nothing was changed: no file of the patch was written. Read \
         the file again and send a patch against its current content"
    ))
}

/// The file's bytes; `None` if there is none.
fn read(path: &Path, shown: &str) -> Result<Option<Vec<u8>>, ToolOutput> {
    match fs::metadata(path) {
        Ok(m) if m.is_dir() => return Err(failed(shown, "it is a directory")),
        Ok(m) if m.len() > MAX_FILE_BYTES => {
            return Err(failed(
                shown,
                &format!(
                    "it is {} bytes, more than a patch reads ({MAX_FILE_BYTES}); use edit_file",
                    m.len()
                ),
            ));
        }
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(TOOL, path, "cannot read", &e)),
    }
    fs::read(path)
        .map(Some)
        .map_err(|e| io_error(TOOL, path, "cannot read", &e))
}

/// `written` resolved against `cwd` (already canonical) through the symbolic links of its
/// existing part; refused unless it stays inside.
fn inside(cwd: &Path, written: &str) -> Result<PathBuf, ToolOutput> {
    let joined = super::resolve(cwd, written);
    let mut existing = joined.as_path();
    let mut rest: Vec<Component> = Vec::new();
    let real = loop {
        if let Ok(found) = existing.canonicalize() {
            let mut real = found;
            for part in rest.iter().rev() {
                match part {
                    Component::ParentDir => {
                        real.pop();
                    }
                    Component::CurDir => {}
                    other => real.push(other),
                }
            }
            break real;
        }
        match (existing.parent(), existing.components().next_back()) {
            (Some(parent), Some(last)) => {
                rest.push(last);
                existing = parent;
            }
            _ => break joined.clone(),
        }
    };
    if !real.starts_with(cwd) || real == cwd {
        return Err(ToolOutput::error(format!(
            "{TOOL}: {written} is outside the working directory {}; a patch only changes files \
             inside it. Nothing was changed",
            cwd.display()
        )));
    }
    Ok(real)
}

/// Writes the plan; on a failure, puts back what was already written.
fn commit(plan: Plan) -> ToolOutput {
    let mut done: Vec<(&PathBuf, &Option<Vec<u8>>)> = Vec::new();
    for (path, (original, new)) in &plan.files {
        let unchanged = match (original, new) {
            (Some(old), Some(new)) => old == new.as_bytes(),
            (None, None) => true,
            _ => false,
        };
        if unchanged {
            continue;
        }
        let written = match new {
            Some(text) => write_atomic(TOOL, path, text.as_bytes()),
            None => fs::remove_file(path).map_err(|e| io_error(TOOL, path, "cannot delete", &e)),
        };
        if let Err(mut out) = written {
            for (path, original) in done.into_iter().rev() {
                let _ = match original {
                    Some(bytes) => write_atomic(TOOL, path, bytes).map(|_| ()),
                    None => fs::remove_file(path).map_err(|_| ToolOutput::error("")),
                };
            }
            out.text
                .push_str("; the files the patch had already written were put back as they were");
            return out;
        }
        done.push((path, original));
    }
    ToolOutput::ok(format!("applied the patch:\n{}", plan.summary.join("\n")))
}

/// The approval preview: the patch's result as diffs. One file: that file's diff; several:
/// the working directory as `path`, each file's hunks after a `--- a/PATH` / `+++ b/PATH`
/// header. A patch that would not apply is shown as unavailable, with the reason.
fn preview_patch(cwd: &Path, patch: &str) -> ApprovalPreview {
    let changes = match parse::parse(patch) {
        Ok(changes) => changes,
        Err(why) => return preview::unavailable(cwd, why),
    };
    let plan = match plan(cwd, &changes) {
        Ok(plan) => plan,
        Err(out) => return preview::unavailable(cwd, out.text),
    };
    let diffs: Vec<(PathBuf, ApprovalPreview)> = plan
        .files
        .iter()
        .map(|(path, (original, new))| {
            let old = original.as_deref().map(String::from_utf8_lossy);
            (
                path.clone(),
                preview::diff(path, old.as_deref(), new.as_deref().unwrap_or("")),
            )
        })
        .collect();
    if let [(_, only)] = diffs.as_slice() {
        return only.clone();
    }
    let base = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
    let mut text = String::new();
    let mut omitted = 0u64;
    for (path, diff) in &diffs {
        let ApprovalPreview::Diff {
            diff,
            omitted_lines,
            ..
        } = diff
        else {
            continue;
        };
        let rel = path
            .strip_prefix(&base)
            .unwrap_or(path)
            .display()
            .to_string();
        let gone = plan.files.get(path).is_some_and(|(_, new)| new.is_none());
        let created = plan.files.get(path).is_some_and(|(old, _)| old.is_none());
        let from = if created {
            "/dev/null".to_owned()
        } else {
            format!("a/{rel}")
        };
        let to = if gone {
            "/dev/null".to_owned()
        } else {
            format!("b/{rel}")
        };
        let block = format!("--- {from}\n+++ {to}\n{diff}");
        if text.len() + block.len() > preview::MAX_BYTES {
            omitted += block.lines().count() as u64;
            continue;
        }
        text.push_str(&block);
        omitted += omitted_lines;
    }
    ApprovalPreview::Diff {
        path: base.display().to_string(),
        created: false,
        diff: text,
        omitted_lines: omitted,
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{ctx, run};
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn a_unified_diff_patches_two_files_and_adds_a_third() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::write(d.join("a.txt"), "one\ntwo\nthree\n").unwrap();
        fs::create_dir(d.join("src")).unwrap();
        fs::write(d.join("src/b.rs"), "fn main() {\n    old();\n}\n").unwrap();
        let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n\
            --- a/src/b.rs\n+++ b/src/b.rs\n@@ -1,3 +1,4 @@\n fn main() {\n-    old();\n+    new();\n+    more();\n }\n\
            --- /dev/null\n+++ b/c.md\n@@ -0,0 +1 @@\n+# C\n";
        let out = run("apply_patch", &json!({ "patch": patch }), &ctx(d)).await;
        assert!(!out.is_error, "{}", out.text);
        assert_eq!(
            out.text,
            "applied the patch:\nM a.txt (+1 -1)\nM src/b.rs (+2 -1)\nA c.md (1 lines)"
        );
        assert_eq!(
            fs::read_to_string(d.join("a.txt")).unwrap(),
            "one\nTWO\nthree\n"
        );
        assert_eq!(
            fs::read_to_string(d.join("src/b.rs")).unwrap(),
            "fn main() {\n    new();\n    more();\n}\n"
        );
        assert_eq!(fs::read_to_string(d.join("c.md")).unwrap(), "# C\n");
    }

    #[tokio::test]
    async fn one_failing_hunk_leaves_every_file_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::write(d.join("a.txt"), "one\ntwo\nthree\n").unwrap();
        fs::write(d.join("b.txt"), "alpha\nbeta\n").unwrap();
        let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n\
            *** Update File: b.txt\n@@\n alpha\n-beta\n+BETA\n@@\n-gamma\n+GAMMA\n\
            *** Delete File: a.txt\n*** End Patch\n";
        let out = run("apply_patch", &json!({ "patch": patch }), &ctx(d)).await;
        assert!(out.is_error);
        assert!(
            out.text.starts_with(
                "apply_patch: b.txt: hunk 2 of 2 does not apply: its 1 old lines were not \
                 found in the file (starting with \"gamma\")"
            ),
            "{}",
            out.text
        );
        assert!(out.text.contains("Nothing was changed"), "{}", out.text);
        assert_eq!(fs::read(d.join("a.txt")).unwrap(), b"one\ntwo\nthree\n");
        assert_eq!(fs::read(d.join("b.txt")).unwrap(), b"alpha\nbeta\n");
        assert_eq!(super::super::testing::names(d), ["a.txt", "b.txt"]);
    }

    #[tokio::test]
    async fn a_move_and_a_delete_in_the_begin_patch_format() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::write(d.join("old.py"), "def f():\n    return 1\n").unwrap();
        fs::write(d.join("gone.txt"), "x\n").unwrap();
        let patch = "*** Begin Patch\n*** Update File: old.py\n*** Move to: pkg/new.py\n\
            @@ def f():\n-    return 1\n+    return 2\n*** Delete File: gone.txt\n*** End Patch";
        let out = run("apply_patch", &json!({ "patch": patch }), &ctx(d)).await;
        assert!(!out.is_error, "{}", out.text);
        assert_eq!(
            fs::read_to_string(d.join("pkg/new.py")).unwrap(),
            "def f():\n    return 2\n"
        );
        assert!(!d.join("old.py").exists() && !d.join("gone.txt").exists());
    }

    #[tokio::test]
    async fn a_path_outside_the_working_directory_is_refused_before_anything_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let inner = dir.path().join("w");
        fs::create_dir(&inner).unwrap();
        fs::write(inner.join("a.txt"), "a\n").unwrap();
        let patch = "*** Begin Patch\n*** Update File: a.txt\n-a\n+b\n\
            *** Add File: ../escape.txt\n+x\n*** End Patch\n";
        let out = run("apply_patch", &json!({ "patch": patch }), &ctx(&inner)).await;
        assert!(out.is_error);
        assert!(
            out.text.contains("outside the working directory"),
            "{}",
            out.text
        );
        assert_eq!(fs::read_to_string(inner.join("a.txt")).unwrap(), "a\n");
        assert!(!dir.path().join("escape.txt").exists());
    }

    #[tokio::test]
    async fn the_preview_of_two_files_is_one_diff_with_a_header_per_file() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::write(d.join("a.txt"), "a\n").unwrap();
        let patch = "*** Begin Patch\n*** Update File: a.txt\n-a\n+b\n\
            *** Add File: n.txt\n+n\n*** End Patch\n";
        let at = PreviewAt {
            cwd: d.to_path_buf(),
            path: None,
        };
        let preview = ApplyPatch
            .preview(
                Args {
                    patch: patch.into(),
                },
                &at,
            )
            .await
            .unwrap();
        let ApprovalPreview::Diff { diff, .. } = preview else {
            panic!("{preview:?}")
        };
        assert_eq!(
            diff,
            "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+n\n"
        );
    }
}
