//! Start-up: exec to the socket accepting (the floor's and the daemon's), and how long an
//! `--ephemeral` daemon takes to exit once its last client leaves.

use super::{count, ctx, order, progress, slot};
use crate::procs::{self, Kind};
use crate::report::{Goal, Row, Unit, millis};
use crate::run::Bench;
use crate::stats::median_f64;
use std::path::Path;
use std::time::Duration;

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
        Ok(())
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
