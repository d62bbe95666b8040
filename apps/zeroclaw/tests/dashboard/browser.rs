//! One headless Chromium for the whole test binary, the runner that takes libtest's place,
//! and waits on what the page shows.

use crate::common::HANG_GUARD;
use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long one wait on the page may take before it fails naming what it waited for
/// (under the test's hang guard, so the message is this one).
const WAIT: Duration = Duration::from_secs(HANG_GUARD.as_secs() / 2);

/// A test: its name (a sentence) and its body.
pub type Test = (&'static str, fn(&Browser));

pub struct Browser {
    pub rt: tokio::runtime::Runtime,
    pub client: Client,
    driver: Child,
    _profile: tempfile::TempDir,
}

fn find(var: &str, default: &str) -> Option<String> {
    let path = std::env::var(var).unwrap_or_else(|_| default.to_owned());
    std::path::Path::new(&path).is_file().then_some(path)
}

/// The browser is missing: a failure under CI, a loud skip elsewhere.
fn missing(what: &str) -> ! {
    let line = "!".repeat(78);
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        eprintln!(
            "\n{line}\n!!! {what}\n!!! CI=true: the dashboard's browser tests FAIL (.ci/run installs chromium and chromium-driver)\n{line}\n"
        );
        std::process::exit(101);
    }
    eprintln!(
        "\n{line}\n!!! {what}\n!!! the dashboard's browser tests are SKIPPED (apt-get install chromium chromium-driver)\n{line}\n"
    );
    std::process::exit(0);
}

impl Browser {
    fn start() -> Self {
        let chromium = find("ZEROCLAW_CHROMIUM", "/usr/bin/chromium")
            .unwrap_or_else(|| missing("no chromium at /usr/bin/chromium (or $ZEROCLAW_CHROMIUM)"));
        let chromedriver =
            find("ZEROCLAW_CHROMEDRIVER", "/usr/bin/chromedriver").unwrap_or_else(|| {
                missing("no chromedriver at /usr/bin/chromedriver (or $ZEROCLAW_CHROMEDRIVER)")
            });
        // chromedriver picks no port of its own: take a free one and hand it over.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut driver = Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Its first lines end with "started successfully…" once it listens.
        let stdout = driver.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        loop {
            match lines.next() {
                Some(Ok(line)) if line.contains("started successfully") => break,
                Some(Ok(_)) => {}
                _ => panic!("chromedriver exited before it listened"),
            }
        }
        // Drain the rest so chromedriver never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});

        let profile = tempfile::tempdir().unwrap();
        let args = [
            "--headless".to_owned(),
            "--no-sandbox".to_owned(),
            "--disable-gpu".to_owned(),
            "--disable-quic".to_owned(),
            "--no-first-run".to_owned(),
            "--disable-background-networking".to_owned(),
            "--disable-component-update".to_owned(),
            "--disable-sync".to_owned(),
            "--disable-dev-shm-usage".to_owned(),
            "--window-size=1280,900".to_owned(),
            format!("--user-data-dir={}", profile.path().display()),
        ];
        let capabilities = json!({
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": chromium, "args": args},
        });
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let client = rt.block_on(async {
            let connector = hyper_util::client::legacy::connect::HttpConnector::new();
            ClientBuilder::new(connector)
                .capabilities(capabilities.as_object().unwrap().clone())
                .connect(&format!("http://127.0.0.1:{port}"))
                .await
                .unwrap_or_else(|e| panic!("chromedriver could not start chromium: {e}"))
        });
        Self {
            rt,
            client,
            driver,
            _profile: profile,
        }
    }

    /// Runs `f` on the browser's runtime, hang-guarded.
    pub fn block<F: Future>(&self, f: F) -> F::Output {
        self.rt
            .block_on(async { tokio::time::timeout(HANG_GUARD, f).await })
            .expect("hang guard")
    }

    /// Back to one blank window with no cookies, between tests.
    fn reset(&self) {
        let c = &self.client;
        self.block(async {
            let windows = c.windows().await.unwrap();
            for extra in windows.iter().skip(1) {
                c.switch_to_window(extra.clone()).await.unwrap();
                c.close_window().await.unwrap();
            }
            c.switch_to_window(windows[0].clone()).await.unwrap();
            c.set_window_size(1280, 900).await.unwrap();
            c.goto("about:blank").await.unwrap();
            c.delete_all_cookies().await.unwrap();
        });
    }

