//! Memory: RSS idle, and with many idle initialized connections; the cost of one.

use super::clients::open_many;
use super::{SETTLE, ctx, mib, progress, slot};
use crate::procs::Kind;
use crate::report::{Goal, Row, Unit, thousands};
use crate::run::Bench;

impl Bench {
    pub async fn memory(&mut self) -> Result<(), String> {
        let n = self.plan.idle_conns;
        progress(format!(
            "memory: RSS idle, and with {} idle initialized connections",
            thousands(n as u64)
        ));
        let mut idle = [0u64; 2];
        let mut with = [0u64; 2];
        for kind in [Kind::Floor, Kind::Daemon] {
            let server = self
                .launcher
                .start(kind)
                .map_err(ctx(&format!("start the {}", kind.name())))?;
            tokio::time::sleep(SETTLE).await;
            idle[slot(kind)] = server.rss().map_err(ctx("read RSS"))?;
            let conns = open_many(&server.socket, n)
                .await
                .map_err(ctx(&format!("open {n} connections to the {}", kind.name())))?;
            tokio::time::sleep(SETTLE).await;
            with[slot(kind)] = server.rss().map_err(ctx("read RSS"))?;
            drop(conns);
            server
                .stop()
                .map_err(ctx(&format!("stop the {}", kind.name())))?;
        }
        let per = |i: usize| with[i].saturating_sub(idle[i]) as f64 / n.max(1) as f64 / 1024.0;
        self.rows.push(
            Row::new("RSS idle", Unit::MiB, mib(idle[1]), Some(mib(idle[0])))
                .goal(Goal::Below(15.0, "MiB")),
        );
        self.rows.push(Row::new(
            format!("RSS with {} idle connections", thousands(n as u64)),
            Unit::MiB,
            mib(with[1]),
            Some(mib(with[0])),
        ));
        self.rows.push(
            Row::new("per idle connection", Unit::KiB, per(1), Some(per(0)))
                .goal(Goal::Below(16.0, "KiB")),
        );
        Ok(())
    }
}
