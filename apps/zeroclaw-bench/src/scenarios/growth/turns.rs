//! Concurrent turns: many sessions streaming at once, each on its own connection, against
//! the floor streaming as many at once; the aggregate rate, and how evenly it is shared.

use super::{Group, growth_notes, with_note};
use crate::client::{Conn, Incoming, check_answer};
use crate::fill;
use crate::procs::{self, Kind};
use crate::report::{Goal, Row, Unit, thousands};
use crate::scenarios::{CHUNK, ctx, order, progress, slot};
use crate::stats::median_f64;
use std::io;
use std::time::Instant;
use tokio::task::JoinSet;
use zeroclaw_testkit::openai;

impl Group<'_> {
    /// 1 / 10 / 50 turns streaming at once, each session on its own connection, against the
    /// floor streaming as many at once.
    pub(super) async fn concurrent_turns(&mut self) -> Result<(), String> {
        let s = self.sizes.clone();
        progress(format!(
            "growth: {} concurrent turns of {} chunks each",
            s.turns.map(|n| n.to_string()).join(" / "),
            thousands(s.turn_chunks as u64)
        ));
        let (cfg, _) = self.prepare("turns").await?;
        let floor = self
            .launcher
            .start(Kind::Floor)
            .map_err(ctx("start the floor"))?;
        let daemon = self.start_daemon(&cfg)?;
        let pids = [floor.pid(), daemon.pid()];
        let sockets = [floor.socket.clone(), daemon.socket.clone()];
        let mut rates = vec![[Vec::new(), Vec::new()]; 3];
        let mut fair = vec![[Vec::new(), Vec::new()]; 3];
        let mut cpu = vec![[Vec::new(), Vec::new()]; 3];
        let cwd = serde_json::to_string(&self.cwd()).unwrap_or_default();
        'sizes: for (i, &n) in s.turns.iter().enumerate() {
            for round in 0..s.rounds.max(1) {
                for kind in order(round) {
                    let k = slot(kind);
                    let mut conns = Vec::with_capacity(n);
                    let mut requests = Vec::with_capacity(n);
                    for t in 0..n {
                        let mut conn = Conn::open(&sockets[k])
                            .await
                            .map_err(ctx("connect for a turn"))?;
                        let request = match kind {
                            Kind::Floor => (
                                "bench/stream",
                                format!(
                                    r#"{{"n":{},"text":"{CHUNK}","sessionId":"{}","turnId":"{}"}}"#,
                                    s.turn_chunks,
                                    fill::session_id(0xf1, t),
                                    fill::session_id(0xf2, t)
                                ),
                            ),
                            Kind::Daemon => {
                                let created = conn
                                    .call_value("session/new", &format!(r#"{{"cwd":{cwd}}}"#))
                                    .await
                                    .map_err(ctx("session/new"))?;
                                let id = created
                                    .get("sessionId")
                                    .and_then(|v| v.as_str())
                                    .ok_or("session/new answered without a sessionId")?
                                    .to_owned();
                                (
                                    "session/prompt",
                                    format!(r#"{{"sessionId":"{id}","prompt":"stream please"}}"#),
                                )
                            }
                        };
                        conns.push(conn);
                        requests.push(request);
                    }
                    if kind == Kind::Daemon {
                        for _ in 0..n {
                            self.fake.push(openai::many_chunks(s.turn_chunks, CHUNK));
                        }
                    }
                    let before = procs::cpu_ns(pids[k]).ok();
                    let outcome = concurrent(conns, requests, s.turn_chunks).await;
                    let after = procs::cpu_ns(pids[k]).ok();
                    let outcome = match outcome {
                        Ok(o) => o,
                        Err(e) => {
                            self.errors.push(format!(
                                "{n} concurrent turns on the {}: {e}{}",
                                kind.name(),
                                procs::log_tail(&self.launcher.log)
                            ));
                            break 'sizes;
                        }
                    };
                    rates[i][k].push(outcome.aggregate);
                    fair[i][k].push(outcome.fairness);
                    if let (Some(a), Some(b)) = (before, after) {
                        cpu[i][k].push(
                            b.saturating_sub(a) as f64 / (n * s.turn_chunks) as f64 / 1_000.0,
                        );
                    }
                }
            }
        }
        let _ = daemon.stop();
        drop(floor);
        if rates.iter().any(|r| r.iter().any(Vec::is_empty)) {
            return Ok(());
        }
        let med = |v: &Vec<[Vec<f64>; 2]>, i: usize, k: usize| median_f64(&v[i][k]);
        let notes = growth_notes(
            &[med(&rates, 0, 1), med(&rates, 1, 1), med(&rates, 2, 1)],
            &s.turns,
        );
        for (i, &n) in s.turns.iter().enumerate() {
            let label = format!(
                "{n} concurrent turn{} × {} chunks",
                if n == 1 { "" } else { "s" },
                thousands(s.turn_chunks as u64)
            );
            let row = Row::new(
                format!("{label}: aggregate rate at the clients"),
                Unit::PerSec,
                med(&rates, i, 1),
                Some(med(&rates, i, 0)),
            )
            .note("every chunk arrived");
            self.rows.push(with_note(row, notes[i].clone()));
            if n > 1 {
                // The goal is the daemon's own figure: the floor's is as noisy (its sessions
                // are tasks on one runtime too), so it is shown, not divided by.
                self.rows.push(
                    Row::new(
                        format!("{label}: slowest / fastest session's rate"),
                        Unit::Ratio,
                        med(&fair, i, 1),
                        Some(med(&fair, i, 0)),
                    )
                    .goal(Goal::AtLeast(0.8, "")),
                );
            }
            self.rows.push(Row::new(
                format!("{label}: server CPU per chunk"),
                Unit::Micros,
                med(&cpu, i, 1),
                Some(med(&cpu, i, 0)),
            ));
        }
        Ok(())
    }
}

struct Concurrent {
    /// All chunks over the span from the first chunk anywhere to the last.
    aggregate: f64,
    /// The slowest session's rate over the fastest's.
    fairness: f64,
}

/// Every connection sends its request at once and counts its chunks; fails if any chunk
/// is missing.
async fn concurrent(
    conns: Vec<Conn>,
    requests: Vec<(&'static str, String)>,
    expected: usize,
) -> io::Result<Concurrent> {
    let (go_tx, go_rx) = tokio::sync::watch::channel(false);
    let mut set = JoinSet::new();
    for (mut conn, (method, params)) in conns.into_iter().zip(requests) {
        let mut go = go_rx.clone();
        set.spawn(async move {
            let _ = go.wait_for(|go| *go).await;
            let id = conn.send(method, &params).await?;
            let mut chunks = 0usize;
            let mut first = None;
            let mut last = Instant::now();
            loop {
                let line = conn.reader.line().await.map_err(|e| {
                    io::Error::new(e.kind(), format!("{e} after {chunks} of {expected} chunks"))
                })?;
                let msg = Incoming::parse(line)?;
                if msg.method.is_some() {
                    if msg.params.as_ref().and_then(|p| p.kind.as_deref())
                        == Some("agent_message_chunk")
                    {
                        last = Instant::now();
                        first.get_or_insert(last);
                        chunks += 1;
                    }
                    continue;
                }
                check_answer(&msg, id, method, line)?;
                break;
            }
            if chunks != expected {
                return Err(io::Error::other(format!(
                    "{chunks} chunks reached a client, {expected} were streamed"
                )));
            }
            Ok::<_, io::Error>((first.unwrap_or(last), last, chunks))
        });
    }
    tokio::task::yield_now().await;
    let _ = go_tx.send(true);
    let mut spans = Vec::new();
    while let Some(joined) = set.join_next().await {
        spans.push(joined.map_err(io::Error::other)??);
    }
    let start = spans.iter().map(|s| s.0).min();
    let end = spans.iter().map(|s| s.1).max();
    let total: usize = spans.iter().map(|s| s.2).sum();
    let aggregate = match (start, end) {
        (Some(a), Some(b)) if b > a => total as f64 / (b - a).as_secs_f64(),
        _ => 0.0,
    };
    let rates: Vec<f64> = spans
        .iter()
        .map(|(a, b, n)| {
            let span = (*b - *a).as_secs_f64();
            if span > 0.0 {
                (*n - 1) as f64 / span
            } else {
                0.0
            }
        })
        .collect();
    let min = rates.iter().copied().fold(f64::INFINITY, f64::min);
    let max = rates.iter().copied().fold(0.0, f64::max);
    Ok(Concurrent {
        aggregate,
        fairness: if max > 0.0 { min / max } else { 0.0 },
    })
}
