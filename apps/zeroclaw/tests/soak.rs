//! Load and soak: many clients, each sending a stream of mixed requests (status, session
//! create/list/load/delete, `session/messages` on a real session, invalid frames, unknown
//! methods) with a few requests in flight, disconnecting and reconnecting at random (some
//! politely after their answers, some abruptly with requests in flight). Every answer is
//! checked against what its request must get, and counted per id: none may be lost or
//! duplicated. Afterwards the daemon's resident memory must be back near its baseline.
//!
//! The small run is part of the normal suite. The big one (500 clients × 2,000 requests):
//!
//! ```text
//! cargo test --release -p zeroclaw --test soak -- --ignored --nocapture
//! ```
//!
//! Knobs for investigating memory: `ZC_SOAK_ROUNDS=N` repeats the load N times on one
//! daemon (a leak grows every round; allocator retention does not), and
//! `ZC_SOAK_MALLOC_TRIM=1` (needs gdb and ptrace rights) makes the daemon call
//! `malloc_trim(0)` after each round, to tell free-but-kept heap from memory in use.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// Linux only: it reads the daemon's memory from /proc and raises RLIMIT_NOFILE.
#![cfg(target_os = "linux")]

mod common;

use common::*;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use zeroclaw_testkit::openai;

/// Requests one client keeps in flight (the daemon allows 256 per connection).
const WINDOW: usize = 8;
/// The whole run must finish within this; it is a bound, not a measurement.
const RUN_BOUND: Duration = Duration::from_secs(30 * 60);
/// How far above its pre-load baseline the daemon's RSS may stay once the clients left.
const RSS_SLACK_KIB: u64 = 20 * 1024;

/// A tiny deterministic PRNG (xorshift64*), one per client.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// Uniform in `0..n`.
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) % n
    }
}

/// What the answer to a request must be.
#[derive(Debug, Clone)]
enum Expect {
    Initialize,
    Status,
    /// `session/messages` on the seeded session: exactly this many messages.
    Messages(usize),
    Error(i64),
    New,
    Deleted,
    List,
    Loaded(String),
}

fn check(expect: &Expect, frame: &Value) -> Result<Option<String>, String> {
    let bad = || Err(format!("expected {expect:?}, got {frame}"));
    let result = &frame["result"];
    match expect {
        Expect::Error(code) => {
            if frame["error"]["code"] != json!(code) || !frame["error"]["message"].is_string() {
                return bad();
            }
        }
        _ if frame.get("error").is_some() || frame.get("result").is_none() => return bad(),
        Expect::Initialize | Expect::Status => {
            if result["protocolVersion"] != json!(1) {
                return bad();
            }
        }
        Expect::Messages(n) => {
            let ok = result["total"] == json!(n)
                && result["messages"].as_array().is_some_and(|m| m.len() == *n);
            if !ok {
                return bad();
            }
        }
        Expect::New => {
            return match result["sessionId"].as_str() {
                Some(id) => Ok(Some(id.to_owned())),
                None => bad(),
            };
        }
        Expect::Deleted => {
            if result["deleted"] != json!(true) {
                return bad();
            }
        }
        Expect::List => {
            if !result["sessions"].is_array() {
                return bad();
            }
        }
        Expect::Loaded(id) => {
            if result["sessionId"] != json!(id) {
                return bad();
            }
        }
    }
    Ok(None)
}

/// What one client did.
#[derive(Debug, Default)]
struct Report {
    /// Frames sent, requests and invalid frames alike (initialize included).
    sent: u64,
    /// Answers received and checked.
    answered: u64,
    /// Requests (with an id) whose connection the client dropped before their answer
    /// (abrupt disconnects): owed nothing.
    abandoned: u64,
    /// Likewise, invalid frames owed a null-id answer.
    abandoned_null: u64,
    reconnects: u64,
    abrupt: u64,
    connections: u64,
}

struct Shared {
    endpoint: PathBuf,
    /// The seeded session and its message count.
    session: String,
    seeded: usize,
    requests: u64,
}

/// One connection's state.
struct Link {
    reader: tokio::io::Lines<BufReader<OwnedReadHalf>>,
    writer: OwnedWriteHalf,
    /// Requests sent on this connection and not yet answered, by id.
    pending: HashMap<u64, Expect>,
    /// Answers owed with `id: null` (frames that are not JSON, or not objects).
    null_owed: u64,
}

