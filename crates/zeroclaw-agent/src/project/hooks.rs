//! Hooks (docs/project.md): commands the user configures for the agent's events, with
//! Claude Code's contract — the event as one JSON object on stdin, exit 2 blocks, JSON on
//! stdout may decide. This file holds the configuration (`[[hooks.EVENT]]` in config.toml
//! and in `<project>/.zeroclaw/hooks.toml`), the matching, one hook's run as a real child
//! process (the shell, in the session's cwd, its output captured within a bound and killed
//! with its process group at its time-out), and what its exit and output decide
//! ([`judge`], a pure function). The turn wires the events in (`turn/hooks.rs`).
//!
//! A hook is not sandboxed: it is the user's own command (config.toml) or one of a project
//! the user trusts (`trust.rs`), never chosen by the model, like a git hook; it gets the
//! daemon's environment without the scrubbed variables, as `bash` does.

use regex::Regex;
use serde::Deserialize;
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use zeroclaw_protocol::methods::HookInfo;

use super::{Files, Project};

/// A hook's time limit when `timeout_secs` is not given (Claude Code's too).
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;
/// The longest `timeout_secs` accepted.
pub const MAX_TIMEOUT_SECS: u64 = 3600;
/// Of each of a hook's streams, the first 64 KiB are kept; the rest is read and dropped,
/// so a hook that writes without end neither blocks on a full pipe nor grows the daemon.
pub const OUTPUT_CAP: usize = 64 * 1024;
/// A reason given to the model or shown to the user is cut to 4 KiB.
pub const MESSAGE_CAP: usize = 4096;
/// The project's hooks file, under its root.
pub const PROJECT_FILE: &str = ".zeroclaw/hooks.toml";
/// `hooks.toml` is read up to 256 KiB; a longer one is refused.
const PROJECT_FILE_CAP: usize = 256 * 1024;

/// The events a hook can be configured for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEvent {
    SessionStart,
    UserPromptSubmit,
    PreToolUse,
    PostToolUse,
    Stop,
    PreCompact,
}

impl HookEvent {
    pub const ALL: [HookEvent; 6] = [
        HookEvent::SessionStart,
        HookEvent::UserPromptSubmit,
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::Stop,
        HookEvent::PreCompact,
    ];

    /// As configured and as sent in `hook_event_name`.
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::Stop => "Stop",
            HookEvent::PreCompact => "PreCompact",
        }
    }

    /// Whether its stdout (plain text, or `additionalContext`) goes to the model.
    fn adds_context(self) -> bool {
        matches!(self, HookEvent::SessionStart | HookEvent::UserPromptSubmit)
    }
}

/// One `[[hooks.EVENT]]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookConfig {
    /// A regular expression on the tool name (`PreToolUse`, `PostToolUse`), on the source
    /// (`SessionStart`: `startup`, `resume`) or on the trigger (`PreCompact`: `manual`,
    /// `auto`), matched whole; absent, `""` or `"*"`: everything. Other events ignore it.
    #[serde(default)]
    pub matcher: Option<String>,
    /// Run by the shell (`sh -c`; `cmd /C` on Windows) in the session's cwd.
    pub command: String,
    #[serde(default = "default_timeout")]
    pub timeout_secs: u64,
}

fn default_timeout() -> u64 {
    DEFAULT_TIMEOUT_SECS
}

/// `[hooks]`: the entries of each event, in the order they run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "PascalCase")]
pub struct HooksConfig {
    pub session_start: Vec<HookConfig>,
    pub user_prompt_submit: Vec<HookConfig>,
    pub pre_tool_use: Vec<HookConfig>,
    pub post_tool_use: Vec<HookConfig>,
    pub stop: Vec<HookConfig>,
    pub pre_compact: Vec<HookConfig>,
}

impl HooksConfig {
    pub fn of(&self, event: HookEvent) -> &[HookConfig] {
        match event {
            HookEvent::SessionStart => &self.session_start,
            HookEvent::UserPromptSubmit => &self.user_prompt_submit,
            HookEvent::PreToolUse => &self.pre_tool_use,
            HookEvent::PostToolUse => &self.post_tool_use,
            HookEvent::Stop => &self.stop,
            HookEvent::PreCompact => &self.pre_compact,
        }
    }

