//! What a supervisor and Prometheus read (docs/service.md): `/healthz` (the gateway
//! answers, so the daemon's runtime is alive), `/readyz` (the daemon can serve: its store
//! answers, its doors listen, its provider was reachable when last called) and `/metrics`
//! (the daemon's metrics in the Prometheus text format). The two health routes need no
//! token and answer nothing private: fixed words, no path, error text or count. `/metrics`
//! needs a token (any scope: `read` is the least) unless `gateway.metrics_public` is set on
//! a loopback gateway.

use crate::auth::{Authed, Shared};
use crate::errors::ApiError;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// The OpenMetrics text format's media type, which Prometheus asks for and reads.
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// One check of `/readyz`, as the daemon reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Check {
    /// `store`, `doors`, `provider`.
    pub name: &'static str,
    /// `ok`, or one word saying what is wrong (`unavailable`, `unreachable`, `starting`).
    pub state: &'static str,
}

impl Check {
    pub fn ok(&self) -> bool {
        self.state == "ok"
    }
}

/// `GET /healthz`: 200 while the daemon's runtime answers.
pub async fn healthz() -> Response {
    (
        [(header::CACHE_CONTROL, "no-store")],
        axum::Json(json!({ "status": "alive" })),
    )
        .into_response()
}

/// `GET /readyz`: 200 when every check passes, else 503; the body names each check's state.
pub async fn readyz(State(app): State<Shared>) -> Response {
    let checks = app.backend.readiness().await;
    let ready = checks.iter().all(Check::ok);
    let body = json!({
        "status": if ready { "ready" } else { "unready" },
        "checks": checks.iter().map(|c| (c.name.to_owned(), json!(c.state))).collect::<serde_json::Map<_, _>>(),
    });
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (
        status,
        [(header::CACHE_CONTROL, "no-store")],
        axum::Json(body),
    )
        .into_response()
}

/// `GET /metrics`: the daemon's metrics, for a token of any scope (or anyone, when
/// `metrics_public` is on and the gateway is on loopback).
pub async fn metrics(State(app): State<Shared>, authed: Result<Authed, ApiError>) -> Response {
    // Every scope covers `read`, the least: any live token (or dashboard session) may read.
    if !app.metrics_public
        && let Err(refused) = authed
    {
        return refused.into_response();
    }
    match app.backend.metrics() {
        Ok(text) => (
            [
                (header::CONTENT_TYPE, OPENMETRICS),
                (header::CACHE_CONTROL, "no-store"),
            ],
            text,
        )
            .into_response(),
        Err(e) => ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            zeroclaw_protocol::codes::INTERNAL_ERROR,
            format!("the metrics could not be written: {e}"),
        )
        .into_response(),
    }
}
