//! Running under a service manager (docs/service.md): the sockets it passes
//! (`activation.rs`: systemd's socket activation), what the daemon tells it
//! (`notify.rs`: readiness, status, stopping, the watchdog), and what a supervisor or
//! Prometheus reads from the gateway (`metrics.rs`). Each is a no-op without its manager:
//! no `LISTEN_FDS`, no `NOTIFY_SOCKET`, no scrape.

pub mod activation;
pub mod metrics;
pub mod notify;

pub use activation::Activation;
pub use metrics::Metrics;
pub use notify::Notifier;
