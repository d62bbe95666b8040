//! A daemon with `[[webhooks]]`/`[[schedules]]` in a temp dir, its gateway on a free
//! loopback port; signed deliveries; the runs over the socket.

use crate::common::*;
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The HMAC key of every test hook, in the variable `HOOK_SECRET`.
pub const SECRET: &str = "It's a Secret to Everybody";

pub fn rt() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
    })
}

pub fn block<F: Future>(f: F) -> F::Output {
    rt().block_on(async { tokio::time::timeout(HANG_GUARD, f).await })
        .expect("hang guard")
}

/// `sha256=<hex>` of `body` under `secret`, as GitHub signs it.
pub fn sign(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(body);
    let bytes = mac.finalize().into_bytes();
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256={hex}")
}

/// The Standard Webhooks key of `signature = "standard"` test hooks: 32 bytes, in the
/// variable `STANDARD_SECRET` as `whsec_<base64>` ([`standard_secret`]).
pub const STANDARD_KEY: [u8; 32] = *b"a standard webhooks key, 32 byte";

/// `whsec_<base64 of STANDARD_KEY>`, as a Standard Webhooks sender shows its secret.
pub fn standard_secret() -> String {
    use base64::Engine;
    format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(STANDARD_KEY)
    )
}

/// A Standard Webhooks `webhook-signature` entry: `v1,<base64 HMAC-SHA256 of
/// "{id}.{timestamp}.{body}">` under `key`.
pub fn sign_standard(key: &[u8], id: &str, timestamp: i64, body: &[u8]) -> String {
    use base64::Engine;
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(key).unwrap();
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(body);
    let sig = mac.finalize().into_bytes();
    format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(sig)
    )
}

/// Unix seconds now, as a Standard Webhooks sender stamps a delivery.
pub fn unix_now() -> i64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    i64::try_from(since.as_secs()).unwrap()
}

/// A daemon with hooks and schedules whose `cwd` is `work`.
pub struct Hooks {
    pub daemon: Daemon,
    pub fake: zeroclaw_testkit::FakeProvider,
    pub work: PathBuf,
    pub url: String,
    pub dir: TestDir,
    /// The daemon's variables, for a restart (Unix-only tests restart it).
    #[cfg_attr(not(unix), allow(dead_code))]
    vars: Vec<(String, String)>,
}

impl Hooks {
    /// `tables(work)` gives the `[[webhooks]]`/`[[schedules]]` (and other) tables.
    pub fn start(tables: impl Fn(&str) -> String, vars: &[(&str, &str)]) -> Self {
        Self::with_provider("", tables, vars)
    }

