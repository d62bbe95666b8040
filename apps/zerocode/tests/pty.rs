//! zerocode end to end: the real `zerocode` binary in a real pseudo-terminal, the real
//! daemon (started by zerocode itself, as a user would have it), and a scripted fake LLM
//! provider on 127.0.0.1.
//!
//! Steps are ordered by what appears on the terminal and by the requests the fake provider
//! records, never by sleeping. The only timeouts are hang guards: the expect timeout, and a
//! bounded poll for the ephemeral daemon's socket to go away.
//!
//! The daemon binary: zerocode looks for `zeroclaw` beside its own executable (as it does
//! when installed). Cargo only builds `zeroclaw` when something needs it, so the first test
//! to run builds it with `cargo build -p zeroclaw` into the same target directory and
//! profile as this test's `zerocode` (a no-op when it is up to date).
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use expectrl::process::unix::WaitStatus;
use expectrl::{Eof, Expect, Session};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use zeroclaw_testkit::{FakeProvider, openai};

/// Hang guard for one expected piece of output.
const EXPECT_TIMEOUT: Duration = Duration::from_secs(60);
/// Hang guard for the ephemeral daemon to remove its socket after the last client left.
const DAEMON_EXIT_TIMEOUT: Duration = Duration::from_secs(20);

/// `zeroclaw`, beside `zerocode`, built once per test run.
fn daemon_binary() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| built("zeroclaw", "zeroclaw"))
}

/// The testkit's MCP test server, beside `zerocode`, built once per test run.
fn mcp_test_server() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| built("zeroclaw-testkit", "mcp-test-server"))
}

/// Builds `package`'s binary `bin` into `zerocode`'s target directory and profile.
fn built(package: &str, bin: &str) -> PathBuf {
    {
        let zerocode = Path::new(env!("CARGO_BIN_EXE_zerocode"));
        let profile_dir = zerocode.parent().unwrap();
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut build = Command::new(cargo);
        build
            .args(["build", "--quiet", "-p", package, "--bin", bin])
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") => {}
            Some("release") => {
                build.arg("--release");
            }
            Some(other) => {
                build.args(["--profile", other]);
            }
            None => panic!("unexpected binary path {}", zerocode.display()),
        }
        // <target>/<profile>/zerocode, or <target>/<triple>/<profile>/zerocode.
        let mut target_dir = profile_dir.parent().unwrap();
        if !target_dir.join("CACHEDIR.TAG").exists()
            && let Some(triple) = target_dir.file_name()
        {
            build.arg("--target").arg(triple);
            target_dir = target_dir.parent().unwrap();
        }
        build.arg("--target-dir").arg(target_dir);
        let status = build.status().expect("run cargo build");
        assert!(
            status.success(),
            "cargo build -p {package} failed: {status}"
        );
        let binary = profile_dir.join(bin);
        assert!(binary.is_file(), "no {bin} at {}", binary.display());
        binary
    }
}

/// A temporary config dir whose provider is the fake one, and a working directory.
struct Env {
    fake: FakeProvider,
    config_dir: PathBuf,
    work: PathBuf,
    socket: PathBuf,
    _dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Self {
        Self::with("")
    }

    /// With these tables added to the config.
    fn with(tables: &str) -> Self {
        daemon_binary();
        let fake = FakeProvider::start_blocking().unwrap();
        // Under /tmp: the socket path must stay short.
        let dir = tempfile::Builder::new()
            .prefix("zc-pty")
            .tempdir_in("/tmp")
            .unwrap();
        let config_dir = dir.path().join("config");
        std::fs::create_dir_all(&config_dir).unwrap();
        std::fs::write(
            config_dir.join("config.toml"),
            format!(
                "[provider]\nbase_url = {:?}\nmodel = \"fake\"\n\
                 # a stalled stream is ended by Ctrl-C in these tests, never by the timeout\n\
                 idle_timeout_secs = 120\nmax_retries = 0\nconnect_timeout_secs = 5\n\n{tables}\n",
                fake.base_url()
            ),
        )
        .unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        let paths = zeroclaw_ipc::endpoint::resolve_with(Some(&config_dir), |_| None).unwrap();
        Self {
            fake,
            socket: paths.endpoint.as_path().to_path_buf(),
            config_dir,
            work,
            _dir: dir,
        }
    }