    fn quit(mut self) {
        let client = self.client.clone();
        let _ = self.block(client.close());
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// libtest's part: `--list`, name filters, one test after another, a summary, the exit code.
pub fn run(groups: &[&[Test]]) {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let tests: Vec<&Test> = groups.iter().flat_map(|g| g.iter()).collect();
    if args.iter().any(|a| a == "--list") {
        for (name, _) in &tests {
            println!("{name}: test");
        }
        return;
    }
    let exact = args.iter().any(|a| a == "--exact");
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let selected: Vec<&Test> = tests
        .into_iter()
        .filter(|(name, _)| {
            filters.is_empty()
                || filters.iter().any(|f| {
                    if exact {
                        name == f
                    } else {
                        name.contains(f.as_str())
                    }
                })
        })
        .collect();
    println!("\nrunning {} tests", selected.len());
    if selected.is_empty() {
        println!("\ntest result: ok. 0 passed; 0 failed\n");
        return;
    }
    let started = Instant::now();
    let browser = Browser::start();
    let mut failed = Vec::new();
    for (name, test) in &selected {
        let outcome = catch_unwind(AssertUnwindSafe(|| test(&browser)));
        let reset = catch_unwind(AssertUnwindSafe(|| browser.reset()));
        if outcome.is_ok() && reset.is_ok() {
            println!("test {name} ... ok");
        } else {
            println!("test {name} ... FAILED");
            failed.push(*name);
        }
    }
    browser.quit();
    let seconds = started.elapsed().as_secs_f64();
    if failed.is_empty() {
        println!(
            "\ntest result: ok. {} passed; 0 failed; finished in {seconds:.2}s\n",
            selected.len()
        );
    } else {
        println!("\nfailures:");
        for name in &failed {
            println!("    {name}");
        }
        println!(
            "\ntest result: FAILED. {} passed; {} failed; finished in {seconds:.2}s\n",
            selected.len() - failed.len(),
            failed.len()
        );
        std::process::exit(101);
    }
}

/// The element `css` once it exists. A search cut short by a navigation (the login page
/// moves itself to `/` once its code is exchanged, after `goto` has returned) is tried
/// again on the new page.
pub async fn element(c: &Client, css: &str) -> Element {
    let deadline = Instant::now() + WAIT;
    loop {
        let error = match c.find(Locator::Css(css)).await {
            Ok(found) => return found,
            Err(e) if e.is_no_such_element() || navigated(&e) => e,
            Err(e) => panic!("no {css} on the page: {e}"),
        };
        assert!(
            Instant::now() < deadline,
            "no {css} on the page after {WAIT:?}: {error}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Whether a command failed only because the page navigated while it ran.
fn navigated(error: &fantoccini::error::CmdError) -> bool {
    error.to_string().contains("aborted by navigation")
}

/// Waits until the JavaScript expression `condition` (a function body's `return` value,
/// with `arguments[0]` = `arg`) is true.
pub async fn until(c: &Client, condition: &str, arg: Value) {
    let script = format!("return !!({condition});");
    let deadline = Instant::now() + WAIT;
    loop {
        match c.execute(&script, vec![arg.clone()]).await {
            Ok(Value::Bool(true)) => return,
            Ok(_) => {}
            Err(e) if navigated(&e) => {}
            Err(e) => panic!("waiting for {condition}: {e}"),
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {condition} ({arg})"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until the element `css` shows `text` (a part of its visible text).
pub async fn until_text(c: &Client, css: &str, text: &str) {
    until(
        c,
        "[...document.querySelectorAll(arguments[0].css)].some((e) => e.textContent.includes(arguments[0].text))",
        json!({"css": css, "text": text}),
    )
    .await;
}

/// How many elements match `css`.
pub async fn count(c: &Client, css: &str) -> usize {
    c.execute(
        "return document.querySelectorAll(arguments[0]).length;",
        vec![json!(css)],
    )
    .await
    .unwrap()
    .as_u64()
    .unwrap() as usize
}

/// The text of every element matching `css`.
pub async fn texts(c: &Client, css: &str) -> Vec<String> {
    let value = c
        .execute(
            "return [...document.querySelectorAll(arguments[0])].map((e) => e.textContent);",
            vec![json!(css)],
        )
        .await
        .unwrap();
    serde_json::from_value(value).unwrap()
}

/// Clicks the element `css` once it exists.
pub async fn click(c: &Client, css: &str) {
    element(c, css).await.click().await.unwrap();
}

/// Types `text` into the element `css` (WebDriver keys: "\u{E007}" is Enter).
pub async fn type_into(c: &Client, css: &str, text: &str) {
    element(c, css).await.send_keys(text).await.unwrap();
}

/// Saves a screenshot of the current window as `<name>.png` in `$ZEROCLAW_SCREENSHOTS`
/// (`docs/dashboard` when refreshing the docs' pictures), by default in the target dir's
/// `screenshots`.
pub async fn screenshot(c: &Client, name: &str) {
    let png = c.screenshot().await.unwrap();
    let dir = std::env::var_os("ZEROCLAW_SCREENSHOTS").map_or_else(
        || std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("screenshots"),
        std::path::PathBuf::from,
    );
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
}
