//! Start-up: exec to the socket accepting (the floor's and the daemon's), how long an
//! `--ephemeral` daemon takes to exit once its last client leaves, and (issue 36) how
//! start-up grows with the store: exec to the first answer with many sessions stored
//! against the same with none.

use super::{count, ctx, order, progress, slot};
use crate::fill;
use crate::procs::{self, Kind};
use crate::report::{Goal, Row, Unit, millis, thousands};
use crate::run::Bench;
use crate::stats::median_f64;
use std::path::Path;
use std::time::{Duration, Instant};

impl Bench {
    pub fn startup(&mut self) -> Result<(), String> {
        let p = self.plan.clone();
        progress(format!(
            "start-up: {} of each to accepting, {}",
            count(p.startups, "exec"),
            count(p.ephemeral_runs, "ephemeral exit")
        ));
        let config_dir = self.dir.join("start");
        std::fs::create_dir_all(&config_dir)
            .map_err(|e| format!("{}: {e}", config_dir.display()))?;
        // The first start creates the database; later ones are the usual case.
        self.start_once(Kind::Daemon, &config_dir)?;
        let mut times = [Vec::new(), Vec::new()];
        for round in 0..p.startups.max(1) {
            for kind in order(round) {
                let t = self.start_once(kind, &config_dir)?;
                times[slot(kind)].push(millis(t));
            }
        }
        self.rows.push(Row::new(
            format!("start-up: exec to accepting (median of {})", p.startups),
            Unit::Millis,
            median_f64(&times[1]),
            Some(median_f64(&times[0])),
        ));
        let mut exits = Vec::new();
        for _ in 0..p.ephemeral_runs.max(1) {
            let mut server = self
                .launcher
                .spawn_in(Kind::Daemon, &config_dir, true)
                .map_err(ctx("start an ephemeral daemon"))?;
            let stream = server
                .connect_when_accepting()
                .map_err(ctx("wait for the ephemeral daemon"))?;
            let stream = procs::initialize_on(stream)
                .map_err(|e| server.failure("initialize the ephemeral daemon", e))?;
            let left = std::time::Instant::now();
            drop(stream);
            server
                .wait_exit()
                .map_err(ctx("wait for the ephemeral daemon to exit"))?;
            exits.push(left.elapsed().as_secs_f64());
        }
        let mut row = Row::new(
            "ephemeral: last client leaves to exit (1 s grace)",
            Unit::Secs,
            median_f64(&exits),
            None,
        )
        .goal(Goal::AtMost(1.1, "s"));
        if exits.len() > 1 {
            let min = exits.iter().copied().fold(f64::INFINITY, f64::min);
            let max = exits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            row = row.note(format!("{min:.3}–{max:.3} s over {} runs", exits.len()));
        }
        self.rows.push(row);
        self.startup_with_sessions()
    }

    /// Exec to the first answer (`initialize`; the socket accepts before the store is open,
    /// so accepting alone would not wait for it) with the growth group's largest number of
    /// sessions stored, against an empty store, alternating. Both stores were last closed
    /// by a daemon's orderly stop, the usual case; a note gives one start after a SIGKILL,
    /// which checks the whole file.
    fn startup_with_sessions(&mut self) -> Result<(), String> {
        let p = self.plan.clone();
        let n = p.growth.sessions[2];
        progress(format!(
            "start-up: {} to the first answer with {} sessions and with none",
            count(p.startups, "exec"),
            thousands(n as u64)
        ));
        let dirs = ["start-empty", "start-full"].map(|name| self.dir.join(name));
        for dir in &dirs {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            // Creates the database.
            self.answer_once(dir)?;
        }
        let db = dirs[1].join("data").join("zeroclaw.db");
        let mut conn = fill::open(&db).map_err(|e| format!("open {}: {e}", db.display()))?;
        fill::many_sessions(&mut conn, 0, n).map_err(|e| format!("fill the sessions: {e}"))?;
        drop(conn);
        // The file was written from outside: this start checks it whole; its stop is clean.
        self.answer_once(&dirs[1])?;
        let mut times = [Vec::new(), Vec::new()];
        for round in 0..p.startups.max(1) {
            let pair = if round % 2 == 0 { [0, 1] } else { [1, 0] };
            for i in pair {
                times[i].push(millis(self.answer_once(&dirs[i])?));
            }
        }
        let after_kill = self.answer_after_kill(&dirs[1])?;
        self.rows.push(
            Row::new(
                format!(
                    "start-up with {} sessions vs an empty store: exec to first answer (median of {})",
                    thousands(n as u64),
                    p.startups
                ),
                Unit::Millis,
                median_f64(&times[1]),
                Some(median_f64(&times[0])),
            )
            .goal(Goal::RatioAtMost(2.0))
            .note(format!(
                "floor: the same daemon, no sessions; after a SIGKILL (whole-file check): {after_kill:.1} ms"
            )),
        );
        Ok(())
    }

    /// Exec to the daemon's answer to `initialize`, then an orderly stop.
    fn answer_once(&self, config_dir: &Path) -> Result<Duration, String> {
        let started = Instant::now();
        let mut server = self
            .launcher
            .spawn_in(Kind::Daemon, config_dir, false)
            .map_err(ctx("start the daemon"))?;
        let stream = server
            .connect_when_accepting()
            .map_err(ctx("wait for the daemon"))?;
        let stream =
            procs::initialize_on(stream).map_err(|e| server.failure("initialize the daemon", e))?;
        let took = started.elapsed();
        drop(stream);
        server.stop().map_err(ctx("stop the daemon"))?;
        Ok(took)
    }

    /// Starts the daemon, kills it (SIGKILL) once it answers, and returns how long the
    /// next start takes to answer, in ms.
    fn answer_after_kill(&self, config_dir: &Path) -> Result<f64, String> {
        let mut server = self
            .launcher
            .spawn_in(Kind::Daemon, config_dir, false)
            .map_err(ctx("start the daemon"))?;
        let stream = server
            .connect_when_accepting()
            .map_err(ctx("wait for the daemon"))?;
        let stream =
            procs::initialize_on(stream).map_err(|e| server.failure("initialize the daemon", e))?;
        server.child.kill().map_err(ctx("kill the daemon"))?;
        server
            .wait_exit()
            .map_err(ctx("wait for the killed daemon"))?;
        drop(stream);
        Ok(millis(self.answer_once(config_dir)?))
    }

    /// Exec to the socket accepting, then stop it.
    fn start_once(&self, kind: Kind, config_dir: &Path) -> Result<Duration, String> {
        let started = std::time::Instant::now();
        let mut server = self
            .launcher
            .spawn_in(kind, config_dir, false)
            .map_err(ctx(&format!("start the {}", kind.name())))?;
        server
            .wait_accepting()
            .map_err(ctx(&format!("wait for the {}", kind.name())))?;
        let took = started.elapsed();
        server
            .stop()
            .map_err(ctx(&format!("stop the {}", kind.name())))?;
        Ok(took)
    }
}
