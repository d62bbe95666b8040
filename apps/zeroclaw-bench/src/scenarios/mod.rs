//! The scenarios, one file each: how a figure is measured, the same way on the floor and on
//! the daemon (the same client code; rounds alternate which goes first, so noise on a shared
//! machine hits both alike), and the rows it adds to the report. `run.rs` runs the selected
//! ones; what they share is here.

pub mod checkpoints;
pub mod clients;
pub mod gateway;
pub mod growth;
pub mod memory;
pub mod pipelined;
pub mod round_trip;
pub mod sandbox;
pub mod startup;
pub mod streaming;

use crate::procs::Kind;
use crate::report::thousands;
use std::io;
use std::time::Duration;

/// The text of every streamed chunk (about one token).
const CHUNK: &str = "tok ";
/// Pause before reading RSS, so the servers have finished reacting to what just happened.
const SETTLE: Duration = Duration::from_millis(300);

/// `n` and the noun, plural unless `n` is 1.
pub fn count(n: usize, noun: &str) -> String {
    format!(
        "{} {noun}{}",
        thousands(n as u64),
        if n == 1 { "" } else { "s" }
    )
}

pub fn progress(what: impl AsRef<str>) {
    eprintln!("zeroclaw-bench: {}", what.as_ref());
}

/// Floor first on even rounds, the daemon first on odd ones.
pub fn order(round: usize) -> [Kind; 2] {
    if round.is_multiple_of(2) {
        [Kind::Floor, Kind::Daemon]
    } else {
        [Kind::Daemon, Kind::Floor]
    }
}

pub fn slot(kind: Kind) -> usize {
    match kind {
        Kind::Floor => 0,
        Kind::Daemon => 1,
    }
}

pub fn spread(values: &[f64], unit: &str) -> Option<String> {
    if values.len() < 2 {
        return None;
    }
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some(format!(
        "{}–{}{unit} over {} rounds",
        thousands(min.round() as u64),
        thousands(max.round() as u64),
        values.len()
    ))
}

pub fn ctx(what: &str) -> impl Fn(io::Error) -> String + '_ {
    move |e| format!("{what}: {e}")
}

pub fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}
