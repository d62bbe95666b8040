//! `read_file`: a text file's contents, exactly, cut at a size limit.

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;

use super::confine::{Access, checked};
use super::text::{lossy_utf8, utf8_head};
use super::{Tool, ToolContext, ToolOutput, client_files, io_error, on_path};
use crate::config::Policy;

pub(super) struct ReadFile;

/// Its name, as its messages begin.
const TOOL: &str = ReadFile::NAME;

#[derive(Deserialize, JsonSchema)]
pub(super) struct Args {
    /// File path, relative to the working directory unless absolute.
    path: String,
}

impl Tool for ReadFile {
    const NAME: &'static str = "read_file";
    const DESCRIPTION: &'static str = "Read a UTF-8 text file and return its contents exactly (no line numbers are added). \
        Very large files are cut off, with a note saying how much was left out; use bash \
        (e.g. `sed -n 100,200p FILE`) to read a specific part of them.";
    const READ_ONLY: bool = true;
    const APPROVAL: Policy = Policy::Allow;
    type Args = Args;

    fn path<'a>(&self, args: &'a Args) -> Option<&'a str> {
        Some(&args.path)
    }

    async fn run(&self, args: Args, ctx: &ToolContext) -> ToolOutput {
        let limit = ctx.limits.read_limit_bytes;
        if let Some(files) = ctx.client_files.as_deref().filter(|f| f.reads()) {
            let path = match checked(TOOL, &args.path, ctx, Access::Read).await {
                Ok(path) => path,
                Err(refused) => return refused,
            };
            return match client_files::read(TOOL, files, &path).await {
                Ok(text) => client_files::read_file_answer(&path, text, limit),
                Err(out) => out,
            };
        }
        on_path(TOOL, &args.path, ctx, Access::Read, move |path| {
            read_file(path, limit)
        })
        .await
    }
}

