//! Running the `git` binary against a shadow repository, and nothing else.
//!
//! Every command gets a clean environment: nothing `GIT_*` from the daemon, no system or
//! global config (so the user's aliases, hooks, fsmonitor, filters, credential helpers and
//! `safe.directory` rules never apply), `HOME` and `XDG_CONFIG_HOME` pointed at an empty
//! directory, and the settings below on the command line so that even an edited shadow
//! config cannot turn them off. `GIT_DIR` is always the shadow repository, so the user's
//! own `.git` is never opened as a repository.

use std::ffi::{OsStr, OsString};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};

use crate::error::{Error, bounded};

/// The oldest git this works with (2020): everything used is older than that.
const MIN_VERSION: (u32, u32) = (2, 25);

/// Variables kept from the daemon's environment: what a process needs to start and to
/// find git's helpers. Everything else is dropped.
#[cfg(unix)]
const KEPT: &[&str] = &["PATH", "TMPDIR"];
#[cfg(not(unix))]
const KEPT: &[&str] = &[
    "PATH",
    "PATHEXT",
    "SYSTEMROOT",
    "SystemRoot",
    "WINDIR",
    "TEMP",
    "TMP",
    "COMSPEC",
];

#[derive(Debug)]
pub(crate) struct Git {
    program: PathBuf,
    version: String,
    env: Vec<(OsString, OsString)>,
    config: Vec<OsString>,
}

/// Where a command runs: the shadow repository, its index, and (for commands that look at
/// files) the work tree.
#[derive(Debug, Clone)]
pub(crate) struct Context {
    pub git_dir: PathBuf,
    pub index: PathBuf,
    pub work_tree: Option<PathBuf>,
}

/// What the engine's root provides for every command.
pub(crate) struct Setup<'a> {
    /// An empty directory: `HOME`, `XDG_CONFIG_HOME`, `core.hooksPath`, the init template.
    pub empty_dir: &'a Path,
    /// An empty file: the global config and attributes file.
    pub empty_file: &'a Path,
    /// The user's global excludes file (`core.excludesFile`), read but never written.
    pub excludes_file: &'a Path,
}

