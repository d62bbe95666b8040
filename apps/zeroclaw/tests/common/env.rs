//! A daemon configured to talk to a fake provider, a working directory for its sessions,
//! and the `config.toml` that ties them together.

use super::{Daemon, Limits, TestDir};
use std::path::PathBuf;
use zeroclaw_testkit::FakeProvider;

/// The `[approvals]` table that lets bash run without asking.
pub const BASH_ALLOWED: &str = "[approvals]\nbash = \"allow\"";

/// The `config.toml`: the `[provider]` table (base_url, model "fake", and the defaults below
/// unless `provider` sets them) followed by `rest` (other tables).
pub fn provider_config(base_url: &str, provider: &str, rest: &str) -> String {
    let mut out = format!("[provider]\nbase_url = {base_url:?}\nmodel = \"fake\"\n");
    // Generous idle timeout: a stalled stream in these tests is ended by a cancel, a kill or
    // a signal, never by the timeout, unless the test sets one.
    for (key, default) in [
        ("idle_timeout_secs", "30"),
        ("max_retries", "0"),
        ("connect_timeout_secs", "5"),
    ] {
        if !provider
            .lines()
            .any(|l| l.trim_start().starts_with(&format!("{key} ")))
        {
            out.push_str(&format!("{key} = {default}\n"));
        }
    }
    out.push_str(provider);
    out.push('\n');
    out.push_str(rest);
    out.push('\n');
    out
}

/// A daemon configured to talk to a fake provider, and a working directory for sessions.
pub struct Env {
    // Field order is drop order: the daemon goes first, the temp dir last.
    pub daemon: Daemon,
    pub fake: FakeProvider,
    pub work: PathBuf,
    pub dir: TestDir,
}

impl Env {
    /// A daemon with these `[provider]` keys (see [`provider_config`]) and other tables.
    pub fn new(provider: &str, rest: &str) -> Self {
        Self::with_env(provider, rest, &[])
    }

    /// `new`, with these environment variables set for the daemon.
    pub fn with_env(provider: &str, rest: &str, vars: &[(&str, &str)]) -> Self {
        let fake = FakeProvider::start_blocking().unwrap();
        let url = fake.base_url();
        Self::build(fake, &url, provider, rest, vars, Limits::default())
    }

    /// `new`, with `limits` applied to the daemon process.
    pub fn limited(provider: &str, rest: &str, limits: Limits) -> Self {
        let fake = FakeProvider::start_blocking().unwrap();
        let url = fake.base_url();
        Self::build(fake, &url, provider, rest, &[], limits)
    }

    /// A daemon whose provider is at `base_url` (the fake provider is started but unused
    /// unless `base_url` is its own).
    pub fn at(base_url: &str, provider: &str, rest: &str) -> Self {
        let fake = FakeProvider::start_blocking().unwrap();
        Self::build(fake, base_url, provider, rest, &[], Limits::default())
    }

    fn build(
        fake: FakeProvider,
        base_url: &str,
        provider: &str,
        rest: &str,
        vars: &[(&str, &str)],
        limits: Limits,
    ) -> Self {
        let dir = TestDir::new();
        dir.write_config(&provider_config(base_url, provider, rest));
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        let daemon = dir.start_limited(&[], vars, limits);
        Self {
            daemon,
            fake,
            work,
            dir,
        }
    }

    /// Starts a turn whose bash command records its shell's pid and sleeps 300 s (bash must
    /// be allowed); returns the client, the prompt's request id, and the shell's pid once
    /// it runs.
    #[cfg(unix)]
    pub fn start_long_bash(&self) -> (super::Client, serde_json::Value, u32) {
        let pid_file = self.work.join("shell.pid");
        self.fake.push(super::bash_call(
            "call_long",
            &format!(
                "echo $$ > {}.tmp && mv {0}.tmp {0}; sleep 300",
                pid_file.display()
            ),
            2,
        ));
        let mut client = self.daemon.client();
        let session = client.new_session(&self.work);
        let prompt = client.start_prompt(&session, "run something long");
        (client, prompt, super::wait_for_pid_file(&pid_file))
    }

    /// Kills the daemon with SIGKILL and starts a new one on the same directory (without
    /// the first one's environment variables or limits).
    pub fn kill_and_restart(&mut self) {
        assert!(!self.daemon.kill().success());
        self.daemon = self.dir.start(&[]);
    }
}
