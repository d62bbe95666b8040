//! The file tools: read_file, write_file, edit_file, list_dir.
//!
//! All file-system work runs on the blocking pool. Writes are atomic: the new content
//! goes to a temporary file in the same directory, is synced, and is renamed over the
//! target, so a crash leaves either the old file or the new one, never a mix.

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Args, ToolContext, ToolOutput, lossy_utf8, resolve, utf8_head};

pub(super) async fn read_file(args: &Value, ctx: &ToolContext) -> ToolOutput {
    let a = match Args::new("read_file", args, &["path"]) {
        Ok(a) => a,
        Err(out) => return out,
    };
    let path = match a.path("path") {
        Ok(p) => resolve(&ctx.cwd, p),
        Err(out) => return out,
    };
    let limit = ctx.limits.read_limit_bytes;
    blocking("read_file", move || read_file_sync(&path, limit)).await
}

pub(super) async fn write_file(args: &Value, ctx: &ToolContext) -> ToolOutput {
    let a = match Args::new("write_file", args, &["path", "content"]) {
        Ok(a) => a,
        Err(out) => return out,
    };
    let (path, content) = match (a.path("path"), a.string("content")) {
        (Ok(p), Ok(c)) => (resolve(&ctx.cwd, p), c.to_owned()),
        (Err(out), _) | (_, Err(out)) => return out,
    };
    blocking("write_file", move || write_file_sync(&path, &content)).await
}

pub(super) async fn edit_file(args: &Value, ctx: &ToolContext) -> ToolOutput {
    let a = match Args::new("edit_file", args, &["path", "old_text", "new_text"]) {
        Ok(a) => a,
        Err(out) => return out,
    };
    let (path, old, new) = match (a.path("path"), a.string("old_text"), a.string("new_text")) {
        (Ok(p), Ok(o), Ok(n)) => (resolve(&ctx.cwd, p), o.to_owned(), n.to_owned()),
        (Err(out), _, _) | (_, Err(out), _) | (_, _, Err(out)) => return out,
    };
    if old.is_empty() {
        return ToolOutput::error(
            "invalid arguments for edit_file: `old_text` must not be empty \
             (use write_file to create or replace a whole file)",
        );
    }
    if old == new {
        return ToolOutput::error(
            "invalid arguments for edit_file: `old_text` and `new_text` are identical; nothing to change",
        );
    }
    blocking("edit_file", move || edit_file_sync(&path, &old, &new)).await
}

pub(super) async fn list_dir(args: &Value, ctx: &ToolContext) -> ToolOutput {
    let a = match Args::new("list_dir", args, &["path"]) {
        Ok(a) => a,
        Err(out) => return out,
    };
    let path = match a.path("path") {
        Ok(p) => resolve(&ctx.cwd, p),
        Err(out) => return out,
    };
    let limit = ctx.limits.list_limit;
    blocking("list_dir", move || list_dir_sync(&path, limit)).await
}

async fn blocking<F>(tool: &'static str, f: F) -> ToolOutput
where
    F: FnOnce() -> ToolOutput + Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(out) => out,
        Err(e) => ToolOutput::error(format!("{tool}: internal error: {e}")),
    }
}

fn io_error(tool: &str, path: &Path, what: &str, e: &io::Error) -> ToolOutput {
    let reason = match e.kind() {
        io::ErrorKind::NotFound => "no such file or directory".to_string(),
        io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => e.to_string(),
    };
    ToolOutput::error(format!("{tool}: {what} {}: {reason}", path.display()))
}

// ---------------------------------------------------------------------------- read_file

fn read_file_sync(path: &Path, limit: usize) -> ToolOutput {
    let meta = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) => return io_error("read_file", path, "cannot read", &e),
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
        Err(e) => return io_error("read_file", path, "cannot open", &e),
    };
    let mut bytes = Vec::new();
    let limit64 = u64::try_from(limit).unwrap_or(u64::MAX);
    if let Err(e) = (&mut file).take(limit64).read_to_end(&mut bytes) {
        return io_error("read_file", path, "cannot read", &e);
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

// --------------------------------------------------------------------------- write_file

fn write_file_sync(path: &Path, content: &str) -> ToolOutput {
    match write_atomic("write_file", path, content.as_bytes()) {
        Ok(()) => ToolOutput::ok(format!(
            "wrote {} bytes to {}",
            content.len(),
            path.display()
        )),
        Err(out) => out,
    }
}

/// Replaces `path` with `content` atomically, creating missing parent directories and
/// keeping an existing file's permissions. A symbolic link is followed (the link stays).
fn write_atomic(tool: &str, path: &Path, content: &[u8]) -> Result<(), ToolOutput> {
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
    if let Ok(d) = File::open(&dir) {
        // Make the rename itself durable; best effort.
        let _ = d.sync_all();
    }
    Ok(())
}

// ---------------------------------------------------------------------------- edit_file

fn edit_file_sync(path: &Path, old: &str, new: &str) -> ToolOutput {
    const TOOL: &str = "edit_file";
    let meta = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) => return io_error(TOOL, path, "cannot read", &e),
    };
    if meta.is_dir() {
        return ToolOutput::error(format!("{TOOL}: {} is a directory", path.display()));
    }
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) => return io_error(TOOL, path, "cannot read", &e),
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return ToolOutput::error(format!(
            "{TOOL}: {} is not valid UTF-8 text; edit_file can only edit text files",
            path.display()
        ));
    };
    let (count, first) = occurrences(&text, old);
    let Some(pos) = first else {
        let mut msg = format!(
            "old_text not found in {}; it must match the file exactly, including whitespace and \
             indentation (read the file again to see its current content)",
            path.display()
        );
        if text.contains("\r\n") && old.contains('\n') && !old.contains('\r') {
            msg.push_str("; note: the file uses CRLF (\\r\\n) line endings");
        }
        return ToolOutput::error(msg);
    };
    if count > 1 {
        return ToolOutput::error(format!(
            "old_text appears {count} times in {}; include more surrounding text to make it unique",
            path.display()
        ));
    }
    let mut updated = String::with_capacity(text.len() - old.len() + new.len());
    updated.push_str(&text[..pos]);
    updated.push_str(new);
    updated.push_str(&text[pos + old.len()..]);
    if let Err(out) = write_atomic(TOOL, path, updated.as_bytes()) {
        return out;
    }
    let line = 1 + memchr::memchr_iter(b'\n', &text.as_bytes()[..pos]).count();
    ToolOutput::ok(format!(
        "edited {}: replaced {} with {} starting at line {line}",
        path.display(),
        lines(old),
        lines(new)
    ))
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

// ----------------------------------------------------------------------------- list_dir

fn list_dir_sync(path: &Path, limit: usize) -> ToolOutput {
    const TOOL: &str = "list_dir";
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
    use super::super::{ToolLimits, run};
    use super::*;
    use serde_json::json;
    use tokio_util::sync::CancellationToken;

    fn ctx(dir: &Path) -> ToolContext {
        ToolContext {
            cwd: dir.to_path_buf(),
            cancel: CancellationToken::new(),
            limits: ToolLimits::default(),
            process_records: None,
        }
    }

    /// Names in `dir`, sorted.
    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

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
        File::create(dir.path().join("reference")).unwrap();
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

    #[test]
    fn overlapping_occurrences() {
        assert_eq!(occurrences("aaa", "aa"), (2, Some(0)));
        assert_eq!(occurrences("xaby", "ab"), (1, Some(1)));
        assert_eq!(occurrences("x", "ab"), (0, None));
        assert_eq!(occurrences("é€é", "é"), (2, Some(0)));
    }
}
