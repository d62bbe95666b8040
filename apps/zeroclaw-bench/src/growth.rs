//! The growth group (issue 16): how each cost grows with the work, each figure at three
//! sizes. Replay of a long history against a floor that reads the same rows from the same
//! SQLite file (`replay_floor.rs`); `session/list` with many sessions against the same query
//! run straight on the file; many turns streaming at once against the floor's concurrent
//! `bench/stream`; RSS per loaded session; `session/compact` of a long session with the fake
//! provider writing the summary.
//!
//! Every part has its own config dir (its own database), filled through SQLite while its
//! daemon is stopped (`fill.rs`), and its own fake provider.

use crate::client::{Conn, Incoming, check_answer};
use crate::fill::{self, Size};
use crate::procs::{self, Kind, Launcher, Server};
use crate::report::{Row, Unit, thousands};
use crate::scenarios::{median_f64, quantile};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::task::JoinSet;
use zeroclaw_testkit::{FakeProvider, openai};

/// The text of every streamed chunk (as in the streaming scenario).
const CHUNK: &str = "tok ";
/// The daemon's context window in the growth config: a 100k-token session is one a 128k
/// model compacts.
const WINDOW: u64 = 128_000;
/// What the fake provider answers every summarising request with.
const SUMMARY: &str = "The user is fixing a parser test that broke when the tokenizer began \
     keeping the trailing newline. The agent ran the failing cases with cargo test, found the \
     empty statement at the end of the input, and trimmed the input in tokenizer.rs. Remaining: \
     run the whole suite and add a case for input with trailing whitespace.";
/// The search in `session/list`: every hundredth session's title has it (`fill.rs`).
const SEARCH: &str = "flaky";
/// The page `session/list` is asked for.
const LIST_PAGE: usize = 50;
/// Connections the sessions are loaded over in the RSS-per-session figure.
const LOAD_CONNS: usize = 4;
/// Pause before reading RSS, so the daemon has finished reacting.
const SETTLE: Duration = Duration::from_millis(300);

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

fn progress(what: impl AsRef<str>) {
    eprintln!("zeroclaw-bench: {}", what.as_ref());
}

fn ctx(what: &str) -> impl Fn(io::Error) -> String + '_ {
    move |e| format!("{what}: {e}")
}

fn sql(what: &str) -> impl Fn(rusqlite::Error) -> String + '_ {
    move |e| format!("{what}: {e}")
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// Floor first on even rounds, the daemon first on odd ones.
fn order(round: usize) -> [Kind; 2] {
    if round.is_multiple_of(2) {
        [Kind::Floor, Kind::Daemon]
    } else {
        [Kind::Daemon, Kind::Floor]
    }
}

