//! Independent readings of the protocol's rules, to check the implementation against.
//! Each file is also included by path (`#[path]`) by the fuzz target that checks the same
//! rule, so the property tests and the fuzzer judge by one oracle; a file therefore uses
//! nothing but `zeroclaw-rpc`, `serde_json` and `bytes`, which both crates depend on.

pub mod envelope;
pub mod framing;
