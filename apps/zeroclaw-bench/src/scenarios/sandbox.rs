//! The sandbox's added cost per `bash` call (issue 30): spawn to exit of `bash -c true`
//! started the way the bash tool starts it (its own process group, stdin empty, output
//! piped), confined (`workspace-write`, network off, the data dir hidden: what a session
//! gets by default, prepared per call as the tool does) against the same command
//! unconfined (mode `full`). Both in this process, alternating, so the floor is the
//! unconfined spawn measured in the same run.

use super::{count, progress};
use crate::report::{Goal, Row, Unit, millis};
use crate::run::Bench;
use crate::stats::median_f64;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;
use zeroclaw_sandbox::{Mode, Policy, Prepared, Support};

impl Bench {
    pub fn sandbox(&mut self) -> Result<(), String> {
        let calls = self.plan.sandbox_calls;
        let support = Support::probe();
        if let Some(reason) = support.unavailable_reason() {
            self.rows.push(
                Row::new("sandbox: added cost per bash call", Unit::Millis, 0.0, None).note(
                    format!("not measured: the sandbox is unavailable here ({reason})"),
                ),
            );
            return Ok(());
        }
        progress(format!(
            "sandbox: {} of `bash -c true`, confined and not ({})",
            count(calls, "spawn"),
            support.mechanism()
        ));
        let cwd = self.dir.join("sandbox-work");
        let hidden = self.dir.join("sandbox-data");
        for dir in [&cwd, &hidden] {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        let confined = Policy::new(Mode::WorkspaceWrite, &cwd)
            .network(false)
            .hide(&hidden);
        let unconfined = Policy::new(Mode::Full, &cwd);
        // One of each first: the first spawn pays for page faults the others do not.
        spawn_true(&confined, &support, &cwd)?;
        spawn_true(&unconfined, &support, &cwd)?;
        let (mut with, mut without) = (Vec::new(), Vec::new());
        for round in 0..calls.max(1) {
            let pair = if round % 2 == 0 {
                let a = spawn_true(&unconfined, &support, &cwd)?;
                (spawn_true(&confined, &support, &cwd)?, a)
            } else {
                let a = spawn_true(&confined, &support, &cwd)?;
                (a, spawn_true(&unconfined, &support, &cwd)?)
            };
            with.push(pair.0);
            without.push(pair.1);
        }
        let (with, without) = (median_f64(&with), median_f64(&without));
        self.rows.push(
            Row::new(
                format!(
                    "sandbox: `bash -c true` spawn to exit, confined (median of {calls}; floor: unconfined)"
                ),
                Unit::Millis,
                with,
                Some(without),
            )
            .note(support.mechanism()),
        );
        self.rows.push(
            Row::new(
                "sandbox: added cost per bash call (confined − unconfined medians)",
                Unit::Millis,
                with - without,
                None,
            )
            .goal(Goal::AtMost(2.0, "ms")),
        );
        Ok(())
    }
}

/// Prepares `policy` as the bash tool does for each call, then runs `bash -c true` under
/// it to its exit: milliseconds from preparing to reaped.
fn spawn_true(policy: &Policy, support: &Support, cwd: &Path) -> Result<f64, String> {
    let started = Instant::now();
    let prepared: Prepared = policy
        .prepare(support)
        .map_err(|e| format!("prepare the sandbox: {e}"))?;
    let mut cmd = Command::new("bash");
    cmd.args(["-c", "true"])
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    prepared.install(&mut cmd);
    let out = cmd
        .output()
        .map_err(|e| format!("run `bash -c true`: {e}"))?;
    let took = started.elapsed();
    if !out.status.success() {
        return Err(format!(
            "`bash -c true` failed in mode {}: {} {}",
            prepared.mode(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(millis(took))
}