    /// The first thing wrong with an entry, named `hooks.EVENT[i]`.
    pub fn problem(&self) -> Option<String> {
        for event in HookEvent::ALL {
            for (i, hook) in self.of(event).iter().enumerate() {
                if let Err(why) = Hook::new(event, hook.clone(), Source::User) {
                    return Some(format!("hooks.{}[{i}]: {why}", event.name()));
                }
            }
        }
        None
    }
}

/// Where a hook was configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// config.toml: always runs.
    User,
    /// `<project>/.zeroclaw/hooks.toml`: runs only in a trusted project.
    Project,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::User => "user",
            Source::Project => "project",
        }
    }
}

/// A hook ready to run: its entry, its matcher compiled.
#[derive(Debug, Clone)]
pub struct Hook {
    pub event: HookEvent,
    pub config: HookConfig,
    pub source: Source,
    /// `None`: matches everything.
    matcher: Option<Regex>,
}

impl Hook {
    pub fn new(event: HookEvent, config: HookConfig, source: Source) -> Result<Self, String> {
        if config.command.trim().is_empty() {
            return Err("`command` must not be empty".into());
        }
        if !(1..=MAX_TIMEOUT_SECS).contains(&config.timeout_secs) {
            return Err(format!(
                "`timeout_secs` must be between 1 and {MAX_TIMEOUT_SECS}, got {}",
                config.timeout_secs
            ));
        }
        let matcher = match config.matcher.as_deref() {
            None | Some("" | "*") => None,
            Some(m) => Some(
                Regex::new(&format!("^(?:{m})$"))
                    .map_err(|e| format!("`matcher` {m:?} is not a regular expression: {e}"))?,
            ),
        };
        Ok(Self {
            event,
            config,
            source,
            matcher,
        })
    }

    /// Whether it runs for `subject` (the tool name, the source or the trigger; `None` for
    /// the events that have none).
    pub fn matches(&self, subject: Option<&str>) -> bool {
        match (&self.matcher, subject) {
            (Some(m), Some(subject)) => m.is_match(subject),
            _ => true,
        }
    }

    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.config.timeout_secs)
    }
}

/// The hooks a session runs.
#[derive(Debug, Clone, Default)]
pub struct HookSet {
    hooks: Vec<Hook>,
}

impl HookSet {
    /// Those of `event` that match `subject`, in the order configured (the user's first).
    pub fn matching(&self, event: HookEvent, subject: Option<&str>) -> Vec<Hook> {
        self.hooks
            .iter()
            .filter(|h| h.event == event && h.matches(subject))
            .cloned()
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }
}

/// `hooks.toml` as written: the same `[[hooks.EVENT]]` tables as config.toml.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProjectFile {
    #[serde(default)]
    hooks: HooksConfig,
}

/// The session's hooks: the user's, then the project's if `trusted` (else listed as
/// skipped). A project file that cannot be read or parsed, or a bad entry in it, is a
/// warning and runs nothing of it (the user's config was checked when the daemon started).
pub fn load(
    project: &Project,
    files: &Files,
    user: &HooksConfig,
    trusted: bool,
    warnings: &mut Vec<String>,
) -> (HookSet, Vec<HookInfo>) {
    let mut set = HookSet::default();
    let mut infos = Vec::new();
    add(&mut set, &mut infos, user, Source::User, None, warnings);
    let path = project.root.join(PROJECT_FILE);
    if let Some(text) = files.read(&path, PROJECT_FILE_CAP) {
        if text.truncated {
            warnings.push(format!(
                "hooks {} skipped: it is over {} KiB",
                path.display(),
                PROJECT_FILE_CAP / 1024
            ));
        } else {
            match toml::from_str::<ProjectFile>(&text.text) {
                Ok(file) => {
                    let skipped = (!trusted).then(|| {
                        format!(
                            "the project {} is not trusted; run `zeroclaw trust {}` to let its hooks run",
                            project.root.display(),
                            project.root.display()
                        )
                    });
                    add(
                        &mut set,
                        &mut infos,
                        &file.hooks,
                        Source::Project,
                        skipped,
                        warnings,
                    );
                }
                Err(e) => {
                    warnings.push(format!("hooks {} skipped: {}", path.display(), e.message()))
                }
            }
        }
    }
    (set, infos)
}

