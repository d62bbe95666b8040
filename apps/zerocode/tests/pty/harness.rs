//! The pty harness: a temp config dir with a fake provider, zerocode in a pseudo-terminal,
//! and a small terminal emulator that turns its output into screen text.

use expectrl::process::unix::WaitStatus;
use expectrl::{Eof, Expect, Session};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use zeroclaw_testkit::FakeProvider;

/// Hang guard for one expected piece of output.
pub const EXPECT_TIMEOUT: Duration = Duration::from_secs(60);
/// Hang guard for the ephemeral daemon to remove its socket after the last client left.
pub const DAEMON_EXIT_TIMEOUT: Duration = Duration::from_secs(20);

/// `zeroclaw`, beside `zerocode`, built once per test run.
pub fn daemon_binary() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| built("zeroclaw", "zeroclaw"))
}

/// The testkit's MCP test server, beside `zerocode`, built once per test run.
pub fn mcp_test_server() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| built("zeroclaw-testkit", "mcp-test-server"))
}

/// Builds `package`'s binary `bin` into `zerocode`'s target directory and profile.
pub fn built(package: &str, bin: &str) -> PathBuf {
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
pub struct Env {
    pub fake: FakeProvider,
    pub config_dir: PathBuf,
    pub work: PathBuf,
    pub socket: PathBuf,
    _dir: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Self {
        Self::with("")
    }

    /// With these tables added to the config.
    pub fn with(tables: &str) -> Self {
        Self::with_retries(0, tables)
    }

    /// With `provider.max_retries` set (0 elsewhere: a failed model call fails the turn at
    /// once) and these tables added to the config.
    pub fn with_retries(max_retries: u32, tables: &str) -> Self {
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
                 idle_timeout_secs = 120\nmax_retries = {max_retries}\nconnect_timeout_secs = 5\n\n{tables}\n",
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

    pub fn zerocode(&self, args: &[&str]) -> Term {
        Term::spawn(self.command(args))
    }

    /// `zerocode` with `args`, once it has printed its banner and its first prompt.
    pub fn ready(&self, args: &[&str]) -> Term {
        Term::ready(self.command(args))
    }

    /// The command that runs `zerocode` with `args` in this environment (no `NO_COLOR`).
    pub fn command(&self, args: &[&str]) -> Command {
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
        command
    }

    /// Waits (bounded) until no daemon serves the socket: the ephemeral one has exited.
    pub fn wait_daemon_gone(&self) {
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
pub struct Term {
    session: expectrl::session::OsSession,
    seen: Vec<u8>,
}

impl Term {
    pub fn spawn(command: Command) -> Self {
        let mut session = Session::spawn(command).unwrap();
        session.get_process_mut().set_window_size(100, 40).unwrap();
        session.set_expect_timeout(Some(EXPECT_TIMEOUT));
        Self {
            session,
            seen: Vec::new(),
        }
    }

    fn ready(command: Command) -> Self {
        let mut term = Self::spawn(command);
        term.expect("/help for commands");
        term.expect("> ");
        term
    }

    /// `/quit`: zerocode exits 0 and leaves the terminal echoing.
    #[track_caller]
    pub fn quit(&mut self) {
        self.send("/quit\r");
        assert!(
            matches!(self.exit_status(), WaitStatus::Exited(_, 0)),
            "{}",
            self.screen()
        );
        assert!(self.echoes(), "the terminal was left without echo");
    }

    /// Waits for `text` and returns the screen text read up to and including it.
    #[track_caller]
    pub fn expect(&mut self, text: &str) -> String {
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

    pub fn send(&mut self, keys: &str) {
        self.session.send(keys).unwrap();
    }

    /// Waits for the end of output, then for the exit status.
    #[track_caller]
    pub fn exit_status(&mut self) -> WaitStatus {
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
    pub fn echoes(&self) -> bool {
        self.session.get_process().get_echo().unwrap()
    }

    pub fn screen(&self) -> String {
        screen(&self.seen)
    }
}

/// The text a terminal would show for `raw` output: escape sequences applied (the few the
/// line editor uses to redraw a line) or dropped, carriage returns overwrite, trailing
/// spaces trimmed.
pub fn screen(raw: &[u8]) -> String {
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
pub fn short_id(text: &str, after: &str) -> String {
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

impl Env {
    /// `zerocode` with `NO_COLOR=1`, once it has printed its banner and its first prompt.
    pub fn ready_no_color(&self, args: &[&str]) -> Term {
        let mut command = self.command(args);
        command.env("NO_COLOR", "1");
        Term::ready(command)
    }
}

impl Term {
    /// Waits for `text` and returns the raw bytes read up to and including it (escape
    /// sequences and all).
    #[track_caller]
    pub fn expect_raw(&mut self, text: &str) -> Vec<u8> {
        let before = self.seen.len();
        self.expect(text);
        self.seen[before..].to_vec()
    }
}

/// The SGR (colour and style) sequences in `raw`: `ESC [ params m`.
pub fn sgr_sequences(raw: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(raw);
    let mut found = Vec::new();
    let mut rest = text.as_ref();
    while let Some(i) = rest.find("\x1b[") {
        let after = &rest[i + 2..];
        let params: String = after
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == ';')
            .collect();
        if after[params.len()..].starts_with('m') {
            found.push(format!("\\e[{params}m"));
        }
        rest = after;
    }
    found
}

impl Term {
    /// Everything printed so far, as raw bytes made text (escape sequences kept).
    pub fn raw(&self) -> String {
        String::from_utf8_lossy(&self.seen).into_owned()
    }
}

/// The last user message of a chat request the fake provider recorded.
pub fn last_user_message(body: &serde_json::Value) -> &serde_json::Value {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap_or_else(|| panic!("no user message in {body}"))
}