struct Client {
    index: usize,
    shared: std::sync::Arc<Shared>,
    rng: Rng,
    next_id: u64,
    /// How many answers each id got (ids are unique per client across its connections).
    answers: Vec<u8>,
    /// Sessions this client created and not yet deleted.
    own: Vec<String>,
    report: Report,
}

impl Client {
    fn fail(&self, what: String) -> String {
        format!("client {}: {what}", self.index)
    }

    async fn connect(&mut self) -> Result<Link, String> {
        let stream = UnixStream::connect(&self.shared.endpoint)
            .await
            .map_err(|e| self.fail(format!("connect: {e}")))?;
        let (read, writer) = stream.into_split();
        self.report.connections += 1;
        let mut link = Link {
            reader: BufReader::new(read).lines(),
            writer,
            pending: HashMap::new(),
            null_owed: 0,
        };
        let id = self.id();
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {"protocolVersion": 1}});
        link.pending.insert(id, Expect::Initialize);
        self.write(&mut link, format!("{frame}\n").as_bytes())
            .await?;
        self.drain(&mut link).await?;
        Ok(link)
    }

    fn id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.answers.push(0);
        id
    }

    async fn write(&mut self, link: &mut Link, bytes: &[u8]) -> Result<(), String> {
        self.report.sent += bytes.iter().filter(|b| **b == b'\n').count() as u64;
        link.writer
            .write_all(bytes)
            .await
            .map_err(|e| self.fail(format!("write: {e}")))
    }

    /// Picks the next frame to send; returns the line.
    fn next_frame(&mut self, link: &mut Link) -> String {
        let roll = self.rng.below(1000);
        let session = self.shared.session.clone();
        let (method, params, expect): (&str, Value, Expect) = match roll {
            0..350 => ("status", json!({}), Expect::Status),
            350..600 => (
                "session/messages",
                json!({"sessionId": session}),
                Expect::Messages(self.shared.seeded),
            ),
            600..620 => (
                "session/messages",
                json!({"sessionId": "no-such-session"}),
                Expect::Error(-32000),
            ),
            620..770 => ("no/such/method", json!({"x": roll}), Expect::Error(-32601)),
            770..820 => {
                link.null_owed += 1;
                return format!("{{\"jsonrpc\": \"2.0\", \"id\": {roll}, \"method\": ");
            }
            820..850 => {
                link.null_owed += 1;
                return format!("[{roll}, {{\"jsonrpc\": \"2.0\"}}]");
            }
            850..900 => {
                let id = self.id();
                link.pending.insert(id, Expect::Error(-32600));
                return json!({"jsonrpc": "1.0", "id": id, "method": "status"}).to_string();
            }
            900..915 => ("session/new", json!({"cwd": "/"}), Expect::New),
            915..935 if !self.own.is_empty() => {
                let victim = self
                    .own
                    .swap_remove(self.rng.below(self.own.len() as u64) as usize);
                (
                    "session/delete",
                    json!({"sessionId": victim}),
                    Expect::Deleted,
                )
            }
            935..940 => ("session/list", json!({}), Expect::List),
            940..960 => (
                "session/load",
                json!({"sessionId": session}),
                Expect::Loaded(session.clone()),
            ),
            _ => ("status", json!({}), Expect::Status),
        };
        let id = self.id();
        link.pending.insert(id, expect);
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
    }

    /// Reads and checks one answer.
    async fn read_one(&mut self, link: &mut Link) -> Result<(), String> {
        let line = match tokio::time::timeout(HANG_GUARD, link.reader.next_line()).await {
            Err(_) => {
                return Err(self.fail(format!(
                    "lost answers: nothing for {HANG_GUARD:?} with {} requests and {} null answers owed: {:?}",
                    link.pending.len(),
                    link.null_owed,
                    link.pending
                )));
            }
            Ok(Err(e)) => return Err(self.fail(format!("read: {e}"))),
            Ok(Ok(None)) => {
                return Err(self.fail(format!(
                    "the daemon closed the connection with {} answers owed",
                    link.pending.len() as u64 + link.null_owed
                )));
            }
            Ok(Ok(Some(line))) => line,
        };
        let frame: Value = serde_json::from_str(&line)
            .map_err(|e| self.fail(format!("invalid JSON from the daemon {line:?}: {e}")))?;
        if frame["jsonrpc"] != "2.0" || frame.get("method").is_some() {
            return Err(self.fail(format!("unexpected frame {frame}")));
        }
        self.report.answered += 1;
        match &frame["id"] {
            Value::Null => {
                let code = frame["error"]["code"].as_i64();
                if !matches!(code, Some(-32700 | -32600)) {
                    return Err(self.fail(format!("unexpected null-id answer {frame}")));
                }
                if link.null_owed == 0 {
                    return Err(self.fail(format!("a null-id answer nobody asked for: {frame}")));
                }
                link.null_owed -= 1;
            }
            id => {
                let id = id
                    .as_u64()
                    .ok_or_else(|| self.fail(format!("answer with a foreign id: {frame}")))?;
                let Some(count) = self.answers.get_mut(id as usize) else {
                    return Err(self.fail(format!("answer to an id never sent: {frame}")));
                };
                *count += 1;
                if *count > 1 {
                    return Err(self.fail(format!("duplicate answer: {frame}")));
                }
                let expect = link.pending.remove(&id).ok_or_else(|| {
                    self.fail(format!(
                        "answer to a request of an earlier connection: {frame}"
                    ))
                })?;
                if let Some(session) = check(&expect, &frame).map_err(|e| self.fail(e))? {
                    self.own.push(session);
                }
            }
        }
        Ok(())
    }

    /// Reads until nothing is owed on this connection.
    async fn drain(&mut self, link: &mut Link) -> Result<(), String> {
        while !link.pending.is_empty() || link.null_owed > 0 {
            self.read_one(link).await?;
        }
        Ok(())
    }

    async fn run(mut self) -> Result<Report, String> {
        let mut link = self.connect().await?;
        let mut left = self.shared.requests;
        while left > 0 {
            // Now and then, leave and come back: politely (after every answer) or abruptly
            // (with requests in flight, which are then owed nothing).
            if self.rng.below(1000) < 3 {
                if self.rng.below(3) == 0 {
                    self.report.abrupt += 1;
                    self.report.abandoned += link.pending.len() as u64;
                    self.report.abandoned_null += link.null_owed;
                } else {
                    self.drain(&mut link).await?;
                }
                drop(link);
                self.report.reconnects += 1;
                link = self.connect().await?;
            }
            let mut batch = String::new();
            while left > 0 && link.pending.len() + (link.null_owed as usize) < WINDOW {
                let frame = self.next_frame(&mut link);
                batch.push_str(&frame);
                batch.push('\n');
                left -= 1;
            }
            if !batch.is_empty() {
                self.write(&mut link, batch.as_bytes()).await?;
            }
            self.read_one(&mut link).await?;
        }
        self.drain(&mut link).await?;
        // Clean up: delete the sessions this client created (a steady state, so a later
        // round does not list more sessions than this one).
        while let Some(victim) = self.own.pop() {
            let id = self.id();
            link.pending.insert(id, Expect::Deleted);
            let frame = json!({"jsonrpc": "2.0", "id": id, "method": "session/delete", "params": {"sessionId": victim}});
            self.write(&mut link, format!("{frame}\n").as_bytes())
                .await?;
            self.drain(&mut link).await?;
        }
        // Every request that was not abandoned was answered exactly once (duplicates were
        // caught as they came).
        let unanswered = self.answers.iter().filter(|c| **c == 0).count() as u64;
        if unanswered != self.report.abandoned {
            return Err(self.fail(format!(
                "{unanswered} requests unanswered, {} abandoned",
                self.report.abandoned
            )));
        }
        Ok(self.report)
    }
}