fn add(
    set: &mut HookSet,
    infos: &mut Vec<HookInfo>,
    config: &HooksConfig,
    source: Source,
    skipped: Option<String>,
    warnings: &mut Vec<String>,
) {
    for event in HookEvent::ALL {
        for (i, entry) in config.of(event).iter().enumerate() {
            let mut skipped = skipped.clone();
            match Hook::new(event, entry.clone(), source) {
                Ok(hook) if skipped.is_none() => set.hooks.push(hook),
                Ok(_) => {}
                Err(why) => {
                    warnings.push(format!(
                        "{} hook {}[{i}] skipped: {why}",
                        source.name(),
                        event.name()
                    ));
                    skipped = Some(why);
                }
            }
            infos.push(HookInfo {
                event: event.name().to_owned(),
                matcher: entry.matcher.clone(),
                command: entry.command.clone(),
                timeout_secs: entry.timeout_secs,
                source: source.name().to_owned(),
                skipped,
            });
        }
    }
}

/// How one run ended.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Ran {
    /// `None` when it was killed or could not start.
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    /// Why it could not start (or how waiting for it failed).
    pub failed: Option<String>,
    /// At most [`OUTPUT_CAP`] bytes of each, invalid UTF-8 replaced.
    pub stdout: String,
    pub stderr: String,
    pub duration: Duration,
}

/// What the agent needs to run a hook.
pub struct RunIn<'a> {
    pub cwd: &'a Path,
    /// The project root, as `ZEROCLAW_PROJECT_DIR` (and `CLAUDE_PROJECT_DIR`, so Claude
    /// Code's scripts find it).
    pub project_root: &'a Path,
    /// The daemon's variables a hook does not inherit (`tools/scrub.rs`: the provider's
    /// key, `tools.scrub_env`).
    pub removed: &'a [std::ffi::OsString],
}

/// Runs `hook` with `input` on its stdin; never fails and never outlives its time-out: a
/// hook that does not end in time is killed with its process group (Unix) or job (Windows), its pipes let
/// go of even if a process that left the group still holds them.
pub async fn run(hook: &Hook, input: &Value, at: &RunIn<'_>) -> Ran {
    let started = Instant::now();
    let mut ran = run_child(hook, input, at).await;
    ran.duration = started.elapsed();
    ran
}

async fn run_child(hook: &Hook, input: &Value, at: &RunIn<'_>) -> Ran {
    let mut child = match spawn(&hook.config.command, at) {
        Ok(child) => child,
        Err(e) => {
            return Ran {
                failed: Some(format!("could not start: {e}")),
                ..Ran::default()
            };
        }
    };
    let mut group = GroupKill::of(&child);
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let payload = serde_json::to_vec(input).unwrap_or_default();
    let work = async {
        let feed = async {
            if let Some(mut stdin) = stdin {
                // A hook that does not read its input closes the pipe: not an error.
                let _ = stdin.write_all(&payload).await;
                let _ = stdin.shutdown().await;
            }
        };
        let (_, out, err, status) =
            tokio::join!(feed, read_capped(stdout), read_capped(stderr), child.wait());
        (out, err, status)
    };
    match tokio::time::timeout(hook.timeout(), work).await {
        Ok((stdout, stderr, status)) => {
            group.disarm();
            match status {
                Ok(status) => Ran {
                    exit_code: status.code(),
                    stdout,
                    stderr,
                    failed: status
                        .code()
                        .is_none()
                        .then(|| format!("ended by a signal ({status})")),
                    ..Ran::default()
                },
                Err(e) => Ran {
                    failed: Some(format!("could not be waited for: {e}")),
                    stdout,
                    stderr,
                    ..Ran::default()
                },
            }
        }
        Err(_) => {
            group.kill();
            let _ = child.start_kill();
            let _ = child.wait().await;
            group.disarm();
            Ran {
                timed_out: true,
                failed: Some(format!(
                    "killed after its timeout of {} s",
                    hook.config.timeout_secs
                )),
                ..Ran::default()
            }
        }
    }
}

#[cfg(unix)]
fn spawn(command: &str, at: &RunIn<'_>) -> std::io::Result<tokio::process::Child> {
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c").arg(command).process_group(0);
    configure(&mut cmd, at);
    cmd.spawn()
}

