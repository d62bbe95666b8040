//! `write_file`: create or replace a file, atomically.
//!
//! The new content goes to a temporary file in the same directory, is synced, and is
//! renamed over the target, so a crash leaves either the old file or the new one, never a
//! mix. `edit_file` writes the same way.

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;

use super::confine::{Access, checked};
use super::preview::{self, PreviewAt};
use super::{Tool, ToolContext, ToolOutput, client_files, io_error, on_path};
use crate::config::Policy;
use zeroclaw_protocol::events::ApprovalPreview;

pub(super) struct WriteFile;

/// Its name, as its messages begin.
const TOOL: &str = WriteFile::NAME;

#[derive(Deserialize, JsonSchema)]
pub(super) struct Args {
    /// File path, relative to the working directory unless absolute.
    path: String,
    /// The complete new content of the file.
    content: String,
}

impl Tool for WriteFile {
    const NAME: &'static str = "write_file";
    const DESCRIPTION: &'static str = "Create or overwrite a file with the given content. Missing parent directories are \
        created. The write is atomic (the file is either fully replaced or left untouched) \
        and an existing file keeps its permissions. Prefer edit_file for small changes to an \
        existing file.";
    const READ_ONLY: bool = false;
    const APPROVAL: Policy = Policy::Ask;
    type Args = Args;

    fn path<'a>(&self, args: &'a Args) -> Option<&'a str> {
        Some(&args.path)
    }

    async fn preview(&self, args: Args, at: &PreviewAt) -> Option<ApprovalPreview> {
        let path = at.path.clone()?;
        preview::blocking(move || preview_write(&path, &args.content)).await
    }

    async fn run(&self, args: Args, ctx: &ToolContext) -> ToolOutput {
        let content = args.content;
        if let Some(files) = ctx.client_files.as_deref().filter(|f| f.writes()) {
            let path = match checked(TOOL, &args.path, ctx, Access::Write).await {
                Ok(path) => path,
                Err(refused) => return refused,
            };
            return match client_files::write(TOOL, files, &path, &content).await {
                Ok(()) => ToolOutput::ok(format!(
                    "wrote {} bytes to {} (in the editor)",
                    content.len(),
                    path.display()
                )),
                Err(out) => out,
            };
        }
        on_path(TOOL, &args.path, ctx, Access::Write, move |path| {
            write_file(path, &content)
        })
        .await
    }
}

fn write_file(path: &Path, content: &str) -> ToolOutput {
    match write_atomic(TOOL, path, content.as_bytes()) {
        Ok(()) => ToolOutput::ok(format!(
            "wrote {} bytes to {}",
            content.len(),
            path.display()
        )),
        Err(out) => out,
    }
}

/// The approval preview of a write: the diff against the file there (a link followed, as
/// [`write_atomic`] does), or every line added when there is none.
fn preview_write(path: &Path, content: &str) -> ApprovalPreview {
    let limit = preview::MAX_FILE_BYTES;
    if content.len() as u64 > limit {
        return preview::unavailable(
            path,
            format!(
                "the new content is {} bytes, too large to preview (at most {limit} are diffed)",
                content.len()
            ),
        );
    }
    let meta = match fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return preview::diff(path, None, content);
        }
        Err(e) => return unreadable(path, &e),
    };
    if meta.is_dir() {
        return preview::unavailable(path, "it is a directory: the write would fail");
    }
    if meta.len() > limit {
        return preview::unavailable(
            path,
            format!(
                "replaces a file of {} bytes, too large to diff (at most {limit}), with {} bytes",
                meta.len(),
                content.len()
            ),
        );
    }
    let mut old = Vec::new();
    if let Err(e) = fs::File::open(path).and_then(|f| f.take(limit + 1).read_to_end(&mut old)) {
        return unreadable(path, &e);
    }
    match String::from_utf8(old) {
        Ok(old) => preview::diff(path, Some(&old), content),
        Err(e) => preview::unavailable(
            path,
            format!(
                "replaces a binary file ({} bytes, not UTF-8 text) with {} bytes of text",
                e.as_bytes().len(),
                content.len()
            ),
        ),
    }
}

fn unreadable(path: &Path, e: &io::Error) -> ApprovalPreview {
    let why = io_error(TOOL, path, "cannot read the file it replaces,", e).text;
    preview::unavailable(path, why.trim_start_matches("write_file: ").to_owned())
}

