//! Sessions end to end: the real daemon, a scripted fake LLM provider on 127.0.0.1, and
//! NDJSON clients. One file per behaviour; one test binary for all of them, so the
//! dependencies are linked once (see the README's Layout).
//!
//! Steps are ordered by what the daemon reports (events, answers, its log) and by the
//! requests the fake provider records, never by sleeping. The only timeouts are the
//! configured ones a test is about (approval, ask_user, idle), and hang guards.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;

mod anthropic;
mod approvals;
mod ask_user;
mod backpressure;
mod cancel;
mod disconnects;
mod provider_errors;
mod replay;
mod restart;
mod session_methods;
mod streaming;
mod tools;