#[cfg(windows)]
fn spawn(command: &str, at: &RunIn<'_>) -> std::io::Result<tokio::process::Child> {
    let mut cmd = tokio::process::Command::new("cmd");
    cmd.arg("/C").raw_arg(command);
    configure(&mut cmd, at);
    cmd.spawn()
}

fn configure(cmd: &mut tokio::process::Command, at: &RunIn<'_>) {
    cmd.current_dir(at.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("ZEROCLAW_PROJECT_DIR", at.project_root)
        .env("CLAUDE_PROJECT_DIR", at.project_root)
        .kill_on_drop(true);
    for name in at.removed {
        cmd.env_remove(name);
    }
}

/// Reads a stream to its end, keeping its first [`OUTPUT_CAP`] bytes.
async fn read_capped(stream: Option<impl AsyncRead + Unpin>) -> String {
    let Some(mut stream) = stream else {
        return String::new();
    };
    let mut kept = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = OUTPUT_CAP.saturating_sub(kept.len()).min(n);
                kept.extend_from_slice(&buf[..room]);
            }
        }
    }
    String::from_utf8_lossy(&kept).into_owned()
}

/// Kills the hook's process group (Unix) or job (Windows, `process_tree.rs`) when it times out
/// or its run is dropped (the turn was cancelled), unless disarmed once the shell has been
/// reaped normally.
struct GroupKill {
    #[cfg(unix)]
    pgid: Option<rustix::process::Pid>,
    #[cfg(windows)]
    job: Option<crate::process_tree::Job>,
}

impl GroupKill {
    fn of(child: &tokio::process::Child) -> Self {
        #[cfg(unix)]
        {
            let pgid = child
                .id()
                .and_then(|id| i32::try_from(id).ok())
                .and_then(rustix::process::Pid::from_raw);
            Self { pgid }
        }
        #[cfg(windows)]
        {
            Self {
                job: crate::process_tree::Job::holding(child),
            }
        }
        #[cfg(not(any(unix, windows)))]
        {
            let _ = child;
            Self {}
        }
    }

    fn kill(&self) {
        #[cfg(unix)]
        if let Some(pgid) = self.pgid {
            let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
        }
        #[cfg(windows)]
        if let Some(job) = &self.job {
            job.kill();
        }
    }

    fn disarm(&mut self) {
        #[cfg(unix)]
        {
            self.pgid = None;
        }
        #[cfg(windows)]
        {
            self.job = None;
        }
    }
}

impl Drop for GroupKill {
    fn drop(&mut self) {
        self.kill();
    }
}

/// What a run decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Go on; `context` is what goes to the model (`SessionStart`, `UserPromptSubmit`).
    Continue { context: Option<String> },
    /// Exit 2, or `decision: "block"`: the call refused, the prompt rejected, the stop
    /// turned into one more step; the reason.
    Block(String),
    /// A `PreToolUse` `permissionDecision`: run without asking (never past the sandbox).
    Allow,
    /// Refuse the call, with the reason given to the model.
    Deny(String),
    /// Ask the user whatever the policy says.
    Ask,
    /// Another exit code, a time-out, a crash: shown to the user, never blocking.
    Error(String),
}

impl Verdict {
    /// The `outcome` of its `hook_result`.
    pub fn outcome(&self) -> &'static str {
        match self {
            Verdict::Continue { .. } => "continue",
            Verdict::Block(_) => "block",
            Verdict::Allow => "allow",
            Verdict::Deny(_) => "deny",
            Verdict::Ask => "ask",
            Verdict::Error(_) => "error",
        }
    }
}