/// Replaces `path` with `content` atomically, creating missing parent directories and
/// keeping an existing file's permissions. A symbolic link is followed (the link stays).
pub(super) fn write_atomic(tool: &str, path: &Path, content: &[u8]) -> Result<(), ToolOutput> {
    let target = match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    };
    let existing = match fs::metadata(&target) {
        Ok(m) if m.is_dir() => {
            return Err(ToolOutput::error(format!(
                "{tool}: {} is a directory",
                path.display()
            )));
        }
        Ok(m) => Some(m.permissions()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(io_error(tool, path, "cannot write", &e)),
    };
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if let Err(e) = fs::create_dir_all(&dir) {
        return Err(io_error(tool, &dir, "cannot create directory", &e));
    }

    let mut builder = tempfile::Builder::new();
    builder.prefix(".zeroclaw-write-").suffix(".tmp");
    // A temporary file is 0600 by default; a new file should get the usual 0666 & !umask.
    #[cfg(unix)]
    let new_file_mode = {
        use std::os::unix::fs::PermissionsExt;
        fs::Permissions::from_mode(0o666)
    };
    #[cfg(unix)]
    if existing.is_none() {
        builder.permissions(new_file_mode);
    }
    let write_err = |e: io::Error| io_error(tool, path, "cannot write", &e);
    let mut tmp = builder.tempfile_in(&dir).map_err(write_err)?;
    tmp.write_all(content).map_err(write_err)?;
    if let Some(perms) = existing {
        tmp.as_file().set_permissions(perms).map_err(write_err)?;
    }
    tmp.as_file().sync_all().map_err(write_err)?;
    // On failure the PersistError owns the temporary file and deletes it when dropped.
    tmp.persist(&target).map_err(|e| write_err(e.error))?;
    #[cfg(unix)]
    if let Ok(d) = fs::File::open(&dir) {
        // Make the rename itself durable; best effort.
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testing::{ctx, names, run};
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn write_file_creates_parents_atomically() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(dir.path());
        let out = run(
            "write_file",
            &json!({"path": "a/b/c.txt", "content": "hello"}),
            &c,
        )
        .await;
        let target = dir.path().join("a/b/c.txt");
        assert_eq!(
            out,
            ToolOutput::ok(format!("wrote 5 bytes to {}", target.display()))
        );
        assert_eq!(fs::read_to_string(&target).unwrap(), "hello");
        // Overwrite.
        let out = run(
            "write_file",
            &json!({"path": "a/b/c.txt", "content": ""}),
            &c,
        )
        .await;
        assert!(!out.is_error, "{}", out.text);
        assert_eq!(fs::read_to_string(&target).unwrap(), "");
        // No temporary files are left behind.
        assert_eq!(names(&dir.path().join("a/b")), ["c.txt"]);
        assert_eq!(names(dir.path()), ["a"]);
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn write_file_keeps_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(dir.path());
        let p = dir.path().join("script.sh");
        fs::write(&p, "old").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o751)).unwrap();
        let out = run(
            "write_file",
            &json!({"path": "script.sh", "content": "new"}),
            &c,
        )
        .await;
        assert!(!out.is_error, "{}", out.text);
        assert_eq!(fs::read_to_string(&p).unwrap(), "new");
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o7777,
            0o751
        );
        // A new file gets the same mode as an ordinary File::create (0666 & !umask), not 0600.
        fs::File::create(dir.path().join("reference")).unwrap();
        let out = run("write_file", &json!({"path": "fresh", "content": "x"}), &c).await;
        assert!(!out.is_error);
        let mode = |n: &str| {
            fs::metadata(dir.path().join(n))
                .unwrap()
                .permissions()
                .mode()
        };
        assert_eq!(mode("fresh"), mode("reference"));
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn write_file_follows_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(dir.path());
        fs::write(dir.path().join("real"), "old").unwrap();
        std::os::unix::fs::symlink("real", dir.path().join("link")).unwrap();
        let out = run("write_file", &json!({"path": "link", "content": "new"}), &c).await;
        assert!(!out.is_error, "{}", out.text);
        assert!(
            fs::symlink_metadata(dir.path().join("link"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(dir.path().join("real")).unwrap(), "new");
        assert_eq!(names(dir.path()), ["link", "real"]);
    }

    #[tokio::test]
    async fn write_file_errors() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(dir.path());
        fs::create_dir(dir.path().join("sub")).unwrap();
        let out = run("write_file", &json!({"path": "sub", "content": "x"}), &c).await;
        assert!(out.is_error);
        assert!(out.text.contains("sub is a directory"), "{}", out.text);
        fs::write(dir.path().join("file"), "x").unwrap();
        let out = run(
            "write_file",
            &json!({"path": "file/inner", "content": "x"}),
            &c,
        )
        .await;
        assert!(out.is_error);
        assert!(out.text.contains("file"), "{}", out.text);
        let out = run("write_file", &json!({"path": "x"}), &c).await;
        assert!(out.is_error);
        assert!(
            out.text
                .contains("missing required string argument `content`")
        );
        assert_eq!(names(dir.path()), ["file", "sub"]);
    }
}
