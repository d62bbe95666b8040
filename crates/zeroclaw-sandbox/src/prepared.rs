//! One command's sandbox, made in the parent ([`Policy::prepare`], here beside what it
//! makes) and applied in the child.

use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::check::Checker;
use crate::plan::Plan;
use crate::{Error, Mode, Policy, Refusal, Support};

/// Everything one command's sandbox needs, prepared by [`Policy::prepare`]: install it on
/// the command, spawn, and keep it until the command has exited (it owns the private temp
/// dir, removed on drop). One `Prepared` may be installed on several commands; each then
/// shares its temp dir.
#[derive(Debug)]
pub struct Prepared {
    mode: Mode,
    network: bool,
    cwd: PathBuf,
    mechanism: String,
    checker: Checker,
    temp: Option<tempfile::TempDir>,
    #[cfg(target_os = "linux")]
    setup: Option<std::sync::Arc<crate::linux::Setup>>,
}

impl Policy {
    /// Everything one command needs, made in the calling (parent) process: the private temp
    /// dir, and on Linux the opened paths, the Landlock ruleset, the seccomp programs and
    /// the namespace setup. Nothing is applied to the caller. Mode `full` needs no support
    /// and prepares nothing; any other mode fails with [`Error::Unavailable`] where
    /// `support` is unavailable.
    pub fn prepare(&self, support: &Support) -> Result<Prepared, Error> {
        Prepared::new(self, support)
    }
}

impl Prepared {
    fn new(policy: &Policy, support: &Support) -> Result<Prepared, Error> {
        if policy.mode == Mode::Full {
            return Ok(Prepared {
                mode: Mode::Full,
                network: true,
                cwd: policy.cwd.clone(),
                mechanism: "none".into(),
                checker: policy.checker(),
                temp: None,
                #[cfg(target_os = "linux")]
                setup: None,
            });
        }
        if let Some(reason) = support.unavailable_reason() {
            return Err(Error::Unavailable(reason.to_string()));
        }
        let temp = tempfile::Builder::new()
            .prefix("zeroclaw-sandbox-")
            .tempdir()
            .map_err(|source| Error::Setup {
                what: "creating the command's private temp dir".into(),
                source,
            })?;
        let plan = Plan::new(policy, temp.path())?;
        #[cfg(target_os = "linux")]
        let setup = Some(std::sync::Arc::new(crate::linux::Setup::new(
            &plan, support,
        )?));
        let checker = policy.checker().with_writable(temp.path());
        Ok(Prepared {
            mode: plan.mode,
            network: plan.network,
            cwd: plan.cwd,
            mechanism: support.mechanism(),
            checker,
            temp: Some(temp),
            #[cfg(target_os = "linux")]
            setup,
        })
    }

    /// The mode in force.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Whether the command may use the network (always in mode `full`).
    pub fn network(&self) -> bool {
        self.network
    }

    /// How the sandbox is enforced: [`Support::mechanism`], or `none` in mode `full`.
    pub fn mechanism(&self) -> &str {
        &self.mechanism
    }

    /// The command's private temp dir (`$TMPDIR`, `$TMP`, `$TEMP`), writable in every
    /// sandboxed mode; `None` in mode `full`.
    pub fn temp_dir(&self) -> Option<&Path> {
        self.temp.as_ref().map(|t| t.path())
    }

    /// Sets up `cmd` to run in this sandbox: its working directory (the policy's, resolved),
    /// the temp dir variables, and (Linux) a `pre_exec` hook that applies the sandbox in the
    /// child between fork and exec, with only system calls on data made here. For a
    /// `tokio::process::Command`, pass `cmd.as_std_mut()`. In mode `full` only the working
    /// directory is set.
    ///
    /// Install it before other `pre_exec` hooks that should run confined (hooks run in the
    /// order they were added, after std's `chdir` and `setpgid` (`process_group(0)`)).
    pub fn install(&self, cmd: &mut Command) {
        cmd.current_dir(&self.cwd);
        if let Some(temp) = &self.temp {
            for var in ["TMPDIR", "TMP", "TEMP"] {
                cmd.env(var, temp.path());
            }
        }
        #[cfg(target_os = "linux")]
        if let Some(setup) = &self.setup {
            use std::os::unix::process::CommandExt;
            let setup = std::sync::Arc::clone(setup);
            // SAFETY: the hook runs in the forked child of a possibly multi-threaded parent,
            // where only async-signal-safe calls are allowed: `Setup::apply` makes raw system
            // calls on memory prepared here and never allocates or takes a lock.
            unsafe {
                cmd.pre_exec(move || setup.apply());
            }
        }
    }

    /// Why a failed command may have failed because of the sandbox, read from its output
    /// (stderr, or stdout and stderr together): the first recognised refusal, with the same
    /// words as the file tools' checks. `None` in mode `full`, or when nothing is recognised.
    /// See the `explain` module for the rules.
    pub fn explain(&self, output: &str) -> Option<Refusal> {
        if self.mode == Mode::Full {
            return None;
        }
        crate::explain::explain(&self.checker, self.network, output)
    }

    #[cfg(target_os = "linux")]
    pub(crate) fn setup(&self) -> Option<&crate::linux::Setup> {
        self.setup.as_deref()
    }

    /// The in-process checks of this command's policy, its temp dir counted as writable.
    pub fn checker(&self) -> &Checker {
        &self.checker
    }

    /// Turns the error of a `spawn` that failed into one that names the sandbox step that
    /// failed in the child, when it was one (the child can report only an errno).
    pub fn spawn_error(&self, error: io::Error) -> io::Error {
        #[cfg(target_os = "linux")]
        if let Some(setup) = &self.setup
            && let Some(step) = setup.failed_step()
        {
            return io::Error::new(
                error.kind(),
                format!("the sandbox could not be applied to the command ({step}): {error}"),
            );
        }
        error
    }
}
