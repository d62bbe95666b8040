//! `edit_file`: replace one exact occurrence of a text in a file, atomically.

use std::fs;
use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;
use zeroclaw_protocol::events::ApprovalPreview;

use super::client_files::{self, ClientFiles};
use super::confine::{Access, checked};
use super::preview::{self, PreviewAt};
use super::write_file::write_atomic;
use super::{Tool, ToolContext, ToolOutput, io_error, on_path};
use crate::config::Policy;

pub(super) struct EditFile;

/// Its name, as its messages begin.
const TOOL: &str = EditFile::NAME;

#[derive(Deserialize, JsonSchema)]
pub(super) struct Args {
    /// File path, relative to the working directory unless absolute.
    path: String,
    /// The exact text to replace; must be non-empty and occur exactly once.
    old_text: String,
    /// The replacement text.
    new_text: String,
}

impl Tool for EditFile {
    const NAME: &'static str = "edit_file";
    const DESCRIPTION: &'static str = "Replace one exact occurrence of `old_text` in a text file with `new_text`. \
        `old_text` must match the file byte for byte (including whitespace and indentation) \
        and must occur exactly once; include enough surrounding lines to make it unique. To \
        delete text, pass an empty `new_text`. The write is atomic.";
    const READ_ONLY: bool = false;
    const APPROVAL: Policy = Policy::Ask;
    type Args = Args;

    fn check(&self, args: &Args) -> Result<(), String> {
        if args.old_text.is_empty() {
            return Err("`old_text` must not be empty \
                 (use write_file to create or replace a whole file)"
                .into());
        }
        if args.old_text == args.new_text {
            return Err("`old_text` and `new_text` are identical; nothing to change".into());
        }
        Ok(())
    }

    fn path<'a>(&self, args: &'a Args) -> Option<&'a str> {
        Some(&args.path)
    }

    async fn preview(&self, args: Args, at: &PreviewAt) -> Option<ApprovalPreview> {
        let path = at.path.clone()?;
        preview::blocking(move || preview_edit(&path, &args.old_text, &args.new_text)).await
    }

    async fn run(&self, args: Args, ctx: &ToolContext) -> ToolOutput {
        let Args {
            path,
            old_text,
            new_text,
        } = args;
        if let Some(files) = ctx.client_files.as_deref() {
            let path = match checked(TOOL, &path, ctx, Access::Write).await {
                Ok(path) => path,
                Err(refused) => return refused,
            };
            return through_client(files, &path, &old_text, &new_text).await;
        }
        on_path(TOOL, &path, ctx, Access::Write, move |path| {
            edit_file(path, &old_text, &new_text)
        })
        .await
    }
}

/// The edit with the client's file system: read through it when it reads (else from the
/// disk), written through it when it writes (else atomically to the disk).
async fn through_client(files: &dyn ClientFiles, path: &Path, old: &str, new: &str) -> ToolOutput {
    let text = if files.reads() {
        match client_files::read(TOOL, files, path).await {
            Ok(text) => text,
            Err(out) => return out,
        }
    } else {
        match tokio::fs::read(path).await {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) => text,
                Err(_) => return not_utf8(path),
            },
            Err(e) => return io_error(TOOL, path, "cannot read", &e),
        }
    };
    let (updated, done) = match replace_once(path, &text, old, new) {
        Ok(edit) => edit,
        Err(out) => return out,
    };
    if files.writes() {
        return match client_files::write(TOOL, files, path, &updated).await {
            Ok(()) => done,
            Err(out) => out,
        };
    }
    let path = path.to_path_buf();
    super::blocking(TOOL, move || {
        match write_atomic(TOOL, &path, updated.as_bytes()) {
            Ok(()) => done,
            Err(out) => out,
        }
    })
    .await
}

fn not_utf8(path: &Path) -> ToolOutput {
    ToolOutput::error(format!(
        "edit_file: {} is not valid UTF-8 text; edit_file can only edit text files",
        path.display()
    ))
}

/// Replaces the one occurrence of `old` with `new` in the file at `path`.
fn edit_file(path: &Path, old: &str, new: &str) -> ToolOutput {
    let text = match read_text(path) {
        Ok(text) => text,
        Err(out) => return out,
    };
    let (updated, done) = match replace_once(path, &text, old, new) {
        Ok(edit) => edit,
        Err(out) => return out,
    };
    if let Err(out) = write_atomic(TOOL, path, updated.as_bytes()) {
        return out;
    }
    done
}