    fn zerocode(&self, args: &[&str]) -> Term {
        // The pseudo-terminal starts without echo; a user's terminal has it on, and
        // zerocode must leave it on.
        let mut command = Command::new("/bin/sh");
        command
            .args([
                "-c",
                r#"stty echo && exec "$0" "$@""#,
                env!("CARGO_BIN_EXE_zerocode"),
            ])
            .arg("--config-dir")
            .arg(&self.config_dir)
            .args(args)
            .current_dir(&self.work)
            .env_remove("ZEROCLAW_SOCKET")
            .env_remove("ZEROCLAW_CONFIG_DIR")
            .env_remove("ZEROCLAW_DATA_DIR")
            .env_remove("NO_COLOR")
            .env("TERM", "xterm-256color");
        Term::spawn(command)
    }

    /// Waits (bounded) until no daemon serves the socket: the ephemeral one has exited.
    fn wait_daemon_gone(&self) {
        let deadline = Instant::now() + DAEMON_EXIT_TIMEOUT;
        while self.socket.exists() {
            assert!(
                Instant::now() < deadline,
                "the ephemeral daemon still has its socket {} after {DAEMON_EXIT_TIMEOUT:?}",
                self.socket.display()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(
            std::os::unix::net::UnixStream::connect(&self.socket).is_err(),
            "something still answers at {}",
            self.socket.display()
        );
    }
}

/// The running `zerocode` in its pseudo-terminal, and everything it printed so far.
struct Term {
    session: expectrl::session::OsSession,
    seen: Vec<u8>,
}

impl Term {
    fn spawn(command: Command) -> Self {
        let mut session = Session::spawn(command).unwrap();
        session.get_process_mut().set_window_size(100, 40).unwrap();
        session.set_expect_timeout(Some(EXPECT_TIMEOUT));
        Self {
            session,
            seen: Vec::new(),
        }
    }

    /// Waits for `text` and returns the screen text read up to and including it.
    #[track_caller]
    fn expect(&mut self, text: &str) -> String {
        match self.session.expect(text) {
            Ok(found) => {
                self.seen.extend_from_slice(found.as_bytes());
                screen(found.as_bytes())
            }
            Err(e) => panic!(
                "waiting for {text:?}: {e}\n--- the terminal so far ---\n{}",
                screen(&self.seen)
            ),
        }
    }

    fn send(&mut self, keys: &str) {
        self.session.send(keys).unwrap();
    }

    /// Waits for the end of output, then for the exit status.
    #[track_caller]
    fn exit_status(&mut self) -> WaitStatus {
        match self.session.expect(Eof) {
            Ok(found) => self.seen.extend_from_slice(found.as_bytes()),
            Err(e) => panic!(
                "waiting for zerocode to exit: {e}\n--- the terminal so far ---\n{}",
                screen(&self.seen)
            ),
        }
        self.session.get_process().wait().unwrap()
    }

    /// Whether the terminal echoes input: true after zerocode restored it.
    fn echoes(&self) -> bool {
        self.session.get_process().get_echo().unwrap()
    }

    fn screen(&self) -> String {
        screen(&self.seen)
    }
}

/// The text a terminal would show for `raw` output: escape sequences applied (the few the
/// line editor uses to redraw a line) or dropped, carriage returns overwrite, trailing
/// spaces trimmed.
fn screen(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw);
    let mut lines: Vec<Vec<char>> = vec![Vec::new()];
    let mut col = 0usize;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let line = lines.last_mut().unwrap();
        match c {
            '\x1b' => match chars.next() {
                Some('[') => {
                    let mut params = String::new();
                    let mut end = None;
                    for c in chars.by_ref() {
                        if ('\x40'..='\x7e').contains(&c) {
                            end = Some(c);
                            break;
                        }
                        params.push(c);
                    }
                    let n = params.parse::<usize>().unwrap_or(1);
                    match end {
                        Some('K') if params.is_empty() || params == "0" => line.truncate(col),
                        Some('K') if params == "2" => line.clear(),
                        Some('C') => col += n,
                        Some('D') => col = col.saturating_sub(n),
                        Some('G') => col = n.saturating_sub(1),
                        _ => {}
                    }
                }
                Some(']') => {
                    while let Some(c) = chars.next() {
                        if c == '\x07' {
                            break;
                        }
                        if c == '\x1b' {
                            chars.next();
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\r' => col = 0,
            '\n' => {
                lines.push(Vec::new());
                col = 0;
            }
            '\x08' => col = col.saturating_sub(1),
            c if c.is_control() => {}
            c => {
                while line.len() < col {
                    line.push(' ');
                }
                if col < line.len() {
                    line[col] = c;
                } else {
                    line.push(c);
                }
                col += 1;
            }
        }
    }
    let lines: Vec<String> = lines
        .iter()
        .map(|l| l.iter().collect::<String>().trim_end().to_owned())
        .collect();
    lines.join("\n")
}

/// The short session id in a banner or a `new session` line.
fn short_id(text: &str, after: &str) -> String {
    let start = text
        .rfind(after)
        .map(|i| i + after.len())
        .unwrap_or_else(|| panic!("no {after:?} in {text:?}"));
    let id: String = text[start..]
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .collect();
    assert_eq!(id.len(), 8, "short id in {text:?}");
    id
}

#[test]
fn a_session_streams_asks_and_cancels_in_a_pseudo_terminal() {
    let env = Env::new();
    let mut term = env.zerocode(&[]);

    // zerocode started its own ephemeral daemon.
    let banner = term.expect("/help for commands");
    assert!(banner.contains("daemon "), "{banner}");
    assert!(banner.contains(&env.work.display().to_string()), "{banner}");
    term.expect("> ");

    // A prompt streams: the thought dimmed on its own line, then the answer.
    env.fake.push(
        openai::Builder::new()
            .reasoning("The user wants")
            .reasoning(" a greeting.")
            .text("Hello")
            .text(" from the")
            .text(" fake model.")
            .usage(10, 3)
            .build(),
    );
    term.send("say hello\r");
    term.expect("✻ ");
    // Each chunk is dimmed on its own, so the raw text comes in pieces.
    term.expect("The user wants");
    term.expect(" a greeting.");
    let answer = term.expect("Hello from the fake model.");
    assert!(
        answer.starts_with('\n'),
        "the answer starts on a line of its own: {answer:?}"
    );
    term.expect("[end_turn]  10 in · 3 out tokens");
    term.expect("> ");

    // A bash call: the call line, the approval question, y, the output, the answer.
    env.fake.push(
        openai::Builder::new()
            .text("Let me run it.")
            .tool_call(
                0,
                "call_1",
                "bash",
                r#"{"command":"echo zc-$((6*7)); seq 1 8"}"#,
                2,
            )
            .build(),
    );
    env.fake.push(openai::text(&["The command printed it."]));
    term.send("run the command\r");
    term.expect("Let me run it.");
    term.expect("⏺ ");
    term.expect("echo zc-$((6*7)); seq 1 8");
    term.expect("Allow bash `echo zc-$((6*7)); seq 1 8`? [y]es / [n]o / [a]lways");
    term.send("y\r");
    // The output, folded after six lines (the daemon adds an exit code line).
    let output = term.expect("… 4 more lines");
    assert!(
        output.contains("zc-42") && output.contains("5") && !output.contains("6\n"),
        "{output}"
    );
    term.expect("The command printed it.");
    term.expect("[end_turn]");
    term.expect("> ");

    // ask_user: the question as a form, an answer, and the answer reaches the model.
    env.fake.push(
        openai::Builder::new()
            .tool_call(
                0,
                "call_2",
                "ask_user",
                r#"{"question":"What is your favourite colour?"}"#,
                0,
            )
            .build(),
    );
    env.fake.push(openai::text(&["Teal it is."]));
    term.send("ask me something\r");
    term.expect("? What is your favourite colour?");
    term.expect("answer: ");
    term.send("teal-42\r");
    term.expect("Teal it is.");
    term.expect("[end_turn]");
    term.expect("> ");
    let requests = env.fake.wait_for_requests(5);
    let after_answer = requests[4].body.to_string();
    assert!(after_answer.contains("teal-42"), "{after_answer}");

    // A stalled stream, then Ctrl-C: the turn is cancelled.
    env.fake.push(
        openai::Builder::new()
            .text("thinking about it")
            .stall()
            .build(),
    );
    term.send("take your time\r");
    term.expect("thinking about it");
    term.send("\x03");
    term.expect("cancelling");
    term.expect("[cancelled]");
    term.expect("> ");

    term.send("/quit\r");
    assert!(
        matches!(term.exit_status(), WaitStatus::Exited(_, 0)),
        "{}",
        term.screen()
    );
    assert!(term.echoes(), "the terminal was left without echo");
    let _ = std::fs::write("/tmp/zerocode-screen.txt", term.screen() + "\n");
    let history = std::fs::read_to_string(env.config_dir.join("data/zerocode_history")).unwrap();
    assert!(
        history.contains("say hello") && history.contains("/quit"),
        "{history}"
    );
    assert!(
        !history.contains("teal-42"),
        "answers to questions stay out of the history"
    );

    // The ephemeral daemon it started goes away with its last client.
    env.wait_daemon_gone();
}

#[test]
fn an_mcp_servers_tool_from_the_config_is_asked_about_and_runs() {
    let env = Env::with(&format!(
        "[[mcp_servers]]\nname = \"test\"\ncommand = {:?}\n",
        mcp_test_server().display().to_string()
    ));
    let mut term = env.zerocode(&[]);
    term.expect("/help for commands");
    term.expect("> ");
    env.fake.push(
        openai::Builder::new()
            .tool_call(0, "call_1", "test__echo", r#"{"text":"hello from mcp"}"#, 2)
            .build(),
    );
    env.fake.push(openai::text(&["The server echoed it."]));
    term.send("echo it through mcp\r");
    term.expect("Allow test__echo");
    term.send("y\r");
    term.expect("hello from mcp");
    term.expect("The server echoed it.");
    term.expect("> ");
    term.send("/quit\r");
    assert!(matches!(term.exit_status(), WaitStatus::Exited(_, 0)));
}

#[test]
fn commands_sessions_and_idle_keys() {
    let env = Env::new();
    let mut term = env.zerocode(&[]);
    let banner = term.expect("/help for commands");
    let first = short_id(&banner, "session ");
    term.expect("> ");
    env.fake.push(openai::text(&["Hi back."]));
    term.send("hi there\r");
    term.expect("Hi back.");
    term.expect("[end_turn]");
    term.expect("> ");

    // A rejected call: its error result is marked.
    env.fake.push(
        openai::Builder::new()
            .tool_call(0, "call_1", "bash", r#"{"command":"rm -rf build"}"#, 0)
            .build(),
    );
    env.fake.push(openai::text(&["I will not, then."]));
    term.send("clean up\r");
    term.expect("Allow bash `rm -rf build`? [y]es / [n]o / [a]lways");
    term.send("n\r");
    term.expect("✗  the user rejected this bash call");
    term.expect("I will not, then.");
    term.expect("> ");

    // A failed turn (the provider has no reply for it): one readable line.
    term.send("and now?\r");
    let failure = term.expect("(error -");
    assert!(failure.contains("the turn failed: "), "{failure}");
    term.expect("> ");

    term.send("/help\r");
    term.expect("Ctrl-C cancels it");
    term.expect("> ");
    term.send("/bogus\r");
    term.expect("unknown command /bogus; /help lists the commands");
    term.expect("> ");
    term.send("/cancel\r");
    term.expect("nothing is running");
    term.expect("> ");
    term.send("\x03");
    term.expect("(Ctrl-C again or /quit to exit)");
    term.expect("> ");

    term.send("/new\r");
    let second = short_id(&term.expect("> "), "new session ");
    assert_ne!(first, second);
    term.send("/sessions\r");
    let list = term.expect("/load N resumes one");
    assert!(list.contains(&first) && list.contains(&second), "{list}");
    term.expect("> ");

    // Back to the first session by its short id: its history is replayed.
    term.send(&format!("/load {first}\r"));
    let replay = term.expect(&format!("now in session {first}"));
    assert!(replay.contains("> hi there"), "{replay}");
    assert!(replay.contains("Hi back."), "{replay}");
    term.expect("> ");

    // Ctrl-C twice at the prompt quits.
    term.send("\x03");
    term.expect("(Ctrl-C again or /quit to exit)");
    term.expect("> ");
    term.send("\x03");
    assert!(
        matches!(term.exit_status(), WaitStatus::Exited(_, 0)),
        "{}",
        term.screen()
    );
    env.wait_daemon_gone();

    // --session with the short id resumes it, history first; Ctrl-D quits.
    let mut term = env.zerocode(&["--session", &first]);
    let start = term.expect("/help for commands");
    assert!(
        start.contains("> hi there") && start.contains("Hi back."),
        "{start}"
    );
    assert!(start.contains(&format!("session {first}")), "{start}");
    term.expect("> ");
    term.send("\x04");
    assert!(
        matches!(term.exit_status(), WaitStatus::Exited(_, 0)),
        "{}",
        term.screen()
    );
    env.wait_daemon_gone();

    // --resume offers a numbered list.
    let mut term = env.zerocode(&["--resume"]);
    let list = term.expect("Enter = new session]");
    let number = list
        .lines()
        .find(|l| l.contains(&first))
        .and_then(|l| l.trim().split(')').next())
        .and_then(|n| n.trim().parse::<usize>().ok())
        .unwrap_or_else(|| panic!("{first} is not in {list}"));
    term.send(&format!("{number}\r"));
    let start = term.expect("/help for commands");
    assert!(
        start.contains("Hi back.") && start.contains(&format!("session {first}")),
        "{start}"
    );
    term.expect("> ");
    term.send("/quit\r");
    assert!(
        matches!(term.exit_status(), WaitStatus::Exited(_, 0)),
        "{}",
        term.screen()
    );
    env.wait_daemon_gone();
}

#[test]
fn losing_the_daemon_restores_the_terminal_and_exits_1() {
    let env = Env::new();
    // A daemon of our own (not ephemeral), so the test can kill it.
    let mut daemon = Command::new(daemon_binary())
        .arg("--config-dir")
        .arg(&env.config_dir)
        .arg("daemon")
        .arg("--no-gateway")
        .env_remove("ZEROCLAW_SOCKET")
        .env_remove("ZEROCLAW_DATA_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + DAEMON_EXIT_TIMEOUT;
    while std::os::unix::net::UnixStream::connect(&env.socket).is_err() {
        assert!(
            Instant::now() < deadline,
            "the daemon did not start listening"
        );
        assert!(daemon.try_wait().unwrap().is_none(), "the daemon exited");
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut term = env.zerocode(&[]);
    term.expect("/help for commands");
    term.expect("> ");
    // The prompt is up: the line editor has the terminal in raw mode.
    assert!(!term.echoes());
    daemon.kill().unwrap();
    daemon.wait().unwrap();
    term.expect("the daemon went away; your sessions are kept. Run zerocode again to start a new one (or `zeroclaw daemon`).");
    assert!(
        matches!(term.exit_status(), WaitStatus::Exited(_, 1)),
        "{}",
        term.screen()
    );
    assert!(term.echoes(), "the terminal was left without echo");
}