impl Git {
    /// Finds git and checks its version; `Error::Unavailable` when it cannot be run.
    pub(crate) fn probe(program: &Path, setup: &Setup<'_>) -> Result<Self, Error> {
        let mut git = Self {
            program: program.to_path_buf(),
            version: String::new(),
            env: base_env(setup),
            config: base_config(setup),
        };
        let out = git
            .bare_command()
            .arg("--version")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| unavailable(program, &e))?;
        if !out.status.success() {
            return Err(Error::Unavailable {
                reason: format!(
                    "`{} --version` failed ({}): {}",
                    program.display(),
                    out.status,
                    bounded(&out.stderr)
                ),
            });
        }
        let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
        match parse_version(&text) {
            Some(v) if v >= MIN_VERSION => {}
            _ => {
                return Err(Error::Unavailable {
                    reason: format!(
                        "{} reports {text:?}; git {}.{} or newer is needed",
                        program.display(),
                        MIN_VERSION.0,
                        MIN_VERSION.1
                    ),
                });
            }
        }
        git.version = text;
        Ok(git)
    }

    pub(crate) fn version(&self) -> &str {
        &self.version
    }

    /// Whether this git is version `major.minor` or later.
    pub(crate) fn at_least(&self, major: u32, minor: u32) -> bool {
        parse_version(&self.version).is_some_and(|v| v >= (major, minor))
    }

    /// The user's global excludes file as their own git config names it (`core.excludesFile`
    /// in `~/.gitconfig`), else git's default `$XDG_CONFIG_HOME/git/ignore`. Reading config
    /// runs nothing the user configured.
    pub(crate) fn user_excludes_file(program: &Path) -> Option<PathBuf> {
        let home = std::env::var_os("HOME").or_else(|| std::env::var_os("USERPROFILE"));
        let xdg = std::env::var_os("XDG_CONFIG_HOME");
        let mut cmd = Command::new(program);
        cmd.env_clear();
        for (k, v) in kept_env() {
            cmd.env(k, v);
        }
        if let Some(home) = &home {
            cmd.env("HOME", home);
        }
        if let Some(xdg) = &xdg {
            cmd.env("XDG_CONFIG_HOME", xdg);
        }
        cmd.env("GIT_CONFIG_NOSYSTEM", "1")
            .args(["config", "--global", "--path", "--get", "core.excludesFile"])
            .stdin(Stdio::null())
            .stderr(Stdio::null());
        no_window(&mut cmd);
        if let Ok(out) = cmd.output()
            && out.status.success()
        {
            let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if !text.is_empty() {
                return Some(PathBuf::from(text));
            }
        }
        let config = match xdg {
            Some(xdg) if !xdg.is_empty() => PathBuf::from(xdg),
            _ => PathBuf::from(home?).join(".config"),
        };
        Some(config.join("git").join("ignore"))
    }

    fn bare_command(&self) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.env_clear();
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        no_window(&mut cmd);
        cmd
    }

    /// A git command in `ctx`, with our settings; stdout and stderr piped, stdin closed.
    pub(crate) fn command<I, S>(&self, ctx: &Context, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = self.bare_command();
        cmd.env("GIT_DIR", &ctx.git_dir)
            .env("GIT_INDEX_FILE", &ctx.index)
            .env("GIT_LITERAL_PATHSPECS", "1");
        match &ctx.work_tree {
            Some(tree) => {
                cmd.env("GIT_WORK_TREE", tree).current_dir(tree);
            }
            None => {
                cmd.current_dir(&ctx.git_dir);
            }
        }
        for c in &self.config {
            cmd.arg("-c").arg(c);
        }
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// Runs a command to the end and returns its stdout; `input` goes to its stdin.
    pub(crate) fn run<I, S>(
        &self,
        ctx: &Context,
        args: I,
        input: Option<&[u8]>,
    ) -> Result<Vec<u8>, Error>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let (name, out) = self.output(ctx, args, input)?;
        if !out.status.success() {
            return Err(failure(&name, out.status, &out.stderr, ctx));
        }
        Ok(out.stdout)
    }

    /// Runs a command to the end and returns its exit status and output whatever the
    /// status: for the commands whose exit code is an answer (`check-ignore`).
    pub(crate) fn output<I, S>(
        &self,
        ctx: &Context,
        args: I,
        input: Option<&[u8]>,
    ) -> Result<(String, std::process::Output), Error>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<OsString> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
        let name = command_name(&args);
        let out = self.execute(self.command(ctx, &args), input)?;
        Ok((name, out))
    }

    /// Runs a prepared command (from `command`) to the end, feeding it `input`.
    pub(crate) fn execute(
        &self,
        mut cmd: Command,
        input: Option<&[u8]>,
    ) -> Result<std::process::Output, Error> {
        if input.is_some() {
            cmd.stdin(Stdio::piped());
        }
        let mut child = cmd.spawn().map_err(|e| self.spawn_error(&e))?;
        let stdin = child.stdin.take();
        std::thread::scope(|scope| {
            if let (Some(mut stdin), Some(input)) = (stdin, input) {
                // A failed write means git exited early; its status and stderr say why.
                scope.spawn(move || {
                    let _ = stdin.write_all(input);
                });
            }
            child.wait_with_output()
        })
        .map_err(|e| Error::io("wait for git", &self.program, e))
    }

    /// Starts a command whose output is read as it comes (`Stream`).
    pub(crate) fn stream<I, S>(&self, ctx: &Context, args: I) -> Result<Stream, Error>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<OsString> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
        let name = command_name(&args);
        let mut child = self
            .command(ctx, &args)
            .spawn()
            .map_err(|e| self.spawn_error(&e))?;
        let stderr = child.stderr.take().map(|err| {
            std::thread::spawn(move || {
                let mut kept = Vec::new();
                let mut reader = err;
                let _ = (&mut reader)
                    .take(crate::error::STDERR_LIMIT as u64 + 1)
                    .read_to_end(&mut kept);
                // Drain the rest so git never blocks on a full pipe.
                let _ = std::io::copy(&mut reader, &mut std::io::sink());
                kept
            })
        });
        let stdout = child.stdout.take().map(BufReader::new);
        Ok(Stream {
            name,
            child,
            stdout,
            stderr,
            ctx: ctx.clone(),
        })
    }

    fn spawn_error(&self, e: &std::io::Error) -> Error {
        unavailable(&self.program, e)
    }
}

