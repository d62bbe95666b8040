//! The zeroclaw daemon.
//!
//! Layers, each knowing only the one below: [`daemon`] (listen, accept, stop) →
//! [`connection`] (the handshake gate) → [`methods`] (the method table) → the domain
//! ([`state`], [`clients`]).

pub mod clients;
pub mod config;
pub mod connection;
pub mod daemon;
pub mod methods;
pub mod state;

pub use daemon::{DaemonError, DaemonOptions, run};
