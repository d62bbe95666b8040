//! The web dashboard in a real browser: Debian's headless `chromium` driven over WebDriver
//! (`chromedriver`, through `fantoccini`) against the real daemon, its gateway on
//! 127.0.0.1:0 and the fake provider. One browser serves the whole binary (this file's
//! `main` replaces libtest's, so the browser starts once and is closed at the end, and
//! the tests run one after another in it); each test has its own daemon and signs in
//! with its own one-time link. Waits are on what the page shows, never on time.
//!
//! Without chromium or chromedriver the run fails under `CI=true` and is skipped, loudly,
//! otherwise. The browser tests run on Unix (the Windows build under Wine has no browser).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[cfg(unix)]
#[path = "../common/mod.rs"]
mod common;

#[cfg(unix)]
mod browser;
#[cfg(unix)]
mod page;

#[cfg(unix)]
mod approval_preview;
#[cfg(unix)]
mod approvals;
#[cfg(unix)]
mod checkpoints;
#[cfg(unix)]
mod csp;
#[cfg(unix)]
mod failed_prompt;
#[cfg(unix)]
mod images;
#[cfg(unix)]
mod keyboard;
#[cfg(unix)]
mod login;
#[cfg(unix)]
mod mcp;
#[cfg(unix)]
mod modes;
#[cfg(unix)]
mod output;
#[cfg(unix)]
mod plan;
#[cfg(unix)]
mod project;
#[cfg(unix)]
mod questions;
#[cfg(unix)]
mod reconnect;
#[cfg(unix)]
mod retries;
#[cfg(unix)]
mod runs;
#[cfg(unix)]
mod sandbox;
#[cfg(unix)]
mod sessions;
#[cfg(unix)]
mod steer;
#[cfg(unix)]
mod streaming;
#[cfg(unix)]
mod subagents;
#[cfg(unix)]
mod theme;
#[cfg(unix)]
mod untrusted;
#[cfg(unix)]
mod usage;

fn main() {
    #[cfg(unix)]
    browser::run(&[
        login::TESTS,
        csp::TESTS,
        project::TESTS,
        sessions::TESTS,
        failed_prompt::TESTS,
        streaming::TESTS,
        approvals::TESTS,
        steer::TESTS,
        keyboard::TESTS,
        output::TESTS,
        questions::TESTS,
        theme::TESTS,
        untrusted::TESTS,
        reconnect::TESTS,
        mcp::TESTS,
        runs::TESTS,
        approval_preview::TESTS,
        sandbox::TESTS,
        checkpoints::TESTS,
        plan::TESTS,
        modes::TESTS,
        subagents::TESTS,
        usage::TESTS,
        retries::TESTS,
        images::TESTS,
    ]);
    #[cfg(not(unix))]
    eprintln!("the dashboard's browser tests run on Unix only; skipped on this platform");
}