/// A running git command whose stdout is read record by record (NUL-terminated).
pub(crate) struct Stream {
    name: String,
    child: Child,
    stdout: Option<BufReader<std::process::ChildStdout>>,
    stderr: Option<std::thread::JoinHandle<Vec<u8>>>,
    ctx: Context,
}

impl Stream {
    /// The next NUL-terminated record (without its NUL), or `None` at the end.
    pub(crate) fn next_record(&mut self, buf: &mut Vec<u8>) -> Result<bool, Error> {
        buf.clear();
        let Some(out) = self.stdout.as_mut() else {
            return Ok(false);
        };
        let n = out
            .read_until(0, buf)
            .map_err(|e| Error::io("read the output of git", &self.ctx.git_dir, e))?;
        if n == 0 {
            return Ok(false);
        }
        if buf.last() == Some(&0) {
            buf.pop();
        }
        Ok(true)
    }

    /// Waits for the command and turns a failure into an error.
    pub(crate) fn finish(mut self) -> Result<(), Error> {
        if let Some(mut out) = self.stdout.take() {
            let _ = std::io::copy(&mut out, &mut std::io::sink());
        }
        let status = self
            .child
            .wait()
            .map_err(|e| Error::io("wait for git", &self.ctx.git_dir, e))?;
        let stderr = self
            .stderr
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        if status.success() {
            Ok(())
        } else {
            Err(failure(&self.name, status, &stderr, &self.ctx))
        }
    }

    /// Stops the command early (its output is no longer wanted).
    pub(crate) fn abandon(mut self) {
        let _ = self.child.kill();
        drop(self.stdout.take());
        let _ = self.child.wait();
        if let Some(h) = self.stderr.take() {
            let _ = h.join();
        }
    }
}

/// Strings in git's stderr that mean the shadow repository itself is damaged, as opposed to
/// a file of the workspace that could not be read.
const CORRUPTION: &[&str] = &[
    "not a git repository",
    "is corrupt",
    "corrupt loose object",
    "bad object",
    "invalid object",
    "unable to read tree",
    "missing blob",
    "missing tree",
    "bad signature",
    "index file smaller than expected",
    "index file corrupt",
    "unknown index entry format",
    "packfile",
    "bad packed object",
    "unable to read sha1 file",
    "bad config",
    "bad numeric config",
];

/// Whether a corruption message is about the index alone (a cache we can rebuild).
pub(crate) fn is_index_damage(detail: &str) -> bool {
    detail.contains("index file")
        || detail.contains("bad signature")
        || detail.contains("index entry")
}

pub(crate) fn failure(name: &str, status: ExitStatus, stderr: &[u8], ctx: &Context) -> Error {
    let text = bounded(stderr);
    let lower = text.to_ascii_lowercase();
    if CORRUPTION.iter().any(|m| lower.contains(m)) {
        return Error::Corrupt {
            repo: ctx.git_dir.clone(),
            detail: format!("git {name}: {text}"),
        };
    }
    Error::Git {
        command: name.to_string(),
        status: status.to_string(),
        stderr: text,
    }
}

fn unavailable(program: &Path, e: &std::io::Error) -> Error {
    let reason = if e.kind() == std::io::ErrorKind::NotFound {
        format!(
            "git was not found (looked for {:?}); install git to enable checkpoints",
            program
        )
    } else {
        format!("git ({}) could not be started: {e}", program.display())
    };
    Error::Unavailable { reason }
}

