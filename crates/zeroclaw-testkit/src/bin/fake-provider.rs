//! `fake-provider [--port N] [--verbose] SCRIPT.json`
//!
//! Serves the scripted replies of SCRIPT.json (format: see
//! `zeroclaw_testkit::script`) on `127.0.0.1`, prints
//! `listening on http://127.0.0.1:PORT/v1` to stdout, logs each request to
//! stderr (with `--verbose`, its JSON body too) and serves until killed.
//! Once the script is used up every request gets a `500`
//! ("fake provider: no scripted reply left").

use std::process::ExitCode;
use std::time::Duration;

use zeroclaw_testkit::FakeProvider;
use zeroclaw_testkit::script::Script;

const USAGE: &str = "usage: fake-provider [--port N] [--verbose] SCRIPT.json";

struct Args {
    port: u16,
    verbose: bool,
    script: String,
}

fn parse_args() -> Result<Args, String> {
    let mut port = 0;
    let mut verbose = false;
    let mut script = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let port_value = if arg == "--port" || arg == "-p" {
            Some(args.next().ok_or("--port needs a value")?)
        } else {
            arg.strip_prefix("--port=").map(str::to_owned)
        };
        if let Some(value) = port_value {
            port = value.parse().map_err(|_| format!("bad port {value:?}"))?;
        } else if arg == "--verbose" || arg == "-v" {
            verbose = true;
        } else if arg == "--help" || arg == "-h" {
            return Err(String::new());
        } else if arg.starts_with('-') && arg != "-" {
            return Err(format!("unknown option {arg:?}"));
        } else if script.replace(arg).is_some() {
            return Err("only one SCRIPT.json".into());
        }
    }
    Ok(Args {
        port,
        verbose,
        script: script.ok_or("missing SCRIPT.json")?,
    })
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(why) => {
            if !why.is_empty() {
                eprintln!("fake-provider: {why}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let text = match std::fs::read_to_string(&args.script) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("fake-provider: cannot read {}: {e}", args.script);
            return ExitCode::from(2);
        }
    };
    let script = match Script::parse(&text) {
        Ok(script) => script,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("fake-provider: cannot start runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        let fake = match FakeProvider::start_on(args.port).await {
            Ok(fake) => fake,
            Err(e) => {
                eprintln!("fake-provider: cannot listen on port {}: {e}", args.port);
                return ExitCode::FAILURE;
            }
        };
        let replies = script.replies.len();
        script.apply(&fake);
        eprintln!("fake-provider: {replies} scripted replies");
        println!("listening on {}", fake.base_url());
        let mut seen = 0usize;
        loop {
            let Some(req) = fake.next_request_timeout(Duration::from_secs(3600)).await else {
                continue;
            };
            seen += 1;
            let model = req.body.get("model").and_then(|m| m.as_str()).unwrap_or("-");
            let stream = req.body.get("stream").map_or("-".into(), |s| s.to_string());
            eprintln!(
                "fake-provider: #{seen} {} {} model={model} stream={stream} ({} body bytes, {} replies left)",
                req.method,
                req.path,
                req.raw_body.len(),
                fake.pending_replies()
            );
            if args.verbose {
                let body = if req.body.is_null() {
                    String::from_utf8_lossy(&req.raw_body).into_owned()
                } else {
                    serde_json::to_string_pretty(&req.body).unwrap_or_default()
                };
                eprintln!("{body}");
            }
        }
    })
}