/// What `ran` decides for `event`, as Claude Code reads it: exit 2 blocks with stderr;
/// another non-zero exit is an error; exit 0 with a JSON object on stdout may carry
/// `decision`/`reason` and `hookSpecificOutput` (`permissionDecision` and its reason for
/// `PreToolUse`, `additionalContext`); exit 0 with plain stdout adds it to the model's
/// context for the events that take context.
pub fn judge(event: HookEvent, ran: &Ran) -> Verdict {
    if let Some(why) = &ran.failed {
        let stderr = ran.stderr.trim();
        return Verdict::Error(cut(&if stderr.is_empty() {
            why.clone()
        } else {
            format!("{why}: {stderr}")
        }));
    }
    match ran.exit_code {
        Some(0) => {}
        Some(2) => {
            let stderr = ran.stderr.trim();
            return Verdict::Block(cut(if stderr.is_empty() {
                "blocked by a hook (exit 2, nothing on stderr)"
            } else {
                stderr
            }));
        }
        Some(code) => {
            let stderr = ran.stderr.trim();
            return Verdict::Error(cut(&if stderr.is_empty() {
                format!("exited with {code}")
            } else {
                format!("exited with {code}: {stderr}")
            }));
        }
        None => return Verdict::Error("ended without an exit code".into()),
    }
    let stdout = ran.stdout.trim();
    let json = stdout
        .starts_with('{')
        .then(|| serde_json::from_str::<Value>(stdout).ok())
        .flatten()
        .filter(Value::is_object);
    let Some(json) = json else {
        let context = (event.adds_context() && !stdout.is_empty()).then(|| stdout.to_owned());
        return Verdict::Continue { context };
    };
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
    let specific = json
        .get("hookSpecificOutput")
        .cloned()
        .unwrap_or(Value::Null);
    let reason = text(&json, "reason");
    if event == HookEvent::PreToolUse {
        let why = text(&specific, "permissionDecisionReason").or(reason.clone());
        let refused = |why: Option<String>| {
            Verdict::Deny(cut(
                &why.unwrap_or_else(|| "denied by a PreToolUse hook".into())
            ))
        };
        match specific.get("permissionDecision").and_then(Value::as_str) {
            Some("allow") => return Verdict::Allow,
            Some("deny") => return refused(why),
            Some("ask") => return Verdict::Ask,
            _ => {}
        }
        // The older form, which Claude Code still reads.
        match json.get("decision").and_then(Value::as_str) {
            Some("approve") => return Verdict::Allow,
            Some("block") => return refused(reason),
            _ => {}
        }
        return Verdict::Continue { context: None };
    }
    if json.get("decision").and_then(Value::as_str) == Some("block") {
        return Verdict::Block(cut(
            &reason.unwrap_or_else(|| format!("blocked by a {} hook", event.name()))
        ));
    }
    let context = event
        .adds_context()
        .then(|| text(&specific, "additionalContext"))
        .flatten()
        .filter(|c| !c.trim().is_empty());
    Verdict::Continue { context }
}

/// What the model is told when a `Stop` hook sends it back to work.
pub fn stop_feedback(command: &str, reason: &str) -> String {
    format!("[The Stop hook `{command}` did not let the turn end yet] {reason}")
}

/// A `UserPromptSubmit` hook's context, as added after the prompt.
pub fn prompt_context(command: &str, context: &str) -> String {
    format!("\n\n[Context from the UserPromptSubmit hook `{command}`]\n{context}")
}

/// A `PostToolUse` hook's reason, as added after the call's result.
pub fn post_tool_note(command: &str, reason: &str) -> String {
    format!("\n\n[The PostToolUse hook `{command}` says] {reason}")
}

