//! `list_dir`: one directory's entries, sorted, with their kinds and sizes.

use std::ffi::OsString;
use std::fs;
use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;

use super::confine::Access;
use super::{Tool, ToolContext, ToolOutput, io_error, on_path};
use crate::config::Policy;

pub(super) struct ListDir;

/// Its name, as its messages begin.
const TOOL: &str = ListDir::NAME;

#[derive(Deserialize, JsonSchema)]
pub(super) struct Args {
    /// Directory path, relative to the working directory unless absolute; `.` is the working
    /// directory itself.
    path: String,
}

impl Tool for ListDir {
    const NAME: &'static str = "list_dir";
    const DESCRIPTION: &'static str = "List a directory's entries, sorted by name: subdirectories end with `/`, files show \
        their size in bytes, symbolic links show their target. Not recursive; use bash (e.g. \
        `find` or `git ls-files`) for trees.";
    const READ_ONLY: bool = true;
    const APPROVAL: Policy = Policy::Allow;
    type Args = Args;

    fn path<'a>(&self, args: &'a Args) -> Option<&'a str> {
        Some(&args.path)
    }

    async fn run(&self, args: Args, ctx: &ToolContext) -> ToolOutput {
        let limit = ctx.limits.list_limit;
        on_path(TOOL, &args.path, ctx, Access::Read, move |path| {
            list_dir(path, limit)
        })
        .await
    }
}

fn list_dir(path: &Path, limit: usize) -> ToolOutput {
    match fs::metadata(path) {
        Ok(m) if !m.is_dir() => {
            return ToolOutput::error(format!(
                "{TOOL}: {} is not a directory (use read_file to read a file)",
                path.display()
            ));
        }
        Ok(_) => {}
        Err(e) => return io_error(TOOL, path, "cannot list", &e),
    }
    let reader = match fs::read_dir(path) {
        Ok(r) => r,
        Err(e) => return io_error(TOOL, path, "cannot list", &e),
    };
    let mut names: Vec<OsString> = Vec::new();
    for entry in reader {
        match entry {
            Ok(entry) => names.push(entry.file_name()),
            Err(e) => return io_error(TOOL, path, "cannot list", &e),
        }
    }
    if names.is_empty() {
        return ToolOutput::ok(format!("[{} is empty]", path.display()));
    }
    names.sort();
    let total = names.len();
    let mut text = String::new();
    for name in names.iter().take(limit) {
        text.push_str(&describe_entry(&path.join(name), &name.to_string_lossy()));
        text.push('\n');
    }
    if total > limit {
        text.push_str(&format!(
            "[... {} more entries not shown ({total} in all; the limit is {limit}); use bash \
             (e.g. `ls | grep PATTERN` or `find`) to narrow it down ...]\n",
            total - limit
        ));
    }
    text.truncate(text.trim_end_matches('\n').len());
    ToolOutput::ok(text)
}

fn describe_entry(full: &Path, name: &str) -> String {
    let meta = match fs::symlink_metadata(full) {
        Ok(m) => m,
        Err(_) => return format!("{name} (unreadable)"),
    };
    let ft = meta.file_type();
    if ft.is_dir() {
        return format!("{name}/");
    }
    if ft.is_symlink() {
        let target = fs::read_link(full)
            .map(|t| t.display().to_string())
            .unwrap_or_else(|_| "?".to_string());
        return match fs::metadata(full) {
            Ok(m) if m.is_dir() => format!("{name}/ -> {target}"),
            Ok(m) if m.is_file() => format!("{name} -> {target} ({})", size(m.len())),
            Ok(_) => format!("{name} -> {target}"),
            Err(_) => format!("{name} -> {target} (broken link)"),
        };
    }
    if ft.is_file() {
        return format!("{name} ({})", size(meta.len()));
    }
    format!("{name} (special file)")
}

fn size(n: u64) -> String {
    if n == 1 {
        "1 byte".to_string()
    } else {
        format!("{n} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{ctx, run};
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn list_dir_sorted_with_kinds_and_sizes() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(dir.path());
        fs::write(dir.path().join("b.txt"), "12345").unwrap();
        fs::write(dir.path().join("a.txt"), "1").unwrap();
        fs::create_dir(dir.path().join("c")).unwrap();
        fs::create_dir(dir.path().join("A")).unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("b.txt", dir.path().join("l")).unwrap();
            std::os::unix::fs::symlink("c", dir.path().join("m")).unwrap();
            std::os::unix::fs::symlink("gone", dir.path().join("n")).unwrap();
        }
        let out = run("list_dir", &json!({"path": "."}), &c).await;
        assert!(!out.is_error, "{}", out.text);
        let base = ["A/", "a.txt (1 byte)", "b.txt (5 bytes)", "c/"];
        #[cfg(unix)]
        let want = [
            &base[..],
            &["l -> b.txt (5 bytes)", "m/ -> c", "n -> gone (broken link)"],
        ]
        .concat();
        #[cfg(not(unix))]
        let want = base.to_vec();
        assert_eq!(out.text, want.join("\n"));
        let empty = dir.path().join("c");
        let out = run("list_dir", &json!({"path": empty.to_str().unwrap()}), &c).await;
        assert!(!out.is_error);
        assert!(out.text.contains("is empty"), "{}", out.text);
    }

    #[tokio::test]
    async fn list_dir_is_truncated_at_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = ctx(dir.path());
        c.limits.list_limit = 3;
        for i in 0..10 {
            fs::write(dir.path().join(format!("f{i}")), "").unwrap();
        }
        let out = run("list_dir", &json!({"path": "."}), &c).await;
        assert!(!out.is_error);
        let lines: Vec<&str> = out.text.lines().collect();
        assert_eq!(
            &lines[..3],
            ["f0 (0 bytes)", "f1 (0 bytes)", "f2 (0 bytes)"]
        );
        assert_eq!(lines.len(), 4);
        assert!(
            lines[3].starts_with("[... 7 more entries not shown (10 in all"),
            "{}",
            lines[3]
        );
    }

    #[tokio::test]
    async fn list_dir_errors() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(dir.path());
        let out = run("list_dir", &json!({"path": "missing"}), &c).await;
        assert!(out.is_error);
        assert!(
            out.text.contains("missing") && out.text.contains("no such file"),
            "{}",
            out.text
        );
        fs::write(dir.path().join("file"), "x").unwrap();
        let out = run("list_dir", &json!({"path": "file"}), &c).await;
        assert!(out.is_error);
        assert!(out.text.contains("file is not a directory"), "{}", out.text);
        let out = run("list_dir", &json!({}), &c).await;
        assert!(out.is_error);
        assert!(out.text.contains("missing required string argument `path`"));
    }
}
