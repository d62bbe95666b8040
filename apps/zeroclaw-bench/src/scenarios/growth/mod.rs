//! The growth group (issue 16): how each cost grows with the work, each figure at three
//! sizes. Replay of a long history against a floor that reads the same rows from the same
//! SQLite file (`replay_floor.rs`); `session/list` with many sessions against the same query
//! run straight on the file; many turns streaming at once against the floor's concurrent
//! `bench/stream`; RSS per loaded session; `session/compact` of a long session with the fake
//! provider writing the summary.
//!
//! Every part has its own config dir (its own database), filled through SQLite while its
//! daemon is stopped (`fill.rs`), and its own fake provider. Each part is a file:
//! `replay.rs`, `sessions.rs` (the list and RSS per loaded session), `turns.rs`,
//! `compaction.rs`.

mod compaction;
mod replay;
mod sessions;
mod turns;

use super::ctx;
use crate::client::Conn;
use crate::procs::{Kind, Launcher, Server};
use crate::report::Row;
use std::path::{Path, PathBuf};
use zeroclaw_testkit::{FakeProvider, openai};

/// The daemon's context window in the growth config: a 100k-token session is one a 128k
/// model compacts.
const WINDOW: u64 = 128_000;

/// What the fake provider answers every summarising request with.
const SUMMARY: &str = "The user is fixing a parser test that broke when the tokenizer began \
     keeping the trailing newline. The agent ran the failing cases with cargo test, found the \
     empty statement at the end of the input, and trimmed the input in tokenizer.rs. Remaining: \
     run the whole suite and add a case for input with trailing whitespace.";

/// The three sizes of each figure, and how many rounds.
#[derive(Debug, Clone)]
pub struct Sizes {
    pub messages: [usize; 3],
    pub sessions: [usize; 3],
    pub turns: [usize; 3],
    /// Chunks each concurrent turn streams.
    pub turn_chunks: usize,
    pub tokens: [usize; 3],
    pub rounds: usize,
    /// `session/list` calls per p50.
    pub list_calls: usize,
}

impl Sizes {
    pub fn full() -> Sizes {
        Sizes {
            messages: [1_000, 10_000, 100_000],
            sessions: [100, 1_000, 10_000],
            turns: [1, 10, 50],
            turn_chunks: 10_000,
            tokens: [1_000, 10_000, 100_000],
            rounds: 3,
            list_calls: 200,
        }
    }

    pub fn quick() -> Sizes {
        Sizes {
            rounds: 2,
            list_calls: 50,
            ..Sizes::full()
        }
    }

    pub fn smoke() -> Sizes {
        Sizes {
            messages: [100, 1_000, 10_000],
            sessions: [10, 100, 1_000],
            turns: [1, 5, 10],
            turn_chunks: 200,
            tokens: [1_000, 10_000, 100_000],
            rounds: 1,
            list_calls: 10,
        }
    }
}

fn sql(what: &str) -> impl Fn(rusqlite::Error) -> String + '_ {
    move |e| format!("{what}: {e}")
}

/// "×9.8 for ×10": how `values[i]` grew from `values[i - 1]` against how the size grew.
fn growth_notes(values: &[f64; 3], sizes: &[usize; 3]) -> [Option<String>; 3] {
    let mut notes = [None, None, None];
    for i in 1..3 {
        if values[i - 1] > 0.0 && sizes[i - 1] > 0 {
            notes[i] = Some(format!(
                "×{:.1} for ×{}",
                values[i] / values[i - 1],
                trim(sizes[i] as f64 / sizes[i - 1] as f64)
            ));
        }
    }
    notes
}

fn trim(v: f64) -> String {
    let s = format!("{v:.1}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

fn with_note(row: Row, note: Option<String>) -> Row {
    match note {
        Some(n) => row.note(n),
        None => row,
    }
}

/// Everything the group needs from the run.
pub struct Group<'a> {
    pub launcher: &'a Launcher,
    pub dir: &'a Path,
    pub sizes: Sizes,
    pub rows: Vec<Row>,
    pub errors: Vec<String>,
    fake: FakeProvider,
}

impl<'a> Group<'a> {
    pub fn new(launcher: &'a Launcher, dir: &'a Path, sizes: Sizes) -> Result<Group<'a>, String> {
        let fake = FakeProvider::start_blocking()
            .map_err(|e| format!("cannot start the growth fake provider: {e}"))?;
        fake.answer_when(
            "Write the updated summary",
            openai::text(&SUMMARY.split_inclusive(' ').collect::<Vec<_>>()),
        );
        Ok(Group {
            launcher,
            dir,
            sizes,
            rows: Vec::new(),
            errors: Vec::new(),
            fake,
        })
    }

    pub async fn run(&mut self) -> Result<(), String> {
        self.replay().await?;
        self.sessions().await?;
        self.concurrent_turns().await?;
        self.compaction().await?;
        Ok(())
    }

    /// A config dir of its own (own database), the daemon started once to create the
    /// database and stopped; returns the dir and the database's path.
    async fn prepare(&self, name: &str) -> Result<(PathBuf, PathBuf), String> {
        let cfg = self.dir.join(name);
        std::fs::create_dir_all(&cfg).map_err(|e| format!("{}: {e}", cfg.display()))?;
        let config = format!(
            "[provider]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"fake\"\ncontext_window = {WINDOW}\n\n[gateway]\nlisten = \"127.0.0.1:0\"\n",
            self.fake.base_url()
        );
        std::fs::write(cfg.join("config.toml"), config)
            .map_err(|e| format!("cannot write {name}/config.toml: {e}"))?;
        let daemon = self.start_daemon(&cfg)?;
        // The socket accepts before the store is open; an answered call means it is.
        Conn::open(&daemon.socket)
            .await
            .map_err(ctx("initialize the daemon"))?;
        daemon.stop().map_err(ctx("stop the daemon"))?;
        let db = cfg.join("data").join("zeroclaw.db");
        if !db.is_file() {
            return Err(format!("the daemon made no database at {}", db.display()));
        }
        Ok((cfg, db))
    }

    fn start_daemon(&self, cfg: &Path) -> Result<Server, String> {
        let mut daemon = self
            .launcher
            .spawn_in(Kind::Daemon, cfg, false)
            .map_err(ctx("start the daemon"))?;
        daemon
            .wait_accepting()
            .map_err(ctx("wait for the daemon"))?;
        Ok(daemon)
    }

    fn cwd(&self) -> String {
        crate::workspace::workspace(self.dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growth_notes_compare_each_size_with_the_one_before() {
        let notes = growth_notes(&[2.0, 19.0, 250.0], &[1_000, 10_000, 100_000]);
        assert_eq!(notes[0], None);
        assert_eq!(notes[1].as_deref(), Some("×9.5 for ×10"));
        assert_eq!(notes[2].as_deref(), Some("×13.2 for ×10"));
        let notes = growth_notes(&[1.0, 0.0, 3.0], &[1, 10, 50]);
        assert_eq!(notes[1].as_deref(), Some("×0.0 for ×10"));
        assert_eq!(notes[2], None, "nothing to compare with a zero");
    }
}