    /// [`Hooks::start`], with these keys in `[provider]` (see `provider_config`).
    pub fn with_provider(
        provider: &str,
        tables: impl Fn(&str) -> String,
        vars: &[(&str, &str)],
    ) -> Self {
        let fake = zeroclaw_testkit::FakeProvider::start_blocking().unwrap();
        let dir = TestDir::new();
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        let rest = format!(
            "[gateway]\nlisten = \"127.0.0.1:0\"\n\n{}",
            tables(&work.display().to_string().replace('\\', "\\\\"))
        );
        dir.write_config(&provider_config(&fake.base_url(), provider, &rest));
        let mut all = vec![("HOOK_SECRET".to_owned(), SECRET.to_owned())];
        all.extend(vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
        let (daemon, url) = launch(&dir, &all);
        Self {
            daemon,
            fake,
            work,
            url,
            dir,
            vars: all,
        }
    }

    /// Starts the daemon again on the same dir, after a kill or a stop.
    #[cfg(unix)]
    pub fn restart(&mut self) {
        let (daemon, url) = launch(&self.dir, &self.vars);
        self.daemon = daemon;
        self.url = url;
    }

    /// POSTs `body` to `/hooks/<name>` with these headers: (status, JSON body, Retry-After).
    pub fn post(
        &self,
        name: &str,
        body: &[u8],
        headers: &[(&str, &str)],
    ) -> (u16, Value, Option<String>) {
        let url = format!("{}/hooks/{name}", self.url);
        let body = body.to_vec();
        block(async move {
            let mut request = reqwest::Client::new().post(url).body(body);
            for (k, v) in headers {
                request = request.header(*k, *v);
            }
            let response = request.send().await.unwrap();
            let status = response.status().as_u16();
            let retry = response
                .headers()
                .get("retry-after")
                .map(|v| v.to_str().unwrap().to_owned());
            let text = response.text().await.unwrap();
            (
                status,
                serde_json::from_str(&text).unwrap_or(Value::String(text)),
                retry,
            )
        })
    }

    /// Writes `head` (a request line and headers, no body) on a plain TCP connection to the
    /// gateway and reads the answer to its end: the server closes it.
    pub fn raw(&self, head: &str) -> String {
        use std::io::{Read, Write};
        let addr = self.url.trim_start_matches("http://");
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(HANG_GUARD)).unwrap();
        stream.write_all(head.as_bytes()).unwrap();
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).unwrap();
        String::from_utf8_lossy(&answer).into_owned()
    }

    /// A correctly signed delivery with this GitHub delivery id.
    pub fn deliver(&self, name: &str, body: &str, delivery: &str) -> (u16, Value) {
        let signature = sign(SECRET, body.as_bytes());
        let (status, answer, _) = self.post(
            name,
            body.as_bytes(),
            &[
                ("x-hub-signature-256", &signature),
                ("x-github-delivery", delivery),
                ("x-github-event", "workflow_run"),
                ("content-type", "application/json"),
            ],
        );
        (status, answer)
    }

    pub fn runs(&self, params: Value) -> Vec<Value> {
        let result = self.daemon.client().call("runs/list", params);
        result["runs"].as_array().unwrap().clone()
    }

    pub fn run(&self, id: &str) -> Value {
        self.daemon.client().call("runs/get", json!({ "id": id }))
    }

    /// Runs schedule `name` now (`schedule/run`) and waits for the run's end: its record.
    pub fn run_schedule(&self, name: &str) -> Value {
        let run = self
            .daemon
            .client()
            .call("schedule/run", json!({ "name": name }));
        self.wait_finished(run["runId"].as_str().unwrap())
    }

    /// Waits for the daemon to log the end of run `id`; returns its record.
    pub fn wait_finished(&self, id: &str) -> Value {
        self.wait_log_with("run finished", id);
        self.run(id)
    }

    /// Waits for a log line containing both `needle` and `id`.
    pub fn wait_log_with(&self, needle: &str, id: &str) -> String {
        let mut from = 0;
        loop {
            let (at, line) = self.daemon.wait_for_log_after(from, needle);
            if line.contains(id) {
                return line;
            }
            from = at + 1;
        }
    }
}

/// Starts the daemon with these variables: it and its gateway's URL.
fn launch(dir: &TestDir, vars: &[(String, String)]) -> (Daemon, String) {
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let daemon = dir.start_with(&[], &vars);
    let status = daemon.client().call("status", json!({}));
    let url = status["gateway"]["url"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    (daemon, url)
}

/// A schedule table: name `manual`, a cron that never ticks in a test (run it with
/// [`Hooks::run_schedule`]), prompt `go`, `extra` keys appended.
pub fn manual_schedule(work: &str, extra: &str) -> String {
    format!(
        "[[schedules]]\nname = \"manual\"\ncron = \"0 0 1 1 *\"\ncwd = \"{work}\"\nprompt = \"go\"\n{extra}\n"
    )
}

/// A webhook table: name `ci`, key in `HOOK_SECRET`, `extra` keys appended.
/// For tests about approvals whose allowed `bash` call must run: an unattended run requires
/// the sandbox by default, and on Windows (under Wine in CI) there is none, so there it is
/// not required. Elsewhere the default stands (tests/sandbox/unattended.rs tests it).
pub const SANDBOX_NOT_REQUIRED_WHERE_UNAVAILABLE: &str = if cfg!(target_os = "linux") {
    ""
} else {
    "sandbox = { require = false }"
};

pub fn hook(work: &str, extra: &str) -> String {
    format!(
        "[[webhooks]]\nname = \"ci\"\nsecret_env = \"HOOK_SECRET\"\ncwd = \"{work}\"\nprompt = \"CI failed on {{{{json /ref}}}} ({{{{header X-GitHub-Event}}}}): {{{{body}}}}\"\n{extra}\n"
    )
}
