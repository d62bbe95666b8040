//! Compaction: `session/compact` of long sessions, the fake provider writing the summary;
//! the time, the model calls and the daemon's CPU.

use super::{Group, growth_notes, sql, with_note};
use crate::client::Conn;
use crate::fill::{self, Size};
use crate::procs;
use crate::report::{Row, Unit, thousands};
use crate::scenarios::{ctx, progress};
use crate::stats::median_f64;
use std::time::Instant;

impl Group<'_> {
    /// `session/compact` of sessions of ~1k / 10k / 100k tokens (one fresh session a round).
    pub(super) async fn compaction(&mut self) -> Result<(), String> {
        let s = self.sizes.clone();
        progress(format!(
            "growth: session/compact of ~{} tokens",
            s.tokens.map(|n| thousands(n as u64)).join(" / ")
        ));
        let (cfg, db) = self.prepare("compact").await?;
        let mut conn = fill::open(&db).map_err(sql("open the database"))?;
        let rounds = s.rounds.max(1);
        let mut written = [fill::Written::default(); 3];
        // Compacted once first, not counted: the first provider call pays for what every
        // later one reuses.
        let warm = fill::session_id(0xc1, 0);
        fill::session_with_history(&mut conn, &warm, &self.cwd(), Size::Tokens(s.tokens[0]))
            .map_err(sql("fill the history"))?;
        for (i, &t) in s.tokens.iter().enumerate() {
            for round in 0..rounds {
                let id = fill::session_id(0xc0, i * rounds + round);
                written[i] =
                    fill::session_with_history(&mut conn, &id, &self.cwd(), Size::Tokens(t))
                        .map_err(sql("fill the history"))?;
            }
        }
        drop(conn);
        let daemon = self.start_daemon(&cfg)?;
        let mut client = Conn::open(&daemon.socket)
            .await
            .map_err(ctx("connect to the daemon"))?;
        for method in ["session/load", "session/compact"] {
            client
                .call_ok(method, &format!(r#"{{"sessionId":"{warm}"}}"#))
                .await
                .map_err(ctx(method))?;
        }
        let pid = daemon.pid();
        let mut times = [Vec::new(), Vec::new(), Vec::new()];
        let mut cpu = [Vec::new(), Vec::new(), Vec::new()];
        let mut calls = [0usize; 3];
        let mut folded = [0u64; 3];
        for (i, _) in s.tokens.iter().enumerate() {
            for round in 0..rounds {
                let id = fill::session_id(0xc0, i * rounds + round);
                client
                    .call_ok("session/load", &format!(r#"{{"sessionId":"{id}"}}"#))
                    .await
                    .map_err(ctx("session/load"))?;
                let asked = self.fake.request_count();
                let cpu_before = procs::cpu_ns(pid).ok();
                let started = Instant::now();
                let result = client
                    .call_value("session/compact", &format!(r#"{{"sessionId":"{id}"}}"#))
                    .await;
                let took = started.elapsed();
                if let (Some(a), Ok(b)) = (cpu_before, procs::cpu_ns(pid)) {
                    cpu[i].push(b.saturating_sub(a) as f64 / 1e6);
                }
                let result = match result {
                    Ok(r) => r,
                    Err(e) => {
                        self.errors.push(format!("session/compact: {e}"));
                        continue;
                    }
                };
                folded[i] = result
                    .get("messagesFolded")
                    .and_then(|v| v.as_u64())
                    .unwrap_or(0);
                if folded[i] == 0 {
                    self.errors
                        .push(format!("session/compact folded nothing: {result}"));
                    continue;
                }
                calls[i] = self.fake.request_count() - asked;
                times[i].push(took.as_secs_f64() * 1_000.0);
            }
        }
        drop(client);
        daemon.stop().map_err(ctx("stop the daemon"))?;
        if times.iter().any(Vec::is_empty) {
            return Ok(());
        }
        let values = [
            median_f64(&times[0]),
            median_f64(&times[1]),
            median_f64(&times[2]),
        ];
        let notes = growth_notes(&values, &s.tokens);
        for i in 0..3 {
            let row = Row::new(
                format!(
                    "session/compact, ~{} tokens ({} messages)",
                    thousands(written[i].tokens as u64),
                    thousands(written[i].messages as u64)
                ),
                Unit::Millis,
                values[i],
                None,
            )
            .note(format!(
                "{} model call{}, {} folded; daemon CPU {:.2} ms",
                calls[i],
                if calls[i] == 1 { "" } else { "s" },
                thousands(folded[i]),
                median_f64(&cpu[i])
            ));
            self.rows.push(with_note(row, notes[i].clone()));
        }
        Ok(())
    }
}
