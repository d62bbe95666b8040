//! Round trip: sequential `status` calls on one connection; p50, p99 and the server's CPU per
//! call.

use super::{count, ctx, order, progress, slot};
use crate::client::Conn;
use crate::report::{Goal, Row, Unit, micros, thousands};
use crate::run::Bench;
use crate::stats::{ns, quantile};
use std::io;
use std::path::Path;
use std::time::Instant;

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

impl Bench {
    pub async fn round_trip(&mut self) -> Result<(), String> {
        let p = &self.plan;
        let rounds = p.rt_rounds.max(1);
        let per_round = p.rt_calls.div_ceil(rounds);
        let warmup = p.rt_warmup.div_ceil(rounds);
        progress(format!(
            "round trip: {} of {} sequential `status` calls on each server",
            count(rounds, "round"),
            thousands(per_round as u64)
        ));
        let mut samples = [Vec::new(), Vec::new()];
        let mut cpu = [Vec::new(), Vec::new()];
        for round in 0..rounds {
            for kind in order(round) {
                let socket = self.socket(kind);
                let (s, per_op) = self
                    .metered(
                        kind,
                        warmup + per_round + 1,
                        round_trips(&socket, warmup, per_round),
                    )
                    .await;
                let s = s.map_err(ctx(&format!("round trip on the {}", kind.name())))?;
                samples[slot(kind)].extend(s);
                cpu[slot(kind)].extend(per_op);
            }
        }
        for s in &mut samples {
            s.sort_unstable();
        }
        let [floor, daemon] = &samples;
        let n = thousands(daemon.len() as u64);
        self.rows.push(
            Row::new(
                format!("round trip p50 ({n} sequential `status`)"),
                Unit::Micros,
                micros(quantile(daemon, 0.5)),
                Some(micros(quantile(floor, 0.5))),
            )
            .goal(Goal::RatioAtMost(1.25)),
        );
        self.rows.push(Row::new(
            "round trip p99",
            Unit::Micros,
            micros(quantile(daemon, 0.99)),
            Some(micros(quantile(floor, 0.99))),
        ));
        self.cpu_row("round trip: server CPU per call".into(), &cpu);
        Ok(())
    }
}
