//! The counts of a run: the full one, `--quick` (about a quarter) and `--smoke` (seconds,
//! goals not checked).

use crate::scenarios::growth::Sizes;

/// The counts of one run.
#[derive(Debug, Clone)]
pub struct Plan {
    pub name: &'static str,
    pub check: bool,
    pub rt_calls: usize,
    pub rt_warmup: usize,
    pub rt_rounds: usize,
    pub pipe_total: usize,
    pub pipe_depth: usize,
    pub pipe_rounds: usize,
    pub clients: usize,
    pub per_client: usize,
    pub clients_rounds: usize,
    pub chunks: usize,
    pub stream_rounds: usize,
    pub idle_conns: usize,
    pub startups: usize,
    pub ephemeral_runs: usize,
    /// `bash -c true` spawns of each kind (confined, unconfined).
    pub sandbox_calls: usize,
    /// Workspace sizes (files) of the checkpoint scenario, and turns per figure.
    pub checkpoint_sizes: Vec<usize>,
    pub checkpoint_rounds: usize,
    pub growth: Sizes,
}

impl Plan {
    pub fn full() -> Plan {
        Plan {
            name: "full",
            check: true,
            rt_calls: 20_000,
            rt_warmup: 2_000,
            rt_rounds: 4,
            pipe_total: 200_000,
            pipe_depth: 256,
            pipe_rounds: 3,
            clients: 1_000,
            per_client: 100,
            clients_rounds: 3,
            chunks: 100_000,
            stream_rounds: 3,
            idle_conns: 10_000,
            startups: 20,
            ephemeral_runs: 3,
            sandbox_calls: 200,
            checkpoint_sizes: vec![1_000, 10_000, 50_000],
            checkpoint_rounds: 5,
            growth: Sizes::full(),
        }
    }

    pub fn quick() -> Plan {
        Plan {
            name: "quick",
            rt_calls: 5_000,
            rt_warmup: 500,
            rt_rounds: 2,
            pipe_total: 50_000,
            pipe_rounds: 2,
            clients: 250,
            per_client: 100,
            clients_rounds: 2,
            chunks: 25_000,
            stream_rounds: 2,
            idle_conns: 2_500,
            startups: 6,
            ephemeral_runs: 1,
            sandbox_calls: 60,
            checkpoint_sizes: vec![1_000, 10_000],
            checkpoint_rounds: 3,
            growth: Sizes::quick(),
            ..Plan::full()
        }
    }

    pub fn smoke() -> Plan {
        Plan {
            name: "smoke",
            check: false,
            rt_calls: 200,
            rt_warmup: 20,
            rt_rounds: 1,
            pipe_total: 256,
            pipe_depth: 256,
            pipe_rounds: 1,
            clients: 20,
            per_client: 10,
            clients_rounds: 1,
            chunks: 1_000,
            stream_rounds: 1,
            idle_conns: 100,
            startups: 2,
            ephemeral_runs: 1,
            sandbox_calls: 10,
            checkpoint_sizes: vec![200],
            checkpoint_rounds: 1,
            growth: Sizes::smoke(),
        }
    }
}
