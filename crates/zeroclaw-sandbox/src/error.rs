//! Why a policy could not be prepared: each variant says what is wrong and what to do.

use std::io;
use std::path::PathBuf;

/// A policy that cannot be enforced, or a failure while preparing it. Nothing was applied
/// anywhere when this is returned: the caller decides whether to refuse the command.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// This machine cannot enforce a sandbox (see [`crate::Support`]); only `full` runs.
    #[error("the sandbox is unavailable: {0}")]
    Unavailable(String),
    #[error("sandbox policy: the {what} must be an absolute path, not `{}`", path.display())]
    NotAbsolute { what: &'static str, path: PathBuf },
    #[error("sandbox policy: the working directory {} cannot be used: {source}", path.display())]
    Cwd { path: PathBuf, source: io::Error },
    #[error(
        "sandbox policy: the working directory {} is inside the daemon's own files (data dir, \
         config dir or socket), which sandboxed commands cannot see; choose another directory",
        path.display()
    )]
    CwdHidden { path: PathBuf },
    #[error("sandbox policy: the writable root {} cannot be used: {source}", path.display())]
    WritableRoot { path: PathBuf, source: io::Error },
    #[error(
        "sandbox policy: the writable root {} is inside the daemon's own files (data dir, config \
         dir or socket), which sandboxed commands can never write; remove it from writable_roots",
        path.display()
    )]
    WritableHidden { path: PathBuf },
    #[error(
        "sandbox policy: {} cannot be made writable: it is or holds {system}, which the sandbox \
         never lets commands write; use a narrower directory, or mode `read-only` or `full`",
        path.display()
    )]
    TooWide { path: PathBuf, system: &'static str },
    #[error(
        "sandbox policy: the hidden path {} does not exist, and a sandboxed command could create \
         it because it would be under the writable {}; create it before running commands",
        path.display(),
        writable.display()
    )]
    HiddenCreatable { path: PathBuf, writable: PathBuf },
    /// A system call in the parent failed while preparing (opening a path for a rule, the
    /// private temp dir, ...).
    #[error("the sandbox could not be prepared: {what}: {source}")]
    Setup { what: String, source: io::Error },
    /// The Landlock ruleset was refused by the kernel or the `landlock` crate.
    #[error("the sandbox could not be prepared: Landlock: {0}")]
    Landlock(String),
    /// The seccomp program could not be built.
    #[error("the sandbox could not be prepared: seccomp: {0}")]
    Seccomp(String),
}
