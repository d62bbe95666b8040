//! The gateway: WebSocket round trips and pipelining and REST `status` against an axum
//! floor, SSE streaming against the daemon's own socket, and memory per idle WebSocket. The
//! WebSocket, REST and SSE clients and the floor are in `gateway.rs` at the crate's root.

use super::streaming::stream;
use super::{CHUNK, SETTLE, ctx, order, progress, slot};
use crate::client::Conn;
use crate::procs::{self, Kind};
use crate::report::{Goal, Row, Unit, micros, thousands};
use crate::run::Bench;
use crate::stats::{median_f64, quantile};
use zeroclaw_testkit::{FakeProvider, openai};

impl Bench {
    /// The gateway against its floor; see `crate::gateway`.
    pub async fn gateway(&mut self, fake: &FakeProvider) -> Result<(), String> {
        use crate::gateway as gw;
        let p = self.plan.clone();
        let idle = (p.idle_conns / 10).max(10);
        progress(format!(
            "gateway: {} WebSocket round trips, {} pipelined, {} REST `status`, {} chunks over SSE, {} idle WebSockets",
            thousands(p.rt_calls as u64),
            thousands(p.pipe_total as u64),
            thousands(p.rt_calls as u64),
            thousands(p.chunks as u64),
            thousands(idle as u64)
        ));
        let port_file = self.dir.join("gateway-floor.port");
        let _ = std::fs::remove_file(&port_file);
        let log = std::fs::File::options()
            .create(true)
            .append(true)
            .open(&self.launcher.log)
            .map_err(ctx("open the log"))?;
        let mut floor = std::process::Command::new(&self.launcher.bench_bin)
            .arg("--gateway-floor-server")
            .arg(&port_file)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(ctx("start the gateway floor"))?;
        let floor_pid = floor.id();
        let outcome = async {
            let floor_url = format!("http://{}", gw::floor_addr(&port_file).await.map_err(ctx("the gateway floor"))?);
            let daemon = self
                .launcher
                .start(Kind::Daemon)
                .map_err(ctx("start the daemon"))?;
            let mut conn = Conn::open(&daemon.socket).await.map_err(ctx("connect to the daemon"))?;
            let status = conn.call_value("status", "{}").await.map_err(ctx("status"))?;
            let url = status
                .get("gateway")
                .and_then(|g| g.get("url"))
                .and_then(|u| u.as_str())
                .ok_or_else(|| format!("the daemon's gateway is not serving: {status}"))?
                .to_owned();
            let created = conn
                .call_value(
                    "token/create",
                    &format!(r#"{{"name":"bench-{}","scope":"admin"}}"#, daemon.pid()),
                )
                .await
                .map_err(ctx("token/create"))?;
            let token = created
                .get("token")
                .and_then(|t| t.as_str())
                .ok_or("token/create answered without a token")?
                .to_owned();
            let ws_url = |base: &str| format!("{}/rpc", base.replacen("http", "ws", 1));
            let pids = [floor_pid, daemon.pid()];
            let cpu = |kind: Kind| procs::cpu_ns(pids[slot(kind)]).ok();

            // WebSocket round trips and pipelining.
            let rounds = p.rt_rounds.max(1);
            let per_round = p.rt_calls.div_ceil(rounds);
            let warmup = p.rt_warmup.div_ceil(rounds);
            let mut trips = [Vec::new(), Vec::new()];
            let mut rates = [Vec::new(), Vec::new()];
            let mut rest = [Vec::new(), Vec::new()];
            let mut ws_cpu = [Vec::new(), Vec::new()];
            for round in 0..rounds {
                for kind in order(round) {
                    let (base, token) = match kind {
                        Kind::Floor => (floor_url.as_str(), None),
                        Kind::Daemon => (url.as_str(), Some(token.as_str())),
                    };
                    let mut ws = gw::connect(&ws_url(base), token).await.map_err(ctx("open a WebSocket"))?;
                    let before = cpu(kind);
                    let t = gw::round_trips(&mut ws, warmup, per_round).await.map_err(ctx("WebSocket round trips"))?;
                    if let (Some(a), Some(b)) = (before, cpu(kind)) {
                        ws_cpu[slot(kind)].push(b.saturating_sub(a) as f64 / (warmup + per_round) as f64 / 1_000.0);
                    }
                    trips[slot(kind)].extend(t);
                    let r = gw::pipelined(&mut ws, p.pipe_total.div_ceil(rounds), p.pipe_depth)
                        .await
                        .map_err(ctx("WebSocket pipelined"))?;
                    rates[slot(kind)].push(r);
                    let r = gw::rest_status(base, token.unwrap_or("none"), per_round / 2 + 1, 8)
                        .await
                        .map_err(ctx("REST status"))?;
                    rest[slot(kind)].push(r);
                }
            }
            for t in &mut trips {
                t.sort_unstable();
            }
            let [f, d] = &trips;
            self.rows.push(
                Row::new(
                    format!("gateway: WebSocket round trip p50 ({} `status`)", thousands(d.len() as u64)),
                    Unit::Micros,
                    micros(quantile(d, 0.5)),
                    Some(micros(quantile(f, 0.5))),
                )
                .goal(Goal::RatioAtMost(1.25))
                .note("floor: axum WebSocket echo"),
            );
            self.rows.push(Row::new(
                "gateway: WebSocket round trip p99",
                Unit::Micros,
                micros(quantile(d, 0.99)),
                Some(micros(quantile(f, 0.99))),
            ));
            self.cpu_row("gateway: server CPU per WebSocket call".into(), &ws_cpu);
            self.rows.push(
                Row::new(
                    format!("gateway: WebSocket pipelined, {} in flight", p.pipe_depth),
                    Unit::PerSec,
                    median_f64(&rates[1]),
                    Some(median_f64(&rates[0])),
                )
                .goal(Goal::RatioAtLeast(0.8)),
            );
            self.rows.push(
                Row::new(
                    "gateway: REST GET /api/v1/status, 8 keep-alive connections",
                    Unit::PerSec,
                    median_f64(&rest[1]),
                    Some(median_f64(&rest[0])),
                )
                .goal(Goal::RatioAtLeast(0.8))
                .note("floor: an axum handler with a fixed body; each request calls the daemon's dispatch directly"),
            );

            // SSE against the daemon's own socket, the same turn.
            let mut sse = Vec::new();
            let mut socket = Vec::new();
            let cwd = serde_json::to_string(&self.dir.display().to_string()).unwrap_or_default();
            for _ in 0..p.stream_rounds.max(1) {
                let created = conn
                    .call_value("session/new", &format!(r#"{{"cwd":{cwd}}}"#))
                    .await
                    .map_err(ctx("session/new"))?;
                let session = created
                    .get("sessionId")
                    .and_then(|v| v.as_str())
                    .ok_or("session/new answered without a sessionId")?
                    .to_owned();
                fake.push(openai::many_chunks(p.chunks, CHUNK));
                let params = format!(r#"{{"sessionId":"{session}","prompt":"stream please"}}"#);
                let outcome = stream(&mut conn, "session/prompt", &params, p.chunks)
                    .await
                    .map_err(ctx("streaming over the socket"))?;
                socket.push(outcome.chunks_per_sec);
                // Its own session, made over REST: the socket connection above stays attached
                // to the first one and is not read meanwhile.
                let sse_session = gw::rest_new_session(&url, &token, &self.dir.display().to_string())
                    .await
                    .map_err(ctx("POST /api/v1/sessions"))?;
                fake.push(openai::many_chunks(p.chunks, CHUNK));
                let rate = gw::sse_prompt(&url, &token, &sse_session, p.chunks)
                    .await
                    .map_err(ctx("streaming over SSE"))?;
                sse.push(rate);
            }
            self.rows.push(
                Row::new(
                    format!("gateway: SSE streaming {} chunks (floor: the socket)", thousands(p.chunks as u64)),
                    Unit::PerSec,
                    median_f64(&sse),
                    Some(median_f64(&socket)),
                )
                .goal(Goal::RatioAtLeast(0.9))
                .note("floor column: the same turn over the daemon's socket"),
            );

            // Memory per idle WebSocket.
            let mut per = [0.0f64; 2];
            for kind in [Kind::Floor, Kind::Daemon] {
                let (base, tok) = match kind {
                    Kind::Floor => (floor_url.as_str(), None),
                    Kind::Daemon => (url.as_str(), Some(token.as_str())),
                };
                tokio::time::sleep(SETTLE).await;
                let before = procs::rss_of(pids[slot(kind)]).map_err(ctx("read RSS"))?;
                let conns = gw::open_many(&ws_url(base), tok, idle).await.map_err(ctx("open idle WebSockets"))?;
                tokio::time::sleep(SETTLE).await;
                let after = procs::rss_of(pids[slot(kind)]).map_err(ctx("read RSS"))?;
                drop(conns);
                per[slot(kind)] = after.saturating_sub(before) as f64 / idle as f64 / 1024.0;
            }
            self.rows.push(Row::new(
                format!("gateway: memory per idle WebSocket ({} open)", thousands(idle as u64)),
                Unit::KiB,
                per[1],
                Some(per[0]),
            ));
            drop(conn);
            daemon.stop().map_err(ctx("stop the daemon"))?;
            Ok::<(), String>(())
        }
        .await;
        let _ = floor.kill();
        let _ = floor.wait();
        outcome
    }
}