fn read_file(path: &Path, limit: usize) -> ToolOutput {
    let meta = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) => return io_error(TOOL, path, "cannot read", &e),
    };
    if meta.is_dir() {
        return ToolOutput::error(format!(
            "read_file: {} is a directory (use list_dir to see its entries)",
            path.display()
        ));
    }
    if !meta.is_file() {
        return ToolOutput::error(format!(
            "read_file: {} is not a regular file",
            path.display()
        ));
    }
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) => return io_error(TOOL, path, "cannot open", &e),
    };
    let mut bytes = Vec::new();
    let limit64 = u64::try_from(limit).unwrap_or(u64::MAX);
    if let Err(e) = (&mut file).take(limit64).read_to_end(&mut bytes) {
        return io_error(TOOL, path, "cannot read", &e);
    }
    // Bytes beyond the limit: the size says so for ordinary files; pseudo-files that
    // report size 0 (e.g. /proc) are counted by reading on.
    let read = bytes.len() as u64;
    let rest = if meta.len() > read {
        meta.len() - read
    } else if bytes.len() == limit {
        io::copy(&mut file, &mut io::sink()).unwrap_or(0)
    } else {
        0
    };
    if bytes.is_empty() && rest == 0 {
        return ToolOutput::ok(format!("[{} is empty]", path.display()));
    }
    let mut cut = rest;
    if rest > 0 {
        let keep = utf8_head(&bytes).len();
        cut += (bytes.len() - keep) as u64;
        bytes.truncate(keep);
    }
    let (mut text, lossy) = lossy_utf8(bytes);
    if cut > 0 {
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!(
            "[... {cut} bytes cut: the file is {} bytes and only the first {} are shown; \
             use bash (e.g. `tail -c +N` or `sed -n A,Bp`) to read the rest ...]",
            read + rest,
            read + rest - cut
        ));
    }
    if lossy {
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!(
            "[note: {} is not valid UTF-8; invalid bytes are shown as U+FFFD]",
            path.display()
        ));
    }
    ToolOutput::ok(text)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{ctx, run};
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn read_file_happy_paths() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(dir.path());
        fs::write(dir.path().join("a.txt"), "héllo\nworld\n").unwrap();
        let out = run("read_file", &json!({"path": "a.txt"}), &c).await;
        assert_eq!(out, ToolOutput::ok("héllo\nworld\n"));
        let abs = dir.path().join("a.txt");
        let out = run("read_file", &json!({"path": abs.to_str().unwrap()}), &c).await;
        assert_eq!(out, ToolOutput::ok("héllo\nworld\n"));
        fs::write(dir.path().join("empty"), "").unwrap();
        let out = run("read_file", &json!({"path": "empty"}), &c).await;
        assert!(!out.is_error);
        assert!(out.text.contains("is empty"), "{}", out.text);
    }

    #[tokio::test]
    async fn read_file_errors_name_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(dir.path());
        let out = run("read_file", &json!({"path": "missing.txt"}), &c).await;
        assert!(out.is_error);
        let want = format!("{}", dir.path().join("missing.txt").display());
        assert!(out.text.contains(&want), "{}", out.text);
        assert!(out.text.contains("no such file"), "{}", out.text);
        fs::create_dir(dir.path().join("sub")).unwrap();
        let out = run("read_file", &json!({"path": "sub"}), &c).await;
        assert!(out.is_error);
        assert!(out.text.contains("sub is a directory"), "{}", out.text);
    }

    #[tokio::test]
    async fn invalid_arguments_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(dir.path());
        let out = run("read_file", &json!("x"), &c).await;
        assert!(
            out.is_error && out.text.contains("expected a JSON object"),
            "{}",
            out.text
        );
        let out = run("read_file", &json!({}), &c).await;
        assert!(out.is_error && out.text.contains("missing required string argument `path`"));
        let out = run("read_file", &json!({"path": 3}), &c).await;
        assert!(out.is_error && out.text.contains("`path` must be a string, got a number"));
        let out = run("read_file", &json!({"path": ""}), &c).await;
        assert!(out.is_error && out.text.contains("must not be empty"));
        let out = run("read_file", &json!({"path": "a", "x": 1}), &c).await;
        assert!(
            out.is_error && out.text.contains("unknown argument `x`"),
            "{}",
            out.text
        );
    }

    #[tokio::test]
    async fn read_file_non_utf8_is_lossy_with_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(dir.path());
        fs::write(dir.path().join("bin"), b"ab\xffcd").unwrap();
        let out = run("read_file", &json!({"path": "bin"}), &c).await;
        assert!(!out.is_error);
        assert!(
            out.text.starts_with("ab\u{FFFD}cd\n[note: "),
            "{}",
            out.text
        );
        assert!(out.text.contains("not valid UTF-8"), "{}", out.text);
    }

    #[tokio::test]
    async fn read_file_is_truncated_at_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = ctx(dir.path());
        c.limits.read_limit_bytes = 100;
        fs::write(dir.path().join("big"), "x".repeat(1000)).unwrap();
        let out = run("read_file", &json!({"path": "big"}), &c).await;
        assert!(!out.is_error);
        let (head, marker) = out.text.split_once('\n').unwrap();
        assert_eq!(head, "x".repeat(100));
        assert!(
            marker.starts_with("[... 900 bytes cut: the file is 1000 bytes"),
            "{marker}"
        );
        // A multi-byte character straddling the limit is not split.
        fs::write(dir.path().join("euro"), "€".repeat(100)).unwrap();
        let out = run("read_file", &json!({"path": "euro"}), &c).await;
        let (head, marker) = out.text.split_once('\n').unwrap();
        assert_eq!(head, "€".repeat(33));
        assert!(marker.starts_with("[... 201 bytes cut"), "{marker}");
        // Exactly at the limit: no marker.
        fs::write(dir.path().join("exact"), "y".repeat(100)).unwrap();
        let out = run("read_file", &json!({"path": "exact"}), &c).await;
        assert_eq!(out, ToolOutput::ok("y".repeat(100)));
    }
}
