//! The HTTP/WS gateway end to end: the real daemon with its gateway on 127.0.0.1:0, real
//! HTTP (reqwest) and WebSocket (tokio-tungstenite) clients, tokens minted over the socket.
//! One file per behaviour, one test binary. Ordered by answers, events and the daemon's
//! log, never by sleeping.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;

mod harness;

mod cli;
mod config_values;
mod connections;
mod dashboard_open;
mod dashboard_session;
mod direct_calls;
mod hosts;
mod images;
mod limits;
mod login;
mod rest;
mod scopes;
mod service;
mod session_expiry;
mod sse;
mod steer_and_resolved;
mod tls;
mod websocket;