/// `text` cut to [`MESSAGE_CAP`] bytes at a character boundary, the cut said.
fn cut(text: &str) -> String {
    if text.len() <= MESSAGE_CAP {
        return text.to_owned();
    }
    let mut end = MESSAGE_CAP;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{} [... cut at {MESSAGE_CAP} bytes]", &text[..end])
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn hook(matcher: Option<&str>) -> Result<Hook, String> {
        let config = HookConfig {
            matcher: matcher.map(str::to_owned),
            command: "true".into(),
            timeout_secs: 5,
        };
        Hook::new(HookEvent::PreToolUse, config, Source::User)
    }

    fn exited(code: i32, stdout: &str, stderr: &str) -> Ran {
        Ran {
            exit_code: Some(code),
            stdout: stdout.into(),
            stderr: stderr.into(),
            ..Ran::default()
        }
    }

    #[test]
    fn a_matcher_is_a_whole_match_regex_and_absent_or_star_matches_everything() {
        let either = hook(Some("bash|write_file")).unwrap();
        assert!(either.matches(Some("bash")) && either.matches(Some("write_file")));
        assert!(!either.matches(Some("bash_output")) && !either.matches(Some("read_file")));
        assert!(
            hook(Some("mcp__.*"))
                .unwrap()
                .matches(Some("mcp__git__log"))
        );
        for all in [None, Some(""), Some("*")] {
            assert!(hook(all).unwrap().matches(Some("anything")));
        }
        let err = hook(Some("(")).unwrap_err();
        assert!(err.contains("not a regular expression"), "{err}");
    }

    #[test]
    fn the_config_reads_claude_codes_event_names_and_refuses_bad_entries() {
        let config: HooksConfig = toml::from_str(
            "[[PreToolUse]]\nmatcher = \"bash\"\ncommand = \"./guard.sh\"\n\n[[Stop]]\ncommand = \"x\"\ntimeout_secs = 3\n",
        )
        .unwrap();
        assert_eq!(config.pre_tool_use[0].timeout_secs, DEFAULT_TIMEOUT_SECS);
        assert_eq!(config.stop[0].timeout_secs, 3);
        assert_eq!(config.problem(), None);
        assert!(toml::from_str::<HooksConfig>("[[PreTool]]\ncommand = \"x\"\n").is_err());
        let bad: HooksConfig = toml::from_str("[[Stop]]\ncommand = \" \"\n").unwrap();
        assert_eq!(
            bad.problem().unwrap(),
            "hooks.Stop[0]: `command` must not be empty"
        );
    }

    #[test]
    fn exit_codes_and_stdout_json_decide_as_in_claude_code() {
        use HookEvent::*;
        let rows: Vec<(HookEvent, Ran, Verdict)> = vec![
            (
                PreToolUse,
                exited(0, "", ""),
                Verdict::Continue { context: None },
            ),
            (
                PreToolUse,
                exited(2, "", "no rm\n"),
                Verdict::Block("no rm".into()),
            ),
            (
                Stop,
                exited(1, "", "oops"),
                Verdict::Error("exited with 1: oops".into()),
            ),
            (
                PreToolUse,
                exited(
                    0,
                    r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not here"}}"#,
                    "",
                ),
                Verdict::Deny("not here".into()),
            ),
            (
                PreToolUse,
                exited(
                    0,
                    r#"{"hookSpecificOutput":{"permissionDecision":"allow"}}"#,
                    "",
                ),
                Verdict::Allow,
            ),
            (
                PreToolUse,
                exited(
                    0,
                    r#"{"hookSpecificOutput":{"permissionDecision":"ask"}}"#,
                    "",
                ),
                Verdict::Ask,
            ),
            (
                PreToolUse,
                exited(0, r#"{"decision":"block","reason":"old form"}"#, ""),
                Verdict::Deny("old form".into()),
            ),
            (
                Stop,
                exited(0, r#"{"decision":"block","reason":"run the tests"}"#, ""),
                Verdict::Block("run the tests".into()),
            ),
            (
                UserPromptSubmit,
                exited(0, "the branch is main\n", ""),
                Verdict::Continue {
                    context: Some("the branch is main".into()),
                },
            ),
            (
                SessionStart,
                exited(
                    0,
                    r#"{"hookSpecificOutput":{"additionalContext":"ctx"}}"#,
                    "",
                ),
                Verdict::Continue {
                    context: Some("ctx".into()),
                },
            ),
            // Plain stdout is context only for the events that take it.
            (
                PostToolUse,
                exited(0, "formatted", ""),
                Verdict::Continue { context: None },
            ),
            // Not JSON after all: plain text.
            (
                UserPromptSubmit,
                exited(0, "{oops", ""),
                Verdict::Continue {
                    context: Some("{oops".into()),
                },
            ),
            (
                PreToolUse,
                Ran {
                    timed_out: true,
                    failed: Some("killed after its timeout of 1 s".into()),
                    ..Ran::default()
                },
                Verdict::Error("killed after its timeout of 1 s".into()),
            ),
        ];
        for (event, ran, want) in rows {
            assert_eq!(judge(event, &ran), want, "{event:?} {ran:?}");
        }
    }

    #[test]
    fn a_long_reason_is_cut_and_the_cut_said() {
        let long = "é".repeat(MESSAGE_CAP);
        let Verdict::Block(reason) = judge(HookEvent::Stop, &exited(2, "", &long)) else {
            panic!("not a block");
        };
        assert!(reason.len() < MESSAGE_CAP + 40 && reason.ends_with("bytes]"));
    }
}