fn slot(kind: Kind) -> usize {
    match kind {
        Kind::Floor => 0,
        Kind::Daemon => 1,
    }
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
        self.dir.display().to_string()
    }

    /// `session/load {replay:true}` of 1k / 10k / 100k messages, each on a fresh server:
    /// time to the answer, peak RSS, CPU per message; the floor reads the same file.
    async fn replay(&mut self) -> Result<(), String> {
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
                self.rows.push(Row::new(
                    format!("{label}: server CPU per message"),
                    Unit::Micros,
                    med(&cpus, i, 1),
                    Some(med(&cpus, i, 0)),
                ));
            }
        }
        Ok(())
    }

    /// `session/list` latency and RSS per loaded session at 100 / 1k / 10k sessions.
    async fn sessions(&mut self) -> Result<(), String> {
        let s = self.sizes.clone();
        progress(format!(
            "growth: session/list and RSS per loaded session with {} sessions",
            s.sessions.map(|n| thousands(n as u64)).join(" / ")
        ));
        let (cfg, db) = self.prepare("list").await?;
        let mut have = 0;
        let mut first = [[0.0; 2]; 3];
        let mut search = [[0.0; 2]; 3];
        let mut per_session = [0.0; 3];
        let mut rss = [(0u64, 0u64); 3];
        for (i, &n) in s.sessions.iter().enumerate() {
            let mut conn = fill::open(&db).map_err(sql("open the database"))?;
            fill::many_sessions(&mut conn, have, n).map_err(sql("fill the sessions"))?;
            drop(conn);
            have = n;
            let daemon = self.start_daemon(&cfg)?;
            let pid = daemon.pid();

            // Loaded sessions: RSS before and after `session/load` of every one.
            let mut conns = Vec::new();
            for _ in 0..LOAD_CONNS {
                conns.push(
                    Conn::open(&daemon.socket)
                        .await
                        .map_err(ctx("connect to the daemon"))?,
                );
            }
            tokio::time::sleep(SETTLE).await;
            let idle = procs::rss_of(pid).map_err(ctx("read RSS"))?;
            let mut set = JoinSet::new();
            for (c, mut conn) in conns.into_iter().enumerate() {
                set.spawn(async move {
                    for j in (c..n).step_by(LOAD_CONNS) {
                        let id = fill::session_id(0x115, j);
                        conn.call_ok("session/load", &format!(r#"{{"sessionId":"{id}"}}"#))
                            .await?;
                    }
                    Ok::<Conn, io::Error>(conn)
                });
            }
            let mut conns = Vec::new();
            while let Some(joined) = set.join_next().await {
                conns.push(
                    joined
                        .map_err(|e| format!("a loading task failed: {e}"))?
                        .map_err(ctx("session/load"))?,
                );
            }
            tokio::time::sleep(SETTLE).await;
            let loaded = procs::rss_of(pid).map_err(ctx("read RSS"))?;
            rss[i] = (idle, loaded);
            per_session[i] = loaded.saturating_sub(idle) as f64 / n as f64 / 1024.0;

            // `session/list`: the daemon, then the same query on the file.
            let client = &mut conns[0];
            let page = format!(r#"{{"limit":{LIST_PAGE}}}"#);
            let find = format!(r#"{{"limit":{LIST_PAGE},"search":"{SEARCH}"}}"#);
            let floor = fill::open(&db).map_err(sql("open the database"))?;
            [first[i][0], first[i][1]] =
                list_p50(client, &floor, &page, None, s.list_calls).await?;
            [search[i][0], search[i][1]] = list_p50(
                client,
                &floor,
                &find,
                Some(&format!("%{SEARCH}%")),
                s.list_calls,
            )
            .await?;
            drop(floor);
            drop(conns);
            daemon.stop().map_err(ctx("stop the daemon"))?;
        }
        let d = |v: &[[f64; 2]; 3]| [v[0][1], v[1][1], v[2][1]];
        let first_notes = growth_notes(&d(&first), &s.sessions);
        let search_notes = growth_notes(&d(&search), &s.sessions);
        for (i, &n) in s.sessions.iter().enumerate() {
            let label = format!("session/list, {} sessions", thousands(n as u64));
            self.rows.push(with_note(
                Row::new(
                    format!("{label}: first page of {LIST_PAGE}, p50"),
                    Unit::Millis,
                    first[i][1],
                    Some(first[i][0]),
                ),
                first_notes[i].clone(),
            ));
            self.rows.push(with_note(
                Row::new(
                    format!("{label}: search (1 in 100 match), p50"),
                    Unit::Millis,
                    search[i][1],
                    Some(search[i][0]),
                ),
                search_notes[i].clone(),
            ));
        }
        let notes = growth_notes(&per_session, &s.sessions);
        for (i, &n) in s.sessions.iter().enumerate() {
            let row = Row::new(
                format!("RSS per loaded session, {} loaded", thousands(n as u64)),
                Unit::KiB,
                per_session[i],
                None,
            )
            .note(format!(
                "{:.1} MiB loaded, {:.1} MiB before",
                mib(rss[i].1),
                mib(rss[i].0)
            ));
            self.rows.push(with_note(row, notes[i].clone()));
        }
        Ok(())
    }

    /// 1 / 10 / 50 turns streaming at once, each session on its own connection, against the
    /// floor streaming as many at once.
    async fn concurrent_turns(&mut self) -> Result<(), String> {
        let s = self.sizes.clone();
        progress(format!(
            "growth: {} concurrent turns of {} chunks each",
            s.turns.map(|n| n.to_string()).join(" / "),
            thousands(s.turn_chunks as u64)
        ));
        let (cfg, _) = self.prepare("turns").await?;
        let floor = self
            .launcher
            .start(Kind::Floor)
            .map_err(ctx("start the floor"))?;
        let daemon = self.start_daemon(&cfg)?;
        let pids = [floor.pid(), daemon.pid()];
        let sockets = [floor.socket.clone(), daemon.socket.clone()];
        let mut rates = vec![[Vec::new(), Vec::new()]; 3];
        let mut fair = vec![[Vec::new(), Vec::new()]; 3];
        let mut cpu = vec![[Vec::new(), Vec::new()]; 3];
        let cwd = serde_json::to_string(&self.cwd()).unwrap_or_default();
        'sizes: for (i, &n) in s.turns.iter().enumerate() {
            for round in 0..s.rounds.max(1) {
                for kind in order(round) {
                    let k = slot(kind);
                    let mut conns = Vec::with_capacity(n);
                    let mut requests = Vec::with_capacity(n);
                    for t in 0..n {
                        let mut conn = Conn::open(&sockets[k])
                            .await
                            .map_err(ctx("connect for a turn"))?;
                        let request = match kind {
                            Kind::Floor => (
                                "bench/stream",
                                format!(
                                    r#"{{"n":{},"text":"{CHUNK}","sessionId":"{}","turnId":"{}"}}"#,
                                    s.turn_chunks,
                                    fill::session_id(0xf1, t),
                                    fill::session_id(0xf2, t)
                                ),
                            ),
                            Kind::Daemon => {
                                let created = conn
                                    .call_value("session/new", &format!(r#"{{"cwd":{cwd}}}"#))
                                    .await
                                    .map_err(ctx("session/new"))?;
                                let id = created
                                    .get("sessionId")
                                    .and_then(|v| v.as_str())
                                    .ok_or("session/new answered without a sessionId")?
                                    .to_owned();
                                (
                                    "session/prompt",
                                    format!(r#"{{"sessionId":"{id}","prompt":"stream please"}}"#),
                                )
                            }
                        };
                        conns.push(conn);
                        requests.push(request);
                    }
                    if kind == Kind::Daemon {
                        for _ in 0..n {
                            self.fake.push(openai::many_chunks(s.turn_chunks, CHUNK));
                        }
                    }
                    let before = procs::cpu_ns(pids[k]).ok();
                    let outcome = concurrent(conns, requests, s.turn_chunks).await;
                    let after = procs::cpu_ns(pids[k]).ok();
                    let outcome = match outcome {
                        Ok(o) => o,
                        Err(e) => {
                            self.errors.push(format!(
                                "{n} concurrent turns on the {}: {e}{}",
                                kind.name(),
                                procs::log_tail(&self.launcher.log)
                            ));
                            break 'sizes;
                        }
                    };
                    rates[i][k].push(outcome.aggregate);
                    fair[i][k].push(outcome.fairness);
                    if let (Some(a), Some(b)) = (before, after) {
                        cpu[i][k].push(
                            b.saturating_sub(a) as f64 / (n * s.turn_chunks) as f64 / 1_000.0,
                        );
                    }
                }
            }
        }
        let _ = daemon.stop();
        drop(floor);
        if rates.iter().any(|r| r.iter().any(Vec::is_empty)) {
            return Ok(());
        }
        let med = |v: &Vec<[Vec<f64>; 2]>, i: usize, k: usize| median_f64(&v[i][k]);
        let notes = growth_notes(
            &[med(&rates, 0, 1), med(&rates, 1, 1), med(&rates, 2, 1)],
            &s.turns,
        );
        for (i, &n) in s.turns.iter().enumerate() {
            let label = format!(
                "{n} concurrent turn{} × {} chunks",
                if n == 1 { "" } else { "s" },
                thousands(s.turn_chunks as u64)
            );
            let row = Row::new(
                format!("{label}: aggregate rate at the clients"),
                Unit::PerSec,
                med(&rates, i, 1),
                Some(med(&rates, i, 0)),
            )
            .note("every chunk arrived");
            self.rows.push(with_note(row, notes[i].clone()));
            if n > 1 {
                self.rows.push(Row::new(
                    format!("{label}: slowest / fastest session's rate"),
                    Unit::Ratio,
                    med(&fair, i, 1),
                    Some(med(&fair, i, 0)),
                ));
            }
            self.rows.push(Row::new(
                format!("{label}: server CPU per chunk"),
                Unit::Micros,
                med(&cpu, i, 1),
                Some(med(&cpu, i, 0)),
            ));
        }
        Ok(())
    }

    /// `session/compact` of sessions of ~1k / 10k / 100k tokens (one fresh session a round).
    async fn compaction(&mut self) -> Result<(), String> {
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

/// The p50 of `calls` `session/list` calls with `params` and of as many runs of the floor:
/// the daemon's query (`store/db.rs` `sessions_page`, first page, copied) run straight on the
/// file, its rows read into tuples. Alternating, so load on the machine hits both alike;
/// five of each first, not counted; `search` is the LIKE pattern the daemon makes of the
/// search (`%text%`). Returns `[floor, daemon]` in ms.
async fn list_p50(
    conn: &mut Conn,
    db: &rusqlite::Connection,
    params: &str,
    search: Option<&str>,
    calls: usize,
) -> Result<[f64; 2], String> {
    let filter = match search {
        None => "?2 IS NULL",
        Some(_) => r"(s.title LIKE ?2 ESCAPE '\' OR s.cwd LIKE ?2 ESCAPE '\')",
    };
    let query = format!(
        "SELECT s.id, s.title, s.cwd, s.model, s.always_allow, s.created_at, s.updated_at, \
         (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id) \
         FROM sessions s WHERE {filter} ORDER BY s.updated_at DESC, s.id LIMIT ?1"
    );
    let mut stmt = db.prepare(&query).map_err(sql("prepare the list query"))?;
    let limit = LIST_PAGE as i64;
    let mut samples = [Vec::with_capacity(calls), Vec::with_capacity(calls)];
    let ns = |t: Instant| u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX);
    for i in 0..calls + 5 {
        let t = Instant::now();
        let rows = stmt
            .query_map(rusqlite::params![limit, search], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, i64>(5)?,
                    r.get::<_, i64>(6)?,
                    r.get::<_, i64>(7)?,
                ))
            })
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(sql("run the list query"))?;
        std::hint::black_box(rows);
        let floor = ns(t);
        let t = Instant::now();
        conn.call_ok("session/list", params)
            .await
            .map_err(ctx("session/list"))?;
        let daemon = ns(t);
        if i >= 5 {
            samples[0].push(floor);
            samples[1].push(daemon);
        }
    }
    Ok(samples.map(|mut s| {
        s.sort_unstable();
        quantile(&s, 0.5) as f64 / 1e6
    }))
}

struct Concurrent {
    /// All chunks over the span from the first chunk anywhere to the last.
    aggregate: f64,
    /// The slowest session's rate over the fastest's.
    fairness: f64,
}

/// Every connection sends its request at once and counts its chunks; fails if any chunk
/// is missing.
async fn concurrent(
    conns: Vec<Conn>,
    requests: Vec<(&'static str, String)>,
    expected: usize,
) -> io::Result<Concurrent> {
    let (go_tx, go_rx) = tokio::sync::watch::channel(false);
    let mut set = JoinSet::new();
    for (mut conn, (method, params)) in conns.into_iter().zip(requests) {
        let mut go = go_rx.clone();
        set.spawn(async move {
            let _ = go.wait_for(|go| *go).await;
            let id = conn.send(method, &params).await?;
            let mut chunks = 0usize;
            let mut first = None;
            let mut last = Instant::now();
            loop {
                let line = conn.reader.line().await.map_err(|e| {
                    io::Error::new(e.kind(), format!("{e} after {chunks} of {expected} chunks"))
                })?;
                let msg = Incoming::parse(line)?;
                if msg.method.is_some() {
                    if msg.params.as_ref().and_then(|p| p.kind.as_deref())
                        == Some("agent_message_chunk")
                    {
                        last = Instant::now();
                        first.get_or_insert(last);
                        chunks += 1;
                    }
                    continue;
                }
                check_answer(&msg, id, method, line)?;
                break;
            }
            if chunks != expected {
                return Err(io::Error::other(format!(
                    "{chunks} chunks reached a client, {expected} were streamed"
                )));
            }
            Ok::<_, io::Error>((first.unwrap_or(last), last, chunks))
        });
    }
    tokio::task::yield_now().await;
    let _ = go_tx.send(true);
    let mut spans = Vec::new();
    while let Some(joined) = set.join_next().await {
        spans.push(joined.map_err(io::Error::other)??);
    }
    let start = spans.iter().map(|s| s.0).min();
    let end = spans.iter().map(|s| s.1).max();
    let total: usize = spans.iter().map(|s| s.2).sum();
    let aggregate = match (start, end) {
        (Some(a), Some(b)) if b > a => total as f64 / (b - a).as_secs_f64(),
        _ => 0.0,
    };
    let rates: Vec<f64> = spans
        .iter()
        .map(|(a, b, n)| {
            let span = (*b - *a).as_secs_f64();
            if span > 0.0 {
                (*n - 1) as f64 / span
            } else {
                0.0
            }
        })
        .collect();
    let min = rates.iter().copied().fold(f64::INFINITY, f64::min);
    let max = rates.iter().copied().fold(0.0, f64::max);
    Ok(Concurrent {
        aggregate,
        fairness: if max > 0.0 { min / max } else { 0.0 },
    })
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