/// A daemon with a seeded session (one finished turn).
struct Target {
    env: Env,
    session: String,
    seeded: usize,
}

fn target() -> Target {
    // The memory figures wait for the daemon's trim after the clients leave (its debug line).
    let env = Env::with_env(
        "idle_timeout_secs = 5",
        "",
        &[("RUST_LOG", "info,zeroclaw_daemon::daemon=debug")],
    );
    env.fake.push(openai::text(&["seeded ", "answer"]));
    let mut client = env.daemon.client();
    let session = client.new_session(Path::new("/"));
    client.prompt(&session, "seed", no_questions).result();
    let seeded = client.messages(&session).len();
    assert_eq!(seeded, 2);
    // Closed and logged before a round counts the "connection closed" lines it waits for.
    drop(client);
    env.daemon.wait_for_log("connection closed");
    Target {
        env,
        session,
        seeded,
    }
}

/// Lets this process (and the daemon it starts) open as many descriptors as allowed.
fn raise_nofile() {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    let _ = setrlimit(
        Resource::Nofile,
        Rlimit {
            current: limit.maximum,
            maximum: limit.maximum,
        },
    );
}

/// The daemon's resident memory split by kind (KiB): anonymous (heap), file-backed, shared.
fn rss_split(daemon: &Daemon) -> String {
    let status = std::fs::read_to_string(format!("/proc/{}/status", daemon.pid())).unwrap();
    ["RssAnon:", "RssFile:", "RssShmem:"]
        .iter()
        .filter_map(|name| {
            let line = status.lines().find(|l| l.starts_with(name))?;
            let kib = line.split_whitespace().nth(1)?;
            Some(format!("{} {kib}", name.trim_end_matches(':')))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Diagnostic (`ZC_SOAK_MALLOC_TRIM=1`, needs gdb): makes the daemon call glibc's
/// `malloc_trim(0)` and reports its RSS before and after. Memory that comes back was free
/// but kept by the allocator; memory that stays is still in use.
fn trim_and_report(daemon: &Daemon) {
    let before = rss_split(daemon);
    let out = std::process::Command::new("gdb")
        .args(["-p", &daemon.pid().to_string(), "-batch", "-ex"])
        .arg("call (int) malloc_trim(0)")
        .output();
    match out {
        Ok(out) if out.status.success() => eprintln!(
            "soak: malloc_trim(0) in the daemon: before {before}; after {}",
            rss_split(daemon)
        ),
        Ok(out) => eprintln!(
            "soak: gdb failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(e) => eprintln!("soak: cannot run gdb: {e}"),
    }
}

/// Figures of one round of load.
struct Round {
    sent: u64,
    answered: u64,
    abandoned: u64,
    elapsed: Duration,
    /// Daemon RSS (KiB): its peak so far, at the end of the load, after the clients left.
    peak: u64,
    during: u64,
    after: u64,
}

/// `clients` clients, `requests` frames each, against `target`; checks every answer.
fn round(target: &Target, probe: &mut Conn, clients: usize, requests: u64) -> Round {
    let daemon = &target.env.daemon;
    // Every connection but the probe is to be closed once the load is over.
    let closed_before = daemon.log_count("connection closed");
    let shared = std::sync::Arc::new(Shared {
        endpoint: daemon.endpoint.clone(),
        session: target.session.clone(),
        seeded: target.seeded,
        requests,
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let started = Instant::now();
    let reports: Vec<Result<Report, String>> = runtime.block_on(async {
        let tasks: Vec<_> = (0..clients)
            .map(|index| {
                let client = Client {
                    index,
                    shared: shared.clone(),
                    // Deterministic, and different in each round.
                    rng: Rng::new((index as u64 + 1) * 7919 + closed_before as u64),
                    next_id: 0,
                    answers: Vec::with_capacity(requests as usize + 16),
                    own: Vec::new(),
                    report: Report::default(),
                };
                tokio::spawn(client.run())
            })
            .collect();
        let all = async {
            let mut out = Vec::new();
            for task in tasks {
                out.push(task.await.unwrap());
            }
            out
        };
        tokio::time::timeout(RUN_BOUND, all)
            .await
            .expect("the load did not finish in its time bound")
    });
    let elapsed = started.elapsed();
    let (peak, during) = daemon.memory_kib();
    drop(runtime);

    let failures: Vec<&String> = reports.iter().filter_map(|r| r.as_ref().err()).collect();
    assert!(
        failures.is_empty(),
        "{} clients failed: {failures:#?}",
        failures.len()
    );
    let ok: Vec<&Report> = reports.iter().filter_map(|r| r.as_ref().ok()).collect();
    let sum = |f: fn(&Report) -> u64| ok.iter().map(|r| f(r)).sum::<u64>();
    let (sent, answered, abandoned) = (
        sum(|r| r.sent),
        sum(|r| r.answered),
        sum(|r| r.abandoned + r.abandoned_null),
    );
    let connections = sum(|r| r.connections);
    // The clients are gone once the daemon has closed each of their connections.
    daemon.wait_for_log_count("connection closed", closed_before + connections as usize);
    let status = probe.call("status", json!({}));
    // Sessions whose `session/new` answer was abandoned are left over: delete them too.
    let listed = probe.call("session/list", json!({}));
    let mut leftover = 0;
    for s in listed["sessions"].as_array().unwrap() {
        if s["sessionId"] != json!(target.session) {
            let deleted = probe.call("session/delete", json!({"sessionId": s["sessionId"]}));
            assert_eq!(deleted["deleted"], json!(true));
            leftover += 1;
        }
    }
    wait_for_trim_after_last_close(daemon);
    let (_, after) = daemon.memory_kib();
    if std::env::var_os("ZC_SOAK_MALLOC_TRIM").is_some() {
        trim_and_report(daemon);
    }
    eprintln!(
        "soak: {clients} clients x {requests} requests: {sent} frames sent, {answered} answers checked, \
         {abandoned} abandoned by {abrupt} abrupt disconnects, {reconnects} reconnects ({connections} connections), \
         in {elapsed:.2?} = {rate:.0} requests/s; {leftover} sessions left over",
        abrupt = sum(|r| r.abrupt),
        reconnects = sum(|r| r.reconnects),
        rate = sent as f64 / elapsed.as_secs_f64(),
    );
    assert_eq!(sent, answered + abandoned, "lost or extra answers");
    assert_eq!(status["clients"], json!(1), "{status}");
    assert_eq!(status["sessions"]["running"], json!(0), "{status}");
    Round {
        sent,
        answered,
        abandoned,
        elapsed,
        peak,
        during,
        after,
    }
}

/// The daemon hands freed heap back to the OS a second after connections close (one trim
/// per burst); a trim that ran after the last close has seen every connection's memory
/// freed. Waits for one, so the RSS after a round is not a race with it.
fn wait_for_trim_after_last_close(daemon: &Daemon) {
    let last_close = daemon
        .log_text()
        .lines()
        .enumerate()
        .filter(|(_, line)| line.contains("connection closed"))
        .last()
        .map_or(0, |(i, _)| i);
    daemon.wait_for_log_after(last_close, "returned freed heap to the OS");
}

/// Runs the load (`ZC_SOAK_ROUNDS` rounds of it, default 1, to tell a leak, which grows
/// every round, from memory the allocator keeps after the first) and checks the daemon's
/// RSS is back near its baseline.
fn load(clients: usize, requests: u64) {
    raise_nofile();
    let rounds: usize = std::env::var("ZC_SOAK_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let target = target();
    let daemon = &target.env.daemon;
    let mut probe = daemon.initialized();
    probe.call("status", json!({}));
    let (_, baseline) = daemon.memory_kib();
    eprintln!(
        "soak: daemon RSS baseline {baseline} KiB ({})",
        rss_split(daemon)
    );
    let mut after = baseline;
    let mut first_after = baseline;
    for n in 1..=rounds {
        let r = round(&target, &mut probe, clients, requests);
        eprintln!(
            "soak: round {n}: {} sent, {} answered, {} abandoned, {:.2?}; daemon RSS baseline {baseline} KiB, \
             peak {} KiB, at the end of the load {} KiB, after the clients left {} KiB ({:+} KiB; {})",
            r.sent,
            r.answered,
            r.abandoned,
            r.elapsed,
            r.peak,
            r.during,
            r.after,
            r.after as i64 - baseline as i64,
            rss_split(daemon),
        );
        if n == 1 {
            first_after = r.after;
        }
        // No leak: memory the first round left behind is reused, not added to.
        assert!(
            r.after <= first_after + RSS_SLACK_KIB,
            "round {n} left RSS {} KiB above round 1",
            r.after - first_after
        );
        after = r.after;
    }
    assert!(
        after <= baseline + RSS_SLACK_KIB,
        "RSS stayed {} KiB above its baseline",
        after - baseline
    );
    assert!(!daemon.log_text().contains("panicked"));
}

#[test]
fn load_small_twenty_clients_two_hundred_requests_each() {
    load(20, 200);
}

#[test]
#[ignore = "soak: run with `cargo test --release -p zeroclaw --test soak -- --ignored --nocapture`"]
fn soak_five_hundred_clients_two_thousand_requests_each() {
    load(500, 2000);
}
