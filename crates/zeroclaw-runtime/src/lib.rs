//! The zeroclaw daemon.
//!
//! Layers, each knowing only the one below: [`daemon`] (listen, accept, stop) →
//! [`connection`] (the handshake gate) → [`methods`] (the method table) → the domain:
//! [`session`] (who is attached, which turn runs) → [`turn`] (the agent loop) →
//! [`provider`], [`tools`] and [`store`].

pub mod audience;
pub mod clients;
pub mod config;
pub mod connection;
pub mod daemon;
pub mod history;
pub mod methods;
pub mod provider;
pub mod session;
pub mod state;
pub mod store;
pub mod tools;
pub mod turn;

pub use daemon::{DaemonError, DaemonOptions, run};
