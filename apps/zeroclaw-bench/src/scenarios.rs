//! The measurements. Each takes a socket path and runs identically against the daemon and
//! the floor; only the streaming request differs (a real prompt vs. `bench/stream`).

use crate::client::{Conn, Incoming, check_answer, preview, push_request};
use std::io;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

/// Connections opened at once while setting up many of them (connects are not timed).
const CONNECT_CONCURRENCY: usize = 64;

/// Nanoseconds since `t`.
fn ns(t: Instant) -> u64 {
    u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// The `p` quantile (0..=1) of sorted samples (nearest rank).
pub fn quantile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

pub fn median_f64(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Sequential `status` calls on one fresh connection; returns each call's latency in ns.
pub async fn round_trips(socket: &Path, warmup: usize, n: usize) -> io::Result<Vec<u64>> {
    let mut conn = Conn::open(socket).await?;
    for _ in 0..warmup {
        conn.call_ok("status", "{}").await?;
    }
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        conn.call_ok("status", "{}").await?;
        samples.push(ns(t));
    }
    Ok(samples)
}

/// One connection; a writer keeps `depth` `status` requests outstanding while a reader
/// checks and counts the answers. Returns requests per second.
pub async fn pipelined(socket: &Path, total: usize, depth: usize) -> io::Result<f64> {
    let Conn {
        mut reader,
        mut writer,
        next_id,
        ..
    } = Conn::open(socket).await?;
    let base = next_id;
    let credits = Semaphore::new(depth);
    let started = Instant::now();
    let write = async {
        let mut sent = 0usize;
        let mut out = Vec::with_capacity(depth * 64);
        while sent < total {
            credits
                .acquire()
                .await
                .map_err(|_| io::Error::other("credits closed"))?
                .forget();
            let mut batch = 1;
            while sent + batch < total {
                match credits.try_acquire() {
                    Ok(permit) => {
                        permit.forget();
                        batch += 1;
                    }
                    Err(_) => break,
                }
            }
            out.clear();
            for i in 0..batch {
                push_request(&mut out, "status", "{}", base + (sent + i) as u64);
            }
            writer.write_all(&out).await?;
            sent += batch;
        }
        Ok::<(), io::Error>(())
    };
    let read = async {
        let mut seen = vec![false; total];
        let mut received = 0usize;
        let mut returned = 0usize;
        while received < total {
            let line = reader.line().await.map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("{e} after {received} of {total} pipelined answers"),
                )
            })?;
            let msg = Incoming::parse(line)?;
            let slot = msg
                .response_id()
                .and_then(|id| id.checked_sub(base))
                .and_then(|i| usize::try_from(i).ok())
                .filter(|&i| i < total && !seen[i]);
            let Some(i) = slot else {
                return Err(io::Error::other(format!(
                    "a pipelined answer with an unexpected or repeated id: {}",
                    preview(line)
                )));
            };
            check_answer(&msg, base + i as u64, "status", line)?;
            seen[i] = true;
            received += 1;
            returned += 1;
            if !reader.has_line() {
                credits.add_permits(returned);
                returned = 0;
            }
        }
        Ok::<(), io::Error>(())
    };
    tokio::try_join!(write, read)?;
    Ok(total as f64 / started.elapsed().as_secs_f64())
}

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
