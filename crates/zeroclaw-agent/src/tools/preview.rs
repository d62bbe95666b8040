//! Previews for approvals: what a call would do, shown to the person asked to approve it
//! (`approval_request`'s `preview`). The file tools diff the file as it is against what the
//! call would leave ([`diff`]); `bash` shows its command and cwd. Everything here is bounded:
//! a file larger than [`MAX_FILE_BYTES`] is not diffed, the diff's computation has a
//! deadline, and its text is cut at [`MAX_LINES`] lines or [`MAX_BYTES`] bytes, the cut
//! stated (`omittedLines`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use similar::TextDiff;
use zeroclaw_protocol::events::ApprovalPreview;

/// The largest file (existing content or new content) a preview diffs.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// The most diff lines a preview carries.
pub const MAX_LINES: usize = 400;
/// The most diff bytes a preview carries (a line that would cross it is left out whole).
pub const MAX_BYTES: usize = 64 * 1024;
/// Lines of context around each change, as `diff -u`.
const CONTEXT: usize = 3;
/// After this long the diff algorithm gives up on a minimal diff and returns a coarser
/// (still correct) one: a preview must not hold the approval up.
const DIFF_TIMEOUT: Duration = Duration::from_secs(1);

/// Where a call would act, for its preview.
#[derive(Debug, Clone)]
pub struct PreviewAt {
    /// The session's working directory, where `bash` runs.
    pub cwd: PathBuf,
    /// The call's path resolved through symbolic links (`turn/target.rs`), when it has one.
    pub path: Option<PathBuf>,
}

/// `old` (`None`: the file does not exist) changed into `new`, at `path`, as a bounded
/// unified diff of hunks.
pub fn diff(path: &Path, old: Option<&str>, new: &str) -> ApprovalPreview {
    let text = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old.unwrap_or(""), new);
    let mut out = String::new();
    let (mut shown, mut omitted) = (0usize, 0u64);
    let mut push = |line: &str| {
        if omitted == 0 && shown < MAX_LINES && out.len() + line.len() < MAX_BYTES {
            out.push_str(line);
            shown += 1;
        } else {
            omitted += 1;
        }
    };
    let mut line = String::new();
    for hunk in text.unified_diff().context_radius(CONTEXT).iter_hunks() {
        line.clear();
        let _ = writeln!(line, "{}", hunk.header());
        push(&line);
        for change in hunk.iter_changes() {
            line.clear();
            let _ = write!(line, "{}{}", change.tag(), change.value());
            if change.missing_newline() {
                line.push_str("\n\\ No newline at end of file\n");
            }
            push(&line);
        }
    }
    ApprovalPreview::Diff {
        path: path.display().to_string(),
        created: old.is_none(),
        diff: out,
        omitted_lines: omitted,
    }
}

/// A preview that cannot be a diff, and why.
pub fn unavailable(path: &Path, reason: impl Into<String>) -> ApprovalPreview {
    ApprovalPreview::Unavailable {
        path: path.display().to_string(),
        reason: reason.into(),
    }
}

/// Runs a preview's file reading and diffing on the blocking pool, off the async reactor;
/// `None` if that task failed (a panic: no preview rather than no approval).
pub async fn blocking<F>(f: F) -> Option<ApprovalPreview>
where
    F: FnOnce() -> ApprovalPreview + Send + 'static,
{
    tokio::task::spawn_blocking(f).await.ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn text(preview: &ApprovalPreview) -> (&str, u64) {
        match preview {
            ApprovalPreview::Diff {
                diff,
                omitted_lines,
                ..
            } => (diff, *omitted_lines),
            other => panic!("not a diff: {other:?}"),
        }
    }

    #[test]
    fn a_change_is_a_hunk_with_three_lines_of_context_and_a_missing_newline_is_said() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
        let new = "1\n2\n3\n4\nfive\n6\n7\n8\n9";
        let preview = diff(Path::new("/w/f"), Some(old), new);
        assert_eq!(
            text(&preview),
            (
                "@@ -2,8 +2,8 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n-9\n+9\n\\ No newline at end of file\n",
                0
            )
        );
    }

    #[test]
    fn a_new_file_is_all_added_and_a_long_diff_is_cut_with_the_count_left_out() {
        let new: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let preview = diff(Path::new("/w/f"), None, &new);
        let (shown, omitted) = text(&preview);
        assert!(
            shown.starts_with("@@ -0,0 +1,1000 @@\n+line 0\n"),
            "{shown}"
        );
        assert_eq!(shown.lines().count(), MAX_LINES);
        assert_eq!(omitted as usize, 1001 - MAX_LINES);
        assert!(matches!(
            preview,
            ApprovalPreview::Diff { created: true, .. }
        ));

        let wide = "x".repeat(1000) + "\n";
        let new = wide.repeat(200);
        let preview = diff(Path::new("/w/f"), None, &new);
        let (shown, omitted) = text(&preview);
        assert!(shown.len() < MAX_BYTES);
        assert_eq!(shown.lines().count() as u64 + omitted, 201);
    }
}