/// The file at `path` as text; the error result if it is a directory, unreadable or not
/// UTF-8.
fn read_text(path: &Path) -> Result<String, ToolOutput> {
    let meta = fs::metadata(path).map_err(|e| io_error(TOOL, path, "cannot read", &e))?;
    if meta.is_dir() {
        return Err(ToolOutput::error(format!(
            "{TOOL}: {} is a directory",
            path.display()
        )));
    }
    let bytes = fs::read(path).map_err(|e| io_error(TOOL, path, "cannot read", &e))?;
    String::from_utf8(bytes).map_err(|_| not_utf8(path))
}

/// The approval preview of an edit from the disk: the diff [`edit_file`] would make,
/// read and applied by the same code, or why it would fail.
fn preview_edit(path: &Path, old: &str, new: &str) -> ApprovalPreview {
    if let Ok(meta) = fs::metadata(path)
        && meta.is_file()
        && meta.len() > preview::MAX_FILE_BYTES
    {
        return preview::unavailable(
            path,
            format!(
                "the file is {} bytes, too large to preview (at most {} are diffed)",
                meta.len(),
                preview::MAX_FILE_BYTES
            ),
        );
    }
    let edit = read_text(path).and_then(|text| {
        let (updated, _) = replace_once(path, &text, old, new)?;
        Ok((text, updated))
    });
    match edit {
        Ok((text, updated)) => preview::diff(path, Some(&text), &updated),
        Err(out) => {
            let why = out.text.strip_prefix("edit_file: ").unwrap_or(&out.text);
            preview::unavailable(path, format!("the edit would fail: {why}"))
        }
    }
}

/// `text` with its one occurrence of `old` replaced by `new`, and the answer to give once
/// it is written; the error if `old` is not there exactly once.
fn replace_once(
    path: &Path,
    text: &str,
    old: &str,
    new: &str,
) -> Result<(String, ToolOutput), ToolOutput> {
    let (count, first) = occurrences(text, old);
    let Some(pos) = first else {
        let mut msg = format!(
            "old_text not found in {}; it must match the file exactly, including whitespace and \
             indentation (read the file again to see its current content)",
            path.display()
        );
        if text.contains("\r\n") && old.contains('\n') && !old.contains('\r') {
            msg.push_str("; note: the file uses CRLF (\\r\\n) line endings");
        }
        return Err(ToolOutput::error(msg));
    };
    if count > 1 {
        return Err(ToolOutput::error(format!(
            "old_text appears {count} times in {}; include more surrounding text to make it unique",
            path.display()
        )));
    }
    let mut updated = String::with_capacity(text.len() - old.len() + new.len());
    updated.push_str(&text[..pos]);
    updated.push_str(new);
    updated.push_str(&text[pos + old.len()..]);
    let line = 1 + memchr::memchr_iter(b'\n', &text.as_bytes()[..pos]).count();
    let done = ToolOutput::ok(format!(
        "edited {}: replaced {} with {} starting at line {line}",
        path.display(),
        lines(old),
        lines(new)
    ));
    Ok((updated, done))
}

/// How many (possibly overlapping) times `needle` occurs in `hay`, and the first offset.
fn occurrences(hay: &str, needle: &str) -> (usize, Option<usize>) {
    let finder = memchr::memmem::Finder::new(needle.as_bytes());
    let hay = hay.as_bytes();
    let (mut count, mut first, mut start) = (0, None, 0);
    while let Some(i) = finder.find(&hay[start..]) {
        let pos = start + i;
        first.get_or_insert(pos);
        count += 1;
        start = pos + 1;
    }
    (count, first)
}

