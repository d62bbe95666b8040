//! The daemon's metrics, served by the gateway at `/metrics` in the Prometheus text format
//! (OpenMetrics 1.0, which Prometheus reads), with `prometheus-client`, the Prometheus
//! project's own Rust client. docs/service.md lists every metric with its type and labels;
//! a test keeps that table equal to what is registered here.
//!
//! Counters and histograms are moved where things happen (a door admits a connection, the
//! gate answers a request, a turn calls its model or a tool); gauges that are a count of
//! state (sessions loaded, turns running, approvals waiting, the store's size) are read at
//! scrape time, so they are never out of step.
//!
//! Labels are bounded: `method` is a name of the method table or `other`, `door`,
//! `outcome` and `kind` are fixed words, `tool` a tool's name (the built-in tools and the
//! configured MCP servers' tools).

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::sync::atomic::AtomicU64;

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Door {
    door: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Request {
    method: &'static str,
    outcome: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Method {
    method: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Tool {
    tool: String,
    outcome: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Kind {
    kind: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Outcome {
    outcome: &'static str,
}

/// The state gauges, read at scrape time.
#[derive(Debug, Default, Clone, Copy)]
pub struct Snapshot {
    pub sessions_loaded: i64,
    pub turns_running: i64,
    pub approvals_waiting: i64,
    pub clients: i64,
    /// The database file and its WAL, in bytes.
    pub store_bytes: i64,
}

/// Every metric of one daemon, and the registry that encodes them.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    connections: Family<Door, Counter>,
    connections_open: Family<Door, Gauge>,
    requests: Family<Request, Counter>,
    request_seconds: Family<Method, Histogram>,
    tool_calls: Family<Tool, Counter>,
    provider_seconds: Histogram,
    provider_errors: Family<Kind, Counter>,
    tokens: Family<Kind, Counter>,
    webhook_deliveries: Family<Outcome, Counter>,
    runs: Family<Outcome, Counter>,
    sessions_loaded: Gauge,
    turns_running: Gauge,
    approvals_waiting: Gauge,
    clients: Gauge,
    store_bytes: Gauge,
    uptime: Gauge<f64, AtomicU64>,
}

/// Latency buckets: 1 ms to about 33 s, doubling.
fn latency() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 16))
}

/// Model calls take longer: 50 ms to about 27 min, doubling.
fn model_latency() -> Histogram {
    Histogram::new(exponential_buckets(0.05, 2.0, 16))
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("zeroclaw");
        let m = Self {
            connections: Family::default(),
            connections_open: Family::default(),
            requests: Family::default(),
            request_seconds: Family::new_with_constructor(latency),
            tool_calls: Family::default(),
            provider_seconds: model_latency(),
            provider_errors: Family::default(),
            tokens: Family::default(),
            webhook_deliveries: Family::default(),
            runs: Family::default(),
            sessions_loaded: Gauge::default(),
            turns_running: Gauge::default(),
            approvals_waiting: Gauge::default(),
            clients: Gauge::default(),
            store_bytes: Gauge::default(),
            uptime: Gauge::default(),
            registry: Registry::default(),
        };
        // Names without the `zeroclaw_` prefix and the counters' `_total` suffix, which
        // the encoder adds.
        registry.register(
            "connections",
            "Connections admitted, by door (socket, gateway, http)",
            m.connections.clone(),
        );
        registry.register(
            "connections_open",
            "Connections open now, by door",
            m.connections_open.clone(),
        );
        registry.register(
            "requests",
            "JSON-RPC requests answered, by method and outcome (ok, error)",
            m.requests.clone(),
        );
        registry.register(
            "request_duration_seconds",
            "Time from a request's arrival to its answer, by method",
            m.request_seconds.clone(),
        );
        registry.register(
            "tool_calls",
            "Tool calls ended, by tool and outcome (ok, error, cancelled)",
            m.tool_calls.clone(),
        );
        registry.register(
            "provider_request_duration_seconds",
            "Time for the provider to accept a model call (or refuse it), retries included",
            m.provider_seconds.clone(),
        );
        registry.register(
            "provider_errors",
            "Model calls that failed, by kind",
            m.provider_errors.clone(),
        );
        registry.register(
            "tokens",
            "Tokens the provider reported, by kind (input, output)",
            m.tokens.clone(),
        );
        registry.register(
            "webhook_deliveries",
            "Webhook deliveries answered, by outcome (accepted, duplicate, refused)",
            m.webhook_deliveries.clone(),
        );
        registry.register(
            "runs",
            "Unattended runs ended, by outcome (the run's final state)",
            m.runs.clone(),
        );
        registry.register(
            "sessions_loaded",
            "Sessions held in memory",
            m.sessions_loaded.clone(),
        );
        registry.register(
            "turns_running",
            "Turns running (unattended runs' included)",
            m.turns_running.clone(),
        );
        registry.register(
            "approvals_waiting",
            "Tool calls waiting for an approval",
            m.approvals_waiting.clone(),
        );
        registry.register(
            "clients",
            "Initialized client connections",
            m.clients.clone(),
        );
        registry.register(
            "store_size_bytes",
            "The session database's size on disk (its file and WAL)",
            m.store_bytes.clone(),
        );
        registry.register(
            "uptime_seconds",
            "Seconds since the daemon started",
            m.uptime.clone(),
        );
        Self { registry, ..m }
    }

    /// A door admitted a connection; the guard counts it open until dropped.
    pub fn connection(&self, door: &'static str) -> OpenConnection {
        self.connections.get_or_create(&Door { door }).inc();
        let open = self.connections_open.get_or_create(&Door { door }).clone();
        open.inc();
        OpenConnection(open)
    }

    /// A request was answered after `seconds`.
    pub fn request(&self, method: &'static str, ok: bool, seconds: f64) {
        let outcome = if ok { "ok" } else { "error" };
        self.requests
            .get_or_create(&Request { method, outcome })
            .inc();
        self.request_seconds
            .get_or_create(&Method { method })
            .observe(seconds);
    }

    pub fn tool_call(&self, tool: &str, outcome: &'static str) {
        self.tool_calls
            .get_or_create(&Tool {
                tool: tool.to_owned(),
                outcome,
            })
            .inc();
    }

    pub fn model_call(&self, seconds: f64, error: Option<&'static str>) {
        self.provider_seconds.observe(seconds);
        if let Some(kind) = error {
            self.provider_errors.get_or_create(&Kind { kind }).inc();
        }
    }

    pub fn tokens_used(&self, input: u64, output: u64) {
        self.tokens
            .get_or_create(&Kind { kind: "input" })
            .inc_by(input);
        self.tokens
            .get_or_create(&Kind { kind: "output" })
            .inc_by(output);
    }

    pub fn webhook_delivery(&self, outcome: &'static str) {
        self.webhook_deliveries
            .get_or_create(&Outcome { outcome })
            .inc();
    }

    pub fn run_ended(&self, outcome: &'static str) {
        self.runs.get_or_create(&Outcome { outcome }).inc();
    }

    /// The text a scrape gets, the state gauges set from `now` first.
    pub fn encode(&self, now: Snapshot, uptime_seconds: f64) -> Result<String, std::fmt::Error> {
        self.sessions_loaded.set(now.sessions_loaded);
        self.turns_running.set(now.turns_running);
        self.approvals_waiting.set(now.approvals_waiting);
        self.clients.set(now.clients);
        self.store_bytes.set(now.store_bytes);
        self.uptime.set(uptime_seconds);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry)?;
        Ok(text)
    }
}

/// An open connection, counted in `zeroclaw_connections_open` until dropped.
#[derive(Debug)]
pub struct OpenConnection(Gauge);

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.dec();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn every_metric_is_named_with_the_zeroclaw_prefix_and_counters_end_in_total() {
        let metrics = Metrics::new();
        metrics.request("status", true, 0.002);
        let _open = metrics.connection("socket");
        let text = metrics.encode(Snapshot::default(), 1.0).unwrap();
        assert!(
            text.contains("zeroclaw_requests_total{method=\"status\",outcome=\"ok\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("zeroclaw_connections_open{door=\"socket\"} 1"),
            "{text}"
        );
        assert!(text.ends_with("# EOF\n"), "{text}");
        for line in text.lines().filter(|l| l.starts_with("# TYPE")) {
            assert!(line.starts_with("# TYPE zeroclaw_"), "{line}");
        }
    }
}
