//! Many clients: that many initialized connections, then all at once a run of sequential
//! `status` calls on each; throughput, p99 latency, and every answer checked (a lost or
//! mismatched one fails the run).

use super::{count, ctx, order, progress, slot, spread};
use crate::client::{Conn, Incoming, check_answer};
use crate::report::{Goal, Row, Unit, micros, thousands};
use crate::run::Bench;
use crate::stats::{median_f64, ns, quantile};
use std::io;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

/// Connections opened at once while setting up many of them (connects are not timed).
const CONNECT_CONCURRENCY: usize = 64;

/// Opens `n` connections (initialized), at most [`CONNECT_CONCURRENCY`] at a time.
pub async fn open_many(socket: &Path, n: usize) -> io::Result<Vec<Conn>> {
    let gate = Arc::new(Semaphore::new(CONNECT_CONCURRENCY));
    let mut set = JoinSet::new();
    for _ in 0..n {
        let gate = gate.clone();
        let socket = socket.to_path_buf();
        set.spawn(async move {
            let _permit = gate.acquire().await;
            Conn::open(&socket).await
        });
    }
    let mut conns = Vec::with_capacity(n);
    while let Some(joined) = set.join_next().await {
        conns.push(joined.map_err(io::Error::other)??);
    }
    Ok(conns)
}

#[derive(Debug, Default)]
pub struct ClientsOutcome {
    pub requests_per_sec: f64,
    /// Every answered request's latency, ns, sorted.
    pub latencies: Vec<u64>,
    /// Requests that got no answer (connection closed, or nothing within the hang guard).
    pub lost: usize,
    /// Answers with a wrong id, or an error instead of a result.
    pub mismatched: usize,
    pub first_problem: Option<String>,
}

/// `clients` initialized connections, then all at once: `per_client` sequential `status`
/// calls on each.
pub async fn many_clients(
    socket: &Path,
    clients: usize,
    per_client: usize,
) -> io::Result<ClientsOutcome> {
    let conns = open_many(socket, clients).await?;
    let (go_tx, go_rx) = tokio::sync::watch::channel(false);
    let mut set = JoinSet::new();
    for mut conn in conns {
        let mut go = go_rx.clone();
        set.spawn(async move {
            let _ = go.wait_for(|go| *go).await;
            let mut latencies = Vec::with_capacity(per_client);
            let (mut lost, mut mismatched, mut problem) = (0, 0, None);
            for done in 0..per_client {
                let t = Instant::now();
                let outcome = async {
                    let id = conn.send("status", "{}").await?;
                    let line = conn.reader.line().await?;
                    let msg = Incoming::parse(line)?;
                    Ok::<_, io::Error>(
                        check_answer(&msg, id, "status", line)
                            .err()
                            .map(|e| e.to_string()),
                    )
                }
                .await;
                match outcome {
                    Ok(None) => latencies.push(ns(t)),
                    Ok(Some(why)) => {
                        // The stream is out of step now; the rest cannot be matched.
                        mismatched += 1;
                        lost += per_client - done - 1;
                        problem = Some(why);
                        break;
                    }
                    Err(e) => {
                        lost += per_client - done;
                        problem = Some(e.to_string());
                        break;
                    }
                }
            }
            (latencies, lost, mismatched, problem)
        });
    }
    // Let every task reach its wait first.
    tokio::task::yield_now().await;
    let started = Instant::now();
    let _ = go_tx.send(true);
    let mut outcome = ClientsOutcome::default();
    while let Some(joined) = set.join_next().await {
        let (latencies, lost, mismatched, problem) = joined.map_err(io::Error::other)?;
        outcome.latencies.extend(latencies);
        outcome.lost += lost;
        outcome.mismatched += mismatched;
        if outcome.first_problem.is_none() {
            outcome.first_problem = problem;
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    outcome.requests_per_sec = outcome.latencies.len() as f64 / elapsed;
    outcome.latencies.sort_unstable();
    Ok(outcome)
}

impl Bench {
    pub async fn clients(&mut self) -> Result<(), String> {
        let p = self.plan.clone();
        progress(format!(
            "many clients: {} of {} connections × {} sequential requests, all at once",
            count(p.clients_rounds, "round"),
            thousands(p.clients as u64),
            p.per_client
        ));
        let mut rates = [Vec::new(), Vec::new()];
        let mut latencies = [Vec::new(), Vec::new()];
        let mut bad = [0usize; 2];
        let mut cpu = [Vec::new(), Vec::new()];
        for round in 0..p.clients_rounds.max(1) {
            for kind in order(round) {
                let socket = self.socket(kind);
                let (o, per_op) = self
                    .metered(
                        kind,
                        p.clients * (p.per_client + 1),
                        many_clients(&socket, p.clients, p.per_client),
                    )
                    .await;
                let o = o.map_err(ctx(&format!("many clients on the {}", kind.name())))?;
                let i = slot(kind);
                cpu[i].extend(per_op);
                rates[i].push(o.requests_per_sec);
                latencies[i].extend(o.latencies);
                bad[i] += o.lost + o.mismatched;
                if o.lost + o.mismatched > 0 {
                    self.errors.push(format!(
                        "many clients on the {}: {} lost and {} mismatched responses (first: {})",
                        kind.name(),
                        o.lost,
                        o.mismatched,
                        o.first_problem.unwrap_or_default()
                    ));
                }
            }
        }
        for l in &mut latencies {
            l.sort_unstable();
        }
        let label = format!(
            "{} clients × {}: throughput",
            thousands(p.clients as u64),
            p.per_client
        );
        let mut row = Row::new(
            label,
            Unit::PerSec,
            median_f64(&rates[1]),
            Some(median_f64(&rates[0])),
        );
        if let Some(s) = spread(&rates[1], " /s") {
            row = row.note(s);
        }
        self.rows.push(row);
        self.rows.push(
            Row::new(
                format!("{} clients: p99 latency", thousands(p.clients as u64)),
                Unit::Millis,
                micros(quantile(&latencies[1], 0.99)) / 1_000.0,
                Some(micros(quantile(&latencies[0], 0.99)) / 1_000.0),
            )
            .goal(Goal::RatioAtMost(1.5)),
        );
        self.cpu_row(
            format!(
                "{} clients: server CPU per request (connect included)",
                thousands(p.clients as u64)
            ),
            &cpu,
        );
        self.rows.push(
            Row::new(
                format!(
                    "{} clients: lost or mismatched",
                    thousands(p.clients as u64)
                ),
                Unit::Count,
                bad[1] as f64,
                Some(bad[0] as f64),
            )
            .goal(Goal::AtMost(0.0, "")),
        );
        Ok(())
    }
}
