//! Replay: `session/load {replay:true}` of a long history on a fresh server, against the
//! replay floor reading the same rows from the same SQLite file (`replay_floor.rs`).

use super::{Group, growth_notes, sql, with_note};
use crate::client::{Conn, Incoming, check_answer};
use crate::fill::{self, Size};
use crate::procs::{self, Kind};
use crate::report::{Goal, Row, Unit, thousands};
use crate::scenarios::{ctx, mib, order, progress, slot};
use crate::stats::median_f64;
use std::io;
use std::time::Instant;

impl Group<'_> {
    /// `session/load {replay:true}` of 1k / 10k / 100k messages, each on a fresh server:
    /// time to the answer, peak RSS, CPU per message; the floor reads the same file.
    pub(super) async fn replay(&mut self) -> Result<(), String> {
        let s = self.sizes.clone();
        progress(format!(
            "growth: replay of {} messages, {} rounds each, against the SQLite floor",
            s.messages.map(|n| thousands(n as u64)).join(" / "),
            s.rounds
        ));
        let (cfg, db) = self.prepare("replay").await?;
        let mut conn = fill::open(&db).map_err(sql("open the database"))?;
        let sessions: Vec<String> = (0..3).map(|i| fill::session_id(0x7e, i)).collect();
        for (id, &n) in sessions.iter().zip(&s.messages) {
            fill::session_with_history(&mut conn, id, &self.cwd(), Size::Messages(n))
                .map_err(sql("fill the history"))?;
        }
        drop(conn);
        let floor_socket = self.dir.join("rf.sock");
        let mut times = vec![[Vec::new(), Vec::new()]; 3];
        let mut peaks = vec![[Vec::new(), Vec::new()]; 3];
        let mut cpus = vec![[Vec::new(), Vec::new()]; 3];
        for (i, &n) in s.messages.iter().enumerate() {
            for round in 0..s.rounds.max(1) {
                for kind in order(round) {
                    let server = match kind {
                        Kind::Daemon => self.start_daemon(&cfg)?,
                        Kind::Floor => self
                            .launcher
                            .start_replay_floor(&floor_socket, &db)
                            .map_err(ctx("start the replay floor"))?,
                    };
                    let pid = server.pid();
                    let mut client = Conn::open(&server.socket)
                        .await
                        .map_err(ctx("connect for the replay"))?;
                    let cpu_before = procs::cpu_ns(pid).ok();
                    let started = Instant::now();
                    let got = replay_count(&mut client, &sessions[i]).await;
                    let took = started.elapsed();
                    let cpu_after = procs::cpu_ns(pid).ok();
                    let peak = procs::peak_rss_of(pid).map_err(ctx("read VmHWM"));
                    drop(client);
                    let _ = server.stop();
                    match got {
                        Ok(got) if got == n => {}
                        Ok(got) => {
                            self.errors.push(format!(
                                "replay of {n} messages on the {}: {got} arrived",
                                kind.name()
                            ));
                            continue;
                        }
                        Err(e) => {
                            self.errors.push(format!(
                                "replay of {n} messages on the {}: {e}",
                                kind.name()
                            ));
                            continue;
                        }
                    }
                    let k = slot(kind);
                    times[i][k].push(took.as_secs_f64() * 1_000.0);
                    peaks[i][k].push(mib(peak?));
                    if let (Some(a), Some(b)) = (cpu_before, cpu_after) {
                        cpus[i][k].push(b.saturating_sub(a) as f64 / n as f64 / 1_000.0);
                    }
                }
            }
        }
        let med = |v: &Vec<[Vec<f64>; 2]>, i: usize, k: usize| median_f64(&v[i][k]);
        let daemon_times = [med(&times, 0, 1), med(&times, 1, 1), med(&times, 2, 1)];
        let notes = growth_notes(&daemon_times, &s.messages);
        let peak_notes = growth_notes(
            &[med(&peaks, 0, 1), med(&peaks, 1, 1), med(&peaks, 2, 1)],
            &s.messages,
        );
        for (i, &n) in s.messages.iter().enumerate() {
            let label = format!("replay {} messages", thousands(n as u64));
            let per = daemon_times[i] * 1_000.0 / n as f64;
            let row = Row::new(
                format!("{label}: time to the answer"),
                Unit::Millis,
                daemon_times[i],
                Some(med(&times, i, 0)),
            )
            .goal(Goal::RatioAtMost(1.5))
            .note(format!("{per:.2} µs per message"));
            self.rows.push(with_note(row, notes[i].clone()));
            self.rows.push(with_note(
                Row::new(
                    format!("{label}: peak RSS"),
                    Unit::MiB,
                    med(&peaks, i, 1),
                    Some(med(&peaks, i, 0)),
                ),
                peak_notes[i].clone(),
            ));
            if cpus[i].iter().all(|c| !c.is_empty()) {
                self.rows.push(
                    Row::new(
                        format!("{label}: server CPU per message"),
                        Unit::Micros,
                        med(&cpus, i, 1),
                        Some(med(&cpus, i, 0)),
                    )
                    .goal(Goal::RatioAtMost(1.5)),
                );
            }
        }
        Ok(())
    }
}

/// Sends `session/load {replay:true}` and counts the `session/update` frames before its
/// answer.
async fn replay_count(conn: &mut Conn, session: &str) -> io::Result<usize> {
    let id = conn
        .send(
            "session/load",
            &format!(r#"{{"sessionId":"{session}","replay":true}}"#),
        )
        .await?;
    let mut n = 0;
    loop {
        let line = conn.reader.line().await?;
        let msg = Incoming::parse(line)?;
        if let Some(method) = msg.method.as_deref() {
            if method == "session/update" {
                n += 1;
            }
            continue;
        }
        check_answer(&msg, id, "session/load", line)?;
        return Ok(n);
    }
}
