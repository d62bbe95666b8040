//! Streaming: one turn streaming many chunks from the fake provider (on the floor,
//! `bench/stream`); the rate at the client, time to the first chunk, and where that time
//! goes.

use super::{CHUNK, count, ctx, order, progress, slot, spread};
use crate::client::{Conn, Incoming, check_answer};
use crate::procs::{self, Kind};
use crate::report::{Goal, Row, Unit, millis, thousands};
use crate::run::Bench;
use crate::stats::median_f64;
use std::io;
use std::time::{Duration, Instant};
use zeroclaw_testkit::{FakeProvider, openai};

/// Same length as the daemon's uuids, so the floor's notification lines are the same size.
const FLOOR_SESSION: &str = "00000000-0000-4000-8000-000000000001";
const FLOOR_TURN: &str = "00000000-0000-4000-8000-000000000002";

#[derive(Debug, Clone, Copy)]
pub struct StreamOutcome {
    /// From sending the request to the first chunk.
    pub first_chunk: Duration,
    /// Chunks per second between the first and the last chunk.
    pub chunks_per_sec: f64,
}

/// Sends one request that streams `agent_message_chunk` notifications before its answer,
/// and counts them as they reach the client.
pub async fn stream(
    conn: &mut Conn,
    method: &str,
    params: &str,
    expected: usize,
) -> io::Result<StreamOutcome> {
    let started = Instant::now();
    let id = conn.send(method, params).await?;
    let mut chunks = 0usize;
    let mut first = Duration::ZERO;
    let mut last = Duration::ZERO;
    loop {
        let line = conn.reader.line().await.map_err(|e| {
            io::Error::new(e.kind(), format!("{e} after {chunks} of {expected} chunks"))
        })?;
        let msg = Incoming::parse(line)?;
        if msg.method.is_some() {
            let is_chunk = msg.method.as_deref() == Some("session/update")
                && msg.params.as_ref().and_then(|p| p.kind.as_deref())
                    == Some("agent_message_chunk");
            if is_chunk {
                last = started.elapsed();
                if chunks == 0 {
                    first = last;
                }
                chunks += 1;
            }
            continue;
        }
        check_answer(&msg, id, method, line)?;
        break;
    }
    if chunks != expected {
        return Err(io::Error::other(format!(
            "{chunks} chunks reached the client, {expected} were streamed: {} lost",
            expected.saturating_sub(chunks)
        )));
    }
    let span = (last - first).as_secs_f64();
    let chunks_per_sec = if chunks > 1 && span > 0.0 {
        (chunks - 1) as f64 / span
    } else {
        0.0
    };
    Ok(StreamOutcome {
        first_chunk: first,
        chunks_per_sec,
    })
}

impl Bench {
    pub async fn streaming(&mut self, fake: &FakeProvider) -> Result<(), String> {
        let p = self.plan.clone();
        progress(format!(
            "streaming: {} of one turn of {} chunks",
            count(p.stream_rounds, "round"),
            thousands(p.chunks as u64)
        ));
        let mut floor_conn = Conn::open(&self.socket(Kind::Floor))
            .await
            .map_err(ctx("connect to the floor"))?;
        let mut daemon_conn = Conn::open(&self.socket(Kind::Daemon))
            .await
            .map_err(ctx("connect to the daemon"))?;
        let cwd =
            serde_json::to_string(&crate::workspace::workspace(&self.dir)).unwrap_or_default();
        let mut rates = [Vec::new(), Vec::new()];
        let mut firsts = [Vec::new(), Vec::new()];
        let mut asked = Vec::new();
        // Per daemon round: from the provider having the request (it answers at once) to
        // the client's first chunk, the issue's "provider's first byte to first chunk".
        let mut from_provider = Vec::new();
        let mut cpu = [Vec::new(), Vec::new()];
        'rounds: for round in 0..p.stream_rounds.max(1) {
            for kind in order(round) {
                let before = self.cpu(kind);
                let outcome = match kind {
                    Kind::Floor => {
                        let params = format!(
                            r#"{{"n":{},"text":"{CHUNK}","sessionId":"{FLOOR_SESSION}","turnId":"{FLOOR_TURN}"}}"#,
                            p.chunks
                        );
                        stream(&mut floor_conn, "bench/stream", &params, p.chunks).await
                    }
                    Kind::Daemon => {
                        let created = daemon_conn
                            .call_value("session/new", &format!(r#"{{"cwd":{cwd}}}"#))
                            .await
                            .map_err(ctx("session/new"))?;
                        let session = created
                            .get("sessionId")
                            .and_then(|v| v.as_str())
                            .ok_or("session/new answered without a sessionId")?
                            .to_owned();
                        fake.push(openai::many_chunks(p.chunks, CHUNK));
                        let params =
                            format!(r#"{{"sessionId":"{session}","prompt":"stream please"}}"#);
                        let sent = std::time::Instant::now();
                        let (outcome, request) = tokio::join!(
                            stream(&mut daemon_conn, "session/prompt", &params, p.chunks),
                            async {
                                fake.next_request_timeout(crate::client::HANG_GUARD)
                                    .await
                                    .map(|_| sent.elapsed())
                            }
                        );
                        if let (Some(request), Ok(outcome)) = (request, &outcome) {
                            asked.push(millis(request));
                            from_provider.push(millis(outcome.first_chunk.saturating_sub(request)));
                        }
                        outcome
                    }
                };
                let outcome = match outcome {
                    Ok(outcome) => outcome,
                    Err(e) => {
                        // Recorded as a failure; the other scenarios still run.
                        self.errors.push(format!(
                            "streaming on the {}: {e}{}",
                            kind.name(),
                            procs::log_tail(&self.launcher.log)
                        ));
                        break 'rounds;
                    }
                };
                rates[slot(kind)].push(outcome.chunks_per_sec);
                firsts[slot(kind)].push(millis(outcome.first_chunk));
                if let (Some(a), Some(b)) = (before, self.cpu(kind)) {
                    cpu[slot(kind)].push(b.saturating_sub(a) as f64 / p.chunks as f64 / 1_000.0);
                }
            }
        }
        if rates.iter().any(Vec::is_empty) {
            return Ok(());
        }
        let mut row = Row::new(
            format!(
                "streaming {} chunks: rate at the client",
                thousands(p.chunks as u64)
            ),
            Unit::PerSec,
            median_f64(&rates[1]),
            Some(median_f64(&rates[0])),
        )
        .goal(Goal::RatioAtLeast(0.9));
        if let Some(s) = spread(&rates[1], " /s") {
            row = row.note(s);
        }
        let done = rates[1].len().min(rates[0].len());
        if done < p.stream_rounds {
            row = row.note(format!(
                "{done} of {} rounds; then chunks were lost",
                p.stream_rounds
            ));
        }
        self.rows.push(row);
        self.rows.push(Row::new(
            "streaming: time to first chunk",
            Unit::Millis,
            median_f64(&firsts[1]),
            Some(median_f64(&firsts[0])),
        ));
        if !asked.is_empty() {
            self.rows.push(Row::new(
                "streaming: prompt sent to provider request received",
                Unit::Millis,
                median_f64(&asked),
                None,
            ));
            // Against the floor's whole request-to-first-chunk time, which has no provider.
            self.rows.push(Row::new(
                "streaming: provider request to first chunk",
                Unit::Millis,
                median_f64(&from_provider),
                Some(median_f64(&firsts[0])),
            ));
        }
        if let Some(row) = self.cpu_row("streaming: server CPU per chunk".into(), &cpu) {
            row.goal = Goal::RatioAtMost(1.2);
        }
        Ok(())
    }
}