fn lines(s: &str) -> String {
    match s.lines().count() {
        0 => "nothing".to_string(),
        1 => "1 line".to_string(),
        n => format!("{n} lines"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{ctx, names, run};
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn edit_file_replaces_and_reports_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(dir.path());
        let p = dir.path().join("f.rs");
        fs::write(&p, "fn a() {}\nfn b() {\n    1\n}\n").unwrap();
        let out = run(
            "edit_file",
            &json!({"path": "f.rs", "old_text": "    1\n", "new_text": "    2\n    3\n"}),
            &c,
        )
        .await;
        assert!(!out.is_error, "{}", out.text);
        assert!(out.text.contains("line 3"), "{}", out.text);
        assert!(out.text.contains(&p.display().to_string()), "{}", out.text);
        assert_eq!(
            fs::read_to_string(&p).unwrap(),
            "fn a() {}\nfn b() {\n    2\n    3\n}\n"
        );
        // Deleting text.
        let out = run(
            "edit_file",
            &json!({"path": "f.rs", "old_text": "fn a() {}\n", "new_text": ""}),
            &c,
        )
        .await;
        assert!(!out.is_error);
        assert!(out.text.contains("line 1"), "{}", out.text);
        assert_eq!(
            fs::read_to_string(&p).unwrap(),
            "fn b() {\n    2\n    3\n}\n"
        );
        assert_eq!(names(dir.path()), ["f.rs"]);
    }

    #[tokio::test]
    async fn edit_file_errors_leave_the_file_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(dir.path());
        let p = dir.path().join("f.txt");
        let original = "one two one\naaa\n";
        fs::write(&p, original).unwrap();
        let shown = p.display().to_string();
        let edit =
            |old: &str, new: &str| json!({"path": "f.txt", "old_text": old, "new_text": new});

        let out = run("edit_file", &edit("", "x"), &c).await;
        assert!(out.is_error);
        assert!(
            out.text.contains("`old_text` must not be empty"),
            "{}",
            out.text
        );

        let out = run("edit_file", &edit("three", "x"), &c).await;
        assert!(out.is_error);
        assert!(
            out.text
                .starts_with(&format!("old_text not found in {shown}")),
            "{}",
            out.text
        );

        let out = run("edit_file", &edit("one", "1"), &c).await;
        assert!(out.is_error);
        assert_eq!(
            out.text,
            format!(
                "old_text appears 2 times in {shown}; include more surrounding text to make it unique"
            )
        );
        // Overlapping occurrences count too.
        let out = run("edit_file", &edit("aa", "b"), &c).await;
        assert!(
            out.text.starts_with("old_text appears 2 times"),
            "{}",
            out.text
        );

        let out = run("edit_file", &edit("two", "two"), &c).await;
        assert!(out.is_error);
        assert!(out.text.contains("identical"), "{}", out.text);

        assert_eq!(fs::read_to_string(&p).unwrap(), original);
        assert_eq!(names(dir.path()), ["f.txt"]);

        let out = run(
            "edit_file",
            &json!({"path": "nope.txt", "old_text": "a", "new_text": "b"}),
            &c,
        )
        .await;
        assert!(out.is_error);
        assert!(
            out.text.contains("nope.txt") && out.text.contains("no such file"),
            "{}",
            out.text
        );

        fs::write(dir.path().join("bin"), b"a\xffb").unwrap();
        let out = run(
            "edit_file",
            &json!({"path": "bin", "old_text": "a", "new_text": "b"}),
            &c,
        )
        .await;
        assert!(out.is_error);
        assert!(out.text.contains("not valid UTF-8"), "{}", out.text);
        assert_eq!(fs::read(dir.path().join("bin")).unwrap(), b"a\xffb");

        let out = run(
            "edit_file",
            &json!({"path": "f.txt", "old_text": "one"}),
            &c,
        )
        .await;
        assert!(out.is_error);
        assert!(
            out.text
                .contains("missing required string argument `new_text`")
        );
    }

    #[tokio::test]
    async fn edit_file_hints_at_crlf() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(dir.path());
        fs::write(dir.path().join("w.txt"), "a\r\nb\r\n").unwrap();
        let out = run(
            "edit_file",
            &json!({"path": "w.txt", "old_text": "a\nb", "new_text": "c"}),
            &c,
        )
        .await;
        assert!(out.is_error);
        assert!(out.text.contains("CRLF"), "{}", out.text);
    }

    #[test]
    fn overlapping_occurrences() {
        assert_eq!(occurrences("aaa", "aa"), (2, Some(0)));
        assert_eq!(occurrences("xaby", "ab"), (1, Some(1)));
        assert_eq!(occurrences("x", "ab"), (0, None));
        assert_eq!(occurrences("é€é", "é"), (2, Some(0)));
    }
}
