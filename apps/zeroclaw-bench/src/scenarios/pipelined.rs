//! Pipelined: one connection keeping `depth` `status` requests in flight; requests per
//! second, and the CPU per request of the server and of the client.

use super::{count, ctx, order, progress, slot, spread};
use crate::client::{Conn, Incoming, check_answer, preview, push_request};
use crate::procs;
use crate::report::{Goal, Row, Unit, thousands};
use crate::run::Bench;
use crate::stats::median_f64;
use std::io;
use std::path::Path;
use std::time::Instant;
use tokio::io::AsyncWriteExt;
use tokio::sync::Semaphore;

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

impl Bench {
    pub async fn pipelined(&mut self) -> Result<(), String> {
        let p = self.plan.clone();
        progress(format!(
            "pipelined: {} of {} requests, {} in flight",
            count(p.pipe_rounds, "round"),
            thousands(p.pipe_total as u64),
            p.pipe_depth
        ));
        let mut rates = [Vec::new(), Vec::new()];
        let mut cpu = [Vec::new(), Vec::new()];
        let mut client_cpu = [Vec::new(), Vec::new()];
        for round in 0..p.pipe_rounds.max(1) {
            for kind in order(round) {
                let socket = self.socket(kind);
                // The client shares the machine's cores with the server, so what it spends
                // reading the answers (bigger from `status` than the floor's `{}`) bounds
                // the rate too.
                let client_before = procs::cpu_ns(std::process::id()).ok();
                let (r, per_op) = self
                    .metered(
                        kind,
                        p.pipe_total,
                        pipelined(&socket, p.pipe_total, p.pipe_depth),
                    )
                    .await;
                if let (Some(a), Ok(b)) = (client_before, procs::cpu_ns(std::process::id())) {
                    client_cpu[slot(kind)]
                        .push(b.saturating_sub(a) as f64 / p.pipe_total.max(1) as f64 / 1_000.0);
                }
                let r = r.map_err(ctx(&format!("pipelined on the {}", kind.name())))?;
                rates[slot(kind)].push(r);
                cpu[slot(kind)].extend(per_op);
            }
        }
        let mut row = Row::new(
            format!("pipelined, {} in flight, one connection", p.pipe_depth),
            Unit::PerSec,
            median_f64(&rates[1]),
            Some(median_f64(&rates[0])),
        )
        .goal(Goal::RatioAtLeast(0.8));
        if let Some(s) = spread(&rates[1], " /s") {
            row = row.note(s);
        }
        self.rows.push(row);
        self.cpu_row("pipelined: server CPU per request".into(), &cpu);
        self.cpu_row(
            "pipelined: client CPU per request (the same client)".into(),
            &client_cpu,
        );
        Ok(())
    }
}
