//! The client's file system: an editor holding unsaved buffers does the file tools' reads
//! and writes for them (`fs/read_text_file`, `fs/write_text_file`), so the agent sees what
//! the person sees and its edits land in the editor. The tools do not know how the request
//! travels: the turn provides a [`ClientFiles`] (`turn/client_files.rs`).
//!
//! An error from the client is the tool's error: there is no silent fallback to the disk.
//! The size limits still apply.

use std::fmt::Debug;
use std::path::Path;

use futures_util::future::BoxFuture;

use super::ToolOutput;
use super::text::utf8_head;

/// The file operations the client that prompted does for the tools.
pub trait ClientFiles: Send + Sync + Debug {
    /// Whether the client reads files (`read_file`, and `edit_file`'s read).
    fn reads(&self) -> bool;
    /// Whether the client writes files (`write_file`, and `edit_file`'s write).
    fn writes(&self) -> bool;
    /// The file's text as the client has it; the error is the client's message.
    fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<String, String>>;
    /// Replaces the file's text through the client.
    fn write<'a>(&'a self, path: &'a Path, content: &'a str) -> BoxFuture<'a, Result<(), String>>;
}

/// `tool`'s read of `path` through the client, or the tool's error saying the client failed.
pub(super) async fn read(
    tool: &str,
    files: &dyn ClientFiles,
    path: &Path,
) -> Result<String, ToolOutput> {
    files.read(path).await.map_err(|message| {
        ToolOutput::error(format!(
            "{tool}: the editor could not read {}: {message}",
            path.display()
        ))
    })
}

/// `tool`'s write of `path` through the client, or the tool's error.
pub(super) async fn write(
    tool: &str,
    files: &dyn ClientFiles,
    path: &Path,
    content: &str,
) -> Result<(), ToolOutput> {
    files.write(path, content).await.map_err(|message| {
        ToolOutput::error(format!(
            "{tool}: the editor could not write {}: {message}",
            path.display()
        ))
    })
}

/// `read_file`'s answer for a text the client gave: cut at `limit` bytes (on a character
/// boundary) with the note the disk read writes.
pub(super) fn read_file_answer(path: &Path, text: String, limit: usize) -> ToolOutput {
    if text.is_empty() {
        return ToolOutput::ok(format!("[{} is empty]", path.display()));
    }
    if text.len() <= limit {
        return ToolOutput::ok(text);
    }
    let keep = utf8_head(&text.as_bytes()[..limit]).len();
    let total = text.len();
    let mut out = text;
    out.truncate(keep);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&format!(
        "[... {} bytes cut: the file is {total} bytes and only the first {keep} are shown; \
         use bash (e.g. `tail -c +N` or `sed -n A,Bp`) to read the rest ...]",
        total - keep
    ));
    ToolOutput::ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_text_is_cut_at_the_limit_on_a_character_boundary() {
        let path = Path::new("/w/f");
        assert_eq!(
            read_file_answer(path, "abc".into(), 10),
            ToolOutput::ok("abc")
        );
        let out = read_file_answer(path, "€".repeat(100), 100);
        let (head, note) = out.text.split_once('\n').unwrap_or_default();
        assert_eq!(head, "€".repeat(33));
        assert!(note.starts_with("[... 201 bytes cut"), "{note}");
        assert!(
            read_file_answer(path, String::new(), 10)
                .text
                .contains("is empty")
        );
    }
}
