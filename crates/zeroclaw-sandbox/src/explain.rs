//! Finding the sandbox's hand in a failed command's output.
//!
//! The kernel says only `EACCES`, `EROFS`, `EPERM` or (for sockets here) `EAFNOSUPPORT`, and
//! the program turns that into its own line. So each line is read for one of those errors'
//! texts and for the paths it names; a path is the sandbox's doing when the rules refuse it:
//!
//! - hidden (any of those errors, or `No such file or directory` or `Device or resource
//!   busy`: a covered directory looks empty and cannot be moved) → [`Refusal::Hidden`];
//! - a device outside the allowed ones → [`Refusal::Device`];
//! - outside the writable set, with a denial error, and either missing (a create) or
//!   readable by the command's user without capabilities (so reading it was allowed, and
//!   the denied access was a write) → [`Refusal::Write`]. A file whose permission bits deny
//!   that user a read was refused by them, not the sandbox, and is not explained.
//!
//! With the network off, a line with a socket or name-resolution error is
//! [`Refusal::Network`]; a denied `kill` or `ptrace` is [`Refusal::Process`]. Nothing found
//! means "not recognised", never "not the sandbox".

use std::path::Path;

use crate::Refusal;
use crate::check::{Checker, is_device, is_process_file};

/// Errors a denied file access shows as (`strerror` texts).
const DENIED: [&str; 4] = [
    "Permission denied",
    "Read-only file system",
    "Operation not permitted",
    "Invalid cross-device link",
];

/// What a hidden path looks like from inside a user namespace: its content is not there,
/// and the directory itself is a mount point that cannot be moved or removed. Explained
/// only for hidden paths.
/// (`Directory nonexistent` is dash's word for a missing directory on `>`.)
const COVERED: [&str; 3] = [
    "No such file or directory",
    "Directory nonexistent",
    "Device or resource busy",
];

/// What programs print when `socket()` fails with the sandbox's `EAFNOSUPPORT`, or when the
/// name lookup that needs a socket fails.
const NETWORK: [&str; 7] = [
    "Address family not supported by protocol",
    "Temporary failure in name resolution",
    "Could not resolve host",
    "Couldn't connect to server",
    "Network is unreachable",
    "Name or service not known",
    "Could not resolve hostname",
];

/// Signal and trace denials, recognised by the operation named (as a word) beside `EPERM`.
const PROCESS: [&str; 4] = ["kill", "ptrace", "attach", "signal"];

pub(crate) fn explain(checker: &Checker, network: bool, output: &str) -> Option<Refusal> {
    for line in output.lines() {
        if !network && NETWORK.iter().any(|m| line.contains(m)) {
            return Some(Refusal::Network);
        }
        if line.contains("Operation not permitted") && words(line).any(|w| PROCESS.contains(&w)) {
            return Some(Refusal::Process { path: None });
        }
        let denied = DENIED.iter().any(|m| line.contains(m));
        if !denied && !COVERED.iter().any(|m| line.contains(m)) {
            continue;
        }
        for word in paths_in(line) {
            let given = Path::new(word);
            let resolved = checker.resolve(given);
            if checker.is_hidden(given, &resolved) {
                return Some(Refusal::Hidden { path: resolved });
            }
            if !denied {
                continue;
            }
            if is_device(&resolved) {
                return Some(Refusal::Device { path: resolved });
            }
            if is_process_file(&resolved) {
                return Some(Refusal::Process {
                    path: Some(resolved),
                });
            }
            if let Err(refusal @ Refusal::Write { .. }) = checker.check_write(given)
                && readable_or_missing(&resolved)
            {
                return Some(refusal);
            }
        }
    }
    None
}

/// The words of `line` that may be paths: those with a `/` in them, and the bare name right
/// before an error text (`cannot create x: Permission denied`) or right after it
/// (`Permission denied: 'x'`), which is relative to the working directory.
fn paths_in(line: &str) -> Vec<&str> {
    let mut out: Vec<&str> = words(line)
        .filter(|w| w.contains('/') && !w.contains("://"))
        .collect();
    for marker in DENIED.iter().chain(COVERED.iter()) {
        let Some((before, after)) = line.split_once(marker) else {
            continue;
        };
        let beside = [
            before
                .trim_end()
                .strip_suffix(':')
                .and_then(|b| b.trim_end_matches(QUOTES).rsplit(' ').next())
                .and_then(|b| words(b).last()),
            after.strip_prefix(':').and_then(|a| words(a).next()),
        ];
        for word in beside.into_iter().flatten() {
            if !out.contains(&word) {
                out.push(word);
            }
        }
    }
    out
}

const QUOTES: &[char] = &['\'', '"', '`', '‘', '’', '“', '”'];

/// `line` split at spaces, quotes and the punctuation programs put around a path.
fn words(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| {
        c.is_whitespace()
            || QUOTES.contains(&c)
            || matches!(c, ':' | ',' | ';' | '(' | ')' | '[' | ']' | '<' | '>' | '=')
    })
    .map(|w| w.trim_end_matches('.'))
    .filter(|w| !w.is_empty())
}

/// Missing (the denied access was a create), or a file or directory the command could read
/// (so the sandbox let it read it, and what it refused was a write).
fn readable_or_missing(path: &Path) -> bool {
    match std::fs::symlink_metadata(path) {
        Err(_) => true,
        Ok(meta) if meta.is_dir() || meta.is_file() => readable_by_command(&meta),
        // Not a FIFO, a socket or a device: their errors are not the writable set's.
        Ok(_) => false,
    }
}

/// Whether the permission bits let this process's user read the file *without*
/// capabilities: a sandboxed command has none, so a root daemon must not count on its
/// `CAP_DAC_OVERRIDE` here.
#[cfg(target_os = "linux")]
fn readable_by_command(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: these calls cannot fail.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let mode = meta.mode();
    if meta.uid() == uid {
        mode & 0o400 != 0
    } else if meta.gid() == gid || in_groups(meta.gid()) {
        mode & 0o040 != 0
    } else {
        mode & 0o004 != 0
    }
}

#[cfg(target_os = "linux")]
fn in_groups(gid: u32) -> bool {
    let mut groups = [0 as libc::gid_t; 256];
    // SAFETY: the buffer holds 256 entries; the call writes at most that many.
    let n = unsafe { libc::getgroups(256, groups.as_mut_ptr()) };
    usize::try_from(n)
        .ok()
        .and_then(|n| groups.get(..n))
        .is_some_and(|g| g.contains(&gid))
}

#[cfg(not(target_os = "linux"))]
fn readable_by_command(_meta: &std::fs::Metadata) -> bool {
    true
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn paths_are_found_in_the_usual_error_formats() {
        let cases = [
            ("touch: cannot touch '/x/y': Permission denied", "/x/y"),
            ("sh: 1: cannot create /x/y: Permission denied", "/x/y"),
            (
                "mkdir: cannot create directory ‘/x/y’: Permission denied",
                "/x/y",
            ),
            (
                "PermissionError: [Errno 13] Permission denied: '/x/y'",
                "/x/y",
            ),
            ("bash: line 1: /x/y: Read-only file system", "/x/y"),
            (
                "sh: 1: cannot create inside.txt: Permission denied",
                "inside.txt",
            ),
            (
                "ln: failed to create symbolic link 'link': Permission denied",
                "link",
            ),
            ("PermissionError: [Errno 13] Permission denied: 'x'", "x"),
        ];
        for (line, path) in cases {
            assert_eq!(paths_in(line), vec![path], "{line}");
        }
    }
}