/// The subcommand, for messages: the first argument that is not an option.
fn command_name(args: &[OsString]) -> String {
    args.iter()
        .map(|a| a.to_string_lossy())
        .find(|a| !a.starts_with('-'))
        .map(|a| a.into_owned())
        .unwrap_or_else(|| "git".to_string())
}

fn kept_env() -> Vec<(OsString, OsString)> {
    KEPT.iter()
        .filter_map(|k| std::env::var_os(k).map(|v| (OsString::from(k), v)))
        .collect()
}

fn base_env(setup: &Setup<'_>) -> Vec<(OsString, OsString)> {
    let mut env = kept_env();
    let set = |env: &mut Vec<(OsString, OsString)>, k: &str, v: &OsStr| {
        env.push((OsString::from(k), v.to_owned()));
    };
    set(&mut env, "LC_ALL", OsStr::new("C"));
    set(&mut env, "LANG", OsStr::new("C"));
    set(&mut env, "HOME", setup.empty_dir.as_os_str());
    set(&mut env, "XDG_CONFIG_HOME", setup.empty_dir.as_os_str());
    set(&mut env, "GIT_CONFIG_NOSYSTEM", OsStr::new("1"));
    set(&mut env, "GIT_CONFIG_GLOBAL", setup.empty_file.as_os_str());
    set(&mut env, "GIT_ATTR_NOSYSTEM", OsStr::new("1"));
    set(&mut env, "GIT_TERMINAL_PROMPT", OsStr::new("0"));
    set(&mut env, "GIT_NO_REPLACE_OBJECTS", OsStr::new("1"));
    env
}

fn base_config(setup: &Setup<'_>) -> Vec<OsString> {
    let path = |key: &str, p: &Path| {
        let mut s = OsString::from(key);
        s.push("=");
        s.push(p.as_os_str());
        s
    };
    let mut config = vec![
        path("core.hooksPath", setup.empty_dir),
        path("core.attributesFile", setup.empty_file),
        path("core.excludesFile", setup.excludes_file),
    ];
    let fixed: &[&str] = &[
        "core.fsmonitor=false",
        "core.untrackedCache=false",
        "core.splitIndex=false",
        "core.sparseCheckout=false",
        "core.autocrlf=false",
        "core.safecrlf=false",
        "core.ignoreCase=false",
        "core.logAllRefUpdates=false",
        "core.quotePath=false",
        "core.commitGraph=false",
        // A smaller index (paths prefix-compressed), written without hashing it whole:
        // it is rewritten twice per snapshot and is only a cache (a damaged one is rebuilt).
        "index.version=4",
        "index.skipHash=true",
        "gc.auto=0",
        "gc.autoDetach=false",
        "maintenance.auto=false",
        "safe.directory=*",
        #[cfg(unix)]
        "core.fileMode=true",
        #[cfg(unix)]
        "core.symlinks=true",
        #[cfg(not(unix))]
        "core.fileMode=false",
    ];
    config.extend(fixed.iter().map(OsString::from));
    config
}

fn parse_version(text: &str) -> Option<(u32, u32)> {
    let rest = text.strip_prefix("git version ")?;
    let mut parts = rest.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

#[cfg(windows)]
fn no_window(cmd: &mut Command) {
    use std::os::windows::process::CommandExt;
    const CREATE_NO_WINDOW: u32 = 0x0800_0000;
    cmd.creation_flags(CREATE_NO_WINDOW);
}

#[cfg(not(windows))]
fn no_window(_cmd: &mut Command) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_from_every_platform_s_banner() {
        assert_eq!(parse_version("git version 2.47.3"), Some((2, 47)));
        assert_eq!(parse_version("git version 2.45.1.windows.1"), Some((2, 45)));
        assert_eq!(
            parse_version("git version 2.39.5 (Apple Git-154)"),
            Some((2, 39))
        );
        assert_eq!(parse_version("hub version 2"), None);
    }
}
