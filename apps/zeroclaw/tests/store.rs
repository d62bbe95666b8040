//! The session database's file is not trusted: a damaged, empty or newer file stops the
//! daemon with a message that says how to recover, and `zeroclaw store check|backup|recover`
//! work on it with real SQLite files (recover keeps the damaged file).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use zeroclaw_testkit::openai;

fn data_dir(dir: &TestDir) -> PathBuf {
    dir.config_dir().join("data")
}

/// The data dir, private as the daemon would make it, before any daemon has run.
fn make_data_dir(dir: &TestDir) {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(data_dir(dir)).unwrap();
}

fn db(dir: &TestDir) -> PathBuf {
    data_dir(dir).join("zeroclaw.db")
}

/// `zeroclaw store <args>` on `dir`, to its exit.
fn store(dir: &TestDir, args: &[&str]) -> Output {
    let mut all = vec!["store"];
    all.extend_from_slice(args);
    dir.command(&all).stdin(Stdio::null()).output().unwrap()
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Stops the daemon in order (SIGTERM; `shutdown` on Windows) and waits for its exit.
fn stop(daemon: &mut Daemon) {
    assert!(daemon.stop().success());
}

/// Replaces the database (its commits are still in its WAL) with a backup of it: one
/// self-contained file, whose pages are where the test can find them.
fn compact(dir: &TestDir) {
    let copy = dir.path().join("compact.db");
    let backup = store(dir, &["backup", copy.to_str().unwrap()]);
    assert!(backup.status.success(), "{}", text(&backup));
    for sidecar in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{sidecar}", db(dir).display()));
    }
    std::fs::rename(copy, db(dir)).unwrap();
}

/// Overwrites with garbage the table leaf page whose live cells hold `needle`.
fn smash_page_holding(path: &Path, needle: &str) {
    let mut bytes = std::fs::read(path).unwrap();
    let size = match u16::from_be_bytes([bytes[16], bytes[17]]) {
        1 => 65536,
        n => usize::from(n),
    };
    let page = (0..bytes.len() - needle.len())
        .filter(|&at| bytes[at..].starts_with(needle.as_bytes()))
        .find_map(|at| {
            let page = at / size * size;
            // Page 1 starts with the 100-byte file header.
            let header = page + if page == 0 { 100 } else { 0 };
            let content = usize::from(u16::from_be_bytes([bytes[header + 5], bytes[header + 6]]));
            // A table leaf (0x0d), and in its cell content area: not a stale copy in the
            // free space of a page that was rebuilt.
            (bytes[header] == 0x0d && at - page >= content).then_some(page)
        })
        .expect("no table leaf page holds the needle");
    bytes[page..page + size].fill(0xA5);
    std::fs::write(path, bytes).unwrap();
}

/// The damaged files `recover` kept: `zeroclaw.db.damaged-<unix seconds>` (without the
/// `-wal` and `-shm` beside them).
fn kept(dir: &TestDir) -> Vec<PathBuf> {
    std::fs::read_dir(data_dir(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_str().unwrap();
            name.strip_prefix("zeroclaw.db.damaged-")
                .is_some_and(|stamp| stamp.chars().all(|c| c.is_ascii_digit()))
        })
        .collect()
}

/// Starts a daemon that must refuse, and returns its log.
fn refused(dir: &TestDir) -> String {
    let mut daemon = dir.spawn_with(&[], &[]);
    let log = daemon.wait_for_stderr_end();
    assert!(!daemon.wait_exit().success(), "{log}");
    assert!(
        !dir.default_endpoint().exists(),
        "a refused daemon left its socket"
    );
    log
}

#[test]
fn a_damaged_page_stops_the_daemon_until_recover_rebuilds_from_the_readable_rows() {
    let mut env = Env::new("", "");
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    for n in 0..12 {
        env.fake.push(openai::text(&[&format!("reply-{n:02}")]));
        let prompt = format!("marker-{n:02} {}", "x".repeat(600));
        client.prompt(&session, &prompt, no_questions);
    }
    drop(client);
    stop(&mut env.daemon);
    compact(&env.dir);
    smash_page_holding(&db(&env.dir), "marker-00");
    let damaged = std::fs::read(db(&env.dir)).unwrap();

    let check = store(&env.dir, &["check"]);
    assert_eq!(check.status.code(), Some(2), "{}", text(&check));
    assert!(text(&check).contains("problem"), "{}", text(&check));
    let log = refused(&env.dir);
    assert!(
        log.contains("damaged") && log.contains("zeroclaw store recover"),
        "{log}"
    );

    let recover = store(&env.dir, &["recover"]);
    assert!(recover.status.success(), "{}", text(&recover));
    assert!(text(&recover).contains("unreadable"), "{}", text(&recover));
    let kept = kept(&env.dir);
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(std::fs::read(&kept[0]).unwrap(), damaged);
    let check = store(&env.dir, &["check"]);
    assert!(check.status.success(), "{}", text(&check));

    env.daemon = env.dir.start(&[]);
    let mut client = env.daemon.client();
    let list = client.call("session/list", json!({}));
    assert_eq!(list["sessions"][0]["sessionId"], json!(session), "{list}");
    let texts: Vec<String> = client
        .messages(&session)
        .iter()
        .map(|m| m["text"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(texts.iter().any(|t| t == "reply-11"), "{texts:?}");
    assert!(
        texts.iter().any(|t| t.starts_with("marker-11")),
        "{texts:?}"
    );
    assert!(
        !texts.iter().any(|t| t.starts_with("marker-00")),
        "{texts:?}"
    );
}

#[test]
fn recover_keeps_a_prompts_image_and_the_next_turn_sends_it() {
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;
    let png = STANDARD.encode(zeroclaw_testkit::PNG);
    let mut env = Env::new("", "");
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    env.fake.push(openai::text(&["a pixel"]));
    let id = client.send(
        "session/prompt",
        json!({"sessionId": session, "prompt": "what?", "content": [
            {"type": "image", "mimeType": "image/png", "data": png},
        ]}),
    );
    client.drive(&id, no_questions);
    drop(client);
    stop(&mut env.daemon);

    let recover = store(&env.dir, &["recover"]);
    assert!(recover.status.success(), "{}", text(&recover));
    assert!(
        text(&recover).contains("attachments 1 recovered"),
        "{}",
        text(&recover)
    );

    env.daemon = env.dir.start(&[]);
    let mut client = env.daemon.client();
    client.call("session/load", json!({"sessionId": session}));
    let attachment = client.messages(&session)[0]["images"][0]["attachmentId"].clone();
    let bytes = client.call(
        "session/attachment",
        json!({"sessionId": session, "attachmentId": attachment}),
    );
    assert_eq!(bytes["data"], json!(png));
    env.fake.push(openai::text(&["still a pixel"]));
    client.prompt(&session, "and now?", no_questions);
    let body = &env.fake.requests()[1].body;
    assert_eq!(
        body["messages"][1]["content"][1]["image_url"]["url"],
        json!(format!("data:image/png;base64,{png}")),
        "{body}"
    );
}

#[test]
fn an_empty_database_file_is_refused_and_recover_moves_it_aside() {
    let dir = TestDir::new();
    make_data_dir(&dir);
    std::fs::write(db(&dir), b"").unwrap();

    let check = store(&dir, &["check"]);
    assert_eq!(check.status.code(), Some(2), "{}", text(&check));
    assert!(text(&check).contains("empty"), "{}", text(&check));
    let log = refused(&dir);
    assert!(
        log.contains("empty") && log.contains("zeroclaw store recover"),
        "{log}"
    );
    assert_eq!(std::fs::metadata(db(&dir)).unwrap().len(), 0);

    let recover = store(&dir, &["recover"]);
    assert!(recover.status.success(), "{}", text(&recover));
    let kept = kept(&dir);
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(std::fs::metadata(&kept[0]).unwrap().len(), 0);
    let daemon = dir.start(&[]);
    let list = daemon.client().call("session/list", json!({}));
    assert_eq!(list["sessions"], json!([]), "{list}");
}

#[test]
fn a_database_from_a_newer_zeroclaw_is_refused_naming_both_versions() {
    let dir = TestDir::new();
    stop(&mut dir.start(&[]));
    compact(&dir);
    let mut bytes = std::fs::read(db(&dir)).unwrap();
    // The header's user_version (offset 60): the schema version this build wrote.
    let ours = u32::from_be_bytes(bytes[60..64].try_into().unwrap());
    assert!(ours > 0);
    bytes[60..64].copy_from_slice(&99u32.to_be_bytes());
    std::fs::write(db(&dir), &bytes).unwrap();

    let ours = format!("({ours})");
    let check = store(&dir, &["check"]);
    assert_eq!(check.status.code(), Some(2), "{}", text(&check));
    assert!(
        text(&check).contains("99") && text(&check).contains(&ours),
        "{}",
        text(&check)
    );
    let log = refused(&dir);
    assert!(
        log.contains("schema version is 99") && log.contains(&ours),
        "{log}"
    );
    let recover = store(&dir, &["recover"]);
    assert!(
        !recover.status.success() && text(&recover).contains("99"),
        "{}",
        text(&recover)
    );
    assert_eq!(std::fs::read(db(&dir)).unwrap(), bytes);
}

#[test]
fn a_backup_made_beside_a_running_daemon_checks_clean_and_check_and_recover_wait_for_it() {
    let dir = TestDir::new();
    let daemon = dir.start(&[]);
    let mut client = daemon.client();
    for _ in 0..3 {
        client.new_session(dir.path());
    }
    for action in ["check", "recover"] {
        let refused = store(&dir, &[action]);
        assert!(!refused.status.success(), "{}", text(&refused));
        let said = text(&refused);
        assert!(said.contains(&format!("pid {}", daemon.pid())), "{said}");
    }
    assert!(kept(&dir).is_empty());
    let copy = dir.path().join("backup.db");
    let backup = store(&dir, &["backup", copy.to_str().unwrap()]);
    assert!(backup.status.success(), "{}", text(&backup));

    let other = TestDir::new();
    make_data_dir(&other);
    std::fs::copy(&copy, db(&other)).unwrap();
    let check = store(&other, &["check"]);
    assert!(check.status.success(), "{}", text(&check));
    assert!(text(&check).contains(": ok"), "{}", text(&check));
    let restored = other.start(&[]);
    let list = restored.client().call("session/list", json!({}));
    assert_eq!(list["sessions"].as_array().unwrap().len(), 3, "{list}");
}

#[test]
fn a_stopped_daemon_leaves_one_whole_database_file_and_no_wal() {
    let dir = TestDir::new();
    let mut daemon = dir.start(&[]);
    let mut client = daemon.client();
    let session = client.call("session/new", json!({"cwd": dir.path()}))["sessionId"].clone();
    // `zeroclaw stop`'s way: the connection asking is still open while the daemon stops.
    assert_eq!(client.call("shutdown", json!({})), json!({}));
    assert!(daemon.wait_exit().success());
    for sidecar in ["-wal", "-shm"] {
        let path = format!("{}{sidecar}", db(&dir).display());
        assert!(!Path::new(&path).exists(), "{path} left behind");
    }
    // The file alone (what a user copies as a backup) holds the session.
    let copy = TestDir::new();
    make_data_dir(&copy);
    std::fs::copy(db(&dir), db(&copy)).unwrap();
    let list = copy.start(&[]).client().call("session/list", json!({}));
    assert_eq!(list["sessions"][0]["sessionId"], session, "{list}");
}

/// An endpoint of the test's own that is not the default one (a mistyped ZEROCLAW_SOCKET).
fn another_endpoint(dir: &TestDir) -> String {
    if cfg!(windows) {
        format!(r"\\.\pipe\zc-test-{}-typo", std::process::id())
    } else {
        dir.path().join("typo.sock").display().to_string()
    }
}

/// Issue 28: through another socket, `store check` checked the live database and `store
/// recover` rebuilt it under the daemon. The data dir's lock refuses both, naming the daemon
/// (its pid and endpoint), and nothing is renamed; `backup`, made for a live store, copies it
/// and says that it read a live one.
#[test]
fn through_another_socket_check_and_recover_refuse_a_live_store_and_backup_says_it_reads_one() {
    let dir = TestDir::new();
    let daemon = dir.start(&[]);
    let session = daemon.client().new_session(dir.path());
    let other = another_endpoint(&dir);
    let run = |args: &[&str]| {
        let mut all = vec!["store"];
        all.extend_from_slice(args);
        dir.command(&all)
            .env("ZEROCLAW_SOCKET", &other)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let daemon_named = [
        data_dir(&dir).display().to_string(),
        format!("pid {}", daemon.pid()),
        format!("serving {}", daemon.endpoint.display()),
    ];
    for action in ["check", "recover"] {
        let refused = run(&[action]);
        assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
        let said = text(&refused);
        for named in &daemon_named {
            assert!(said.contains(named), "{action}: {named:?} not in: {said}");
        }
    }
    assert!(kept(&dir).is_empty());

    let copy = dir.path().join("live.db");
    let backup = run(&["backup", copy.to_str().unwrap()]);
    assert!(backup.status.success(), "{}", text(&backup));
    let said = String::from_utf8_lossy(&backup.stderr);
    assert!(said.contains("reading a live store"), "{said}");
    for named in &daemon_named[1..] {
        assert!(said.contains(named), "{named:?} not in: {said}");
    }
    let restored = TestDir::new();
    make_data_dir(&restored);
    std::fs::copy(&copy, db(&restored)).unwrap();
    let list = restored.start(&[]).client().call("session/list", json!({}));
    assert_eq!(list["sessions"][0]["sessionId"], json!(session), "{list}");
}

/// While a command that writes the store holds the data dir (here this test, as `zeroclaw
/// store recover` would), a daemon on that data dir is refused, whatever its socket, naming
/// the command and its pid; and it starts once the command is done.
#[test]
fn a_daemon_is_refused_while_a_store_command_holds_the_data_dir() {
    let dir = TestDir::new();
    make_data_dir(&dir);
    let paths = zeroclaw_ipc::Paths {
        config_dir: dir.config_dir(),
        data_dir: data_dir(&dir),
        endpoint: zeroclaw_ipc::Endpoint::new(dir.default_endpoint()),
    };
    let held = zeroclaw_ipc::lock(&paths, "zeroclaw store recover").unwrap();
    let other = another_endpoint(&dir);
    let mut daemon = dir.spawn_with(&[], &[("ZEROCLAW_SOCKET", &other)]);
    let log = daemon.wait_for_stderr_end();
    assert!(!daemon.wait_exit().success(), "{log}");
    assert!(
        log.contains("`zeroclaw store recover`")
            && log.contains(&format!("pid {}", std::process::id()))
            && log.contains("wait for it to finish"),
        "{log}"
    );
    assert!(
        !db(&dir).exists(),
        "the refused daemon created the database"
    );
    drop(held);
    let daemon = dir.start_with(&[], &[("ZEROCLAW_SOCKET", &other)]);
    let status = daemon.client().call("status", json!({}));
    assert_eq!(status["pid"], json!(daemon.pid()));
}

/// Issue 31: `zeroclaw store prune` keeps every snapshot a session's checkpoints still name
/// (a rewind after it works), refuses beside a running daemon, and a deleted session's
/// snapshots are gone with it (its workspace's whole checkpoint store, being the only one).
#[test]
#[cfg(unix)]
fn store_prune_keeps_the_snapshots_sessions_hold_and_a_deleted_sessions_go_with_it() {
    let mut env = Env::new("", "[approvals]\nwrite_file = \"allow\"");
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    env.fake.push(
        openai::Builder::new()
            .tool_call(0, "c1", "write_file", r#"{"path": "f", "content": "x"}"#, 1)
            .build(),
    );
    env.fake.push(openai::text(&["written"]));
    client.prompt(&session, "write f", no_questions).result();
    assert!(env.work.join("f").exists());

    let beside = store(&env.dir, &["prune"]);
    assert!(!beside.status.success(), "{}", text(&beside));
    drop(client);
    stop(&mut env.daemon);
    let pruned = store(&env.dir, &["prune"]);
    assert!(pruned.status.success(), "{}", text(&pruned));
    assert!(
        text(&pruned).contains("dropped 0 checkpoint snapshot(s) no session holds, kept 2"),
        "{}",
        text(&pruned)
    );

    env.daemon = env.dir.start(&[]);
    let mut client = env.daemon.client();
    client.call("session/load", json!({"sessionId": session}));
    let listed = client.call("session/checkpoints", json!({"sessionId": session}));
    let checkpoint = &listed["checkpoints"][0]["checkpointId"];
    client.call(
        "session/rewind",
        json!({"sessionId": session, "checkpointId": checkpoint}),
    );
    assert!(!env.work.join("f").exists());

    let repos = data_dir(&env.dir).join("checkpoints").join("repos");
    assert_eq!(std::fs::read_dir(&repos).unwrap().count(), 1);
    client.call("session/delete", json!({"sessionId": session}));
    assert_eq!(std::fs::read_dir(&repos).unwrap().count(), 0);
}

/// Issue 36: the clean-close record beside the database (Unix only, as the record is).
#[cfg(unix)]
fn closed_record(dir: &TestDir) -> PathBuf {
    data_dir(dir).join("zeroclaw.db-closed")
}

/// The daemon's log at debug for its own crate: start-up says whether it checked the file.
#[cfg(unix)]
const DEBUG: [(&str, &str); 1] = [("RUST_LOG", "info,zeroclaw_daemon=debug")];

/// An env whose one session holds twelve prompts ("marker-00" … "marker-11") and replies,
/// its daemon stopped in order (so its file is whole and recorded as cleanly closed).
#[cfg(unix)]
fn stopped_with_history() -> Env {
    let mut env = Env::new("", "");
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    for n in 0..12 {
        env.fake.push(openai::text(&[&format!("reply-{n:02}")]));
        let prompt = format!("marker-{n:02} {}", "x".repeat(600));
        client.prompt(&session, &prompt, no_questions);
    }
    drop(client);
    stop(&mut env.daemon);
    env
}

/// Issue 36: a start after an orderly stop skips `quick_check` (the record says the file is
/// as that stop left it); a SIGKILLed daemon leaves no record, so damage made after it, at
/// the same length, is found by the next start's whole check.
#[test]
#[cfg(unix)]
fn a_start_after_a_clean_stop_skips_the_check_and_one_after_a_kill_finds_damage_at_the_same_length()
{
    let env = stopped_with_history();
    assert!(closed_record(&env.dir).exists());
    let mut daemon = env.dir.start_with(&[], &DEBUG);
    daemon.wait_for_log("unchanged since a clean close; quick_check skipped");
    assert!(
        !closed_record(&env.dir).exists(),
        "a daemon that has the file open for writing leaves no record"
    );
    daemon.kill();
    assert!(!closed_record(&env.dir).exists());

    let length = std::fs::metadata(db(&env.dir)).unwrap().len();
    smash_page_holding(&db(&env.dir), "marker-00");
    assert_eq!(std::fs::metadata(db(&env.dir)).unwrap().len(), length);
    let mut refused = env.dir.spawn_with(&[], &DEBUG);
    let log = refused.wait_for_stderr_end();
    assert!(!refused.wait_exit().success(), "{log}");
    assert!(
        log.contains("quick_check") && log.contains("zeroclaw store recover"),
        "{log}"
    );
}

/// Issue 36: a write from outside after an orderly stop, at the same length and with the
/// old modification time put back, still changes the file's change time: the next start
/// checks the whole file and refuses the damage.
#[test]
#[cfg(unix)]
fn a_write_after_a_clean_stop_that_keeps_the_length_and_mtime_still_gets_the_whole_check() {
    let env = stopped_with_history();
    let path = db(&env.dir);
    let before = std::fs::metadata(&path).unwrap();
    smash_page_holding(&path, "marker-00");
    let file = std::fs::File::options().write(true).open(&path).unwrap();
    file.set_modified(before.modified().unwrap()).unwrap();
    drop(file);
    let after = std::fs::metadata(&path).unwrap();
    assert_eq!(
        (after.len(), after.modified().unwrap()),
        (before.len(), before.modified().unwrap())
    );
    assert!(
        closed_record(&env.dir).exists(),
        "the record is still there"
    );
    let log = refused(&env.dir);
    assert!(
        log.contains("damaged") && log.contains("zeroclaw store recover"),
        "{log}"
    );
}

/// Issue 36: a database from before the search index (schema version 14) migrates at
/// start-up, and the sessions it held are found by `session/list`'s search, by title and by
/// cwd, with the same rules (short texts, wildcards as themselves).
#[test]
fn a_database_from_before_the_search_index_migrates_and_its_sessions_are_found() {
    let dir = TestDir::new();
    stop(&mut dir.start(&[]));
    {
        // Back to version 14: what migrations 15 to 17 added, gone; sessions written as
        // that version would have (no index to keep in step).
        let conn = rusqlite::Connection::open(db(&dir)).unwrap();
        conn.execute_batch(
            "DROP TRIGGER sessions_search_insert; DROP TRIGGER sessions_search_delete; \
             DROP TRIGGER sessions_search_update; DROP TABLE sessions_search; \
             DROP INDEX turns_running; DROP INDEX sessions_by_cwd; PRAGMA user_version = 14;",
        )
        .unwrap();
        for (n, (title, cwd)) in [
            ("Fix the flaky Parser test", "/home/dev/alpha"),
            ("100% coverage", "/home/dev/Beta_Project"),
            ("chores", "/home/dev/gamma"),
        ]
        .iter()
        .enumerate()
        {
            conn.execute(
                "INSERT INTO sessions (id, title, cwd, model, created_at, updated_at) \
                 VALUES (?1, ?2, ?3, 'fake', ?4, ?4)",
                rusqlite::params![format!("old-{n}"), title, cwd, 1000 + n as i64],
            )
            .unwrap();
        }
    }
    let daemon = dir.start(&[]);
    let mut client = daemon.client();
    let found = |client: &mut Client, search: &str| -> Vec<String> {
        let page = client.call("session/list", json!({"search": search}));
        page["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["sessionId"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(found(&mut client, "PARSER"), ["old-0"]);
    assert_eq!(found(&mut client, "beta_proj"), ["old-1"]);
    assert_eq!(found(&mut client, "0% c"), ["old-1"]);
    assert_eq!(found(&mut client, "%"), ["old-1"]);
    assert_eq!(found(&mut client, "a_p"), ["old-1"], "`_` is itself");
    assert!(found(&mut client, "a%p").is_empty(), "`%` is itself");
    assert_eq!(found(&mut client, "CH"), ["old-2"]);
    assert_eq!(
        found(&mut client, "/home/dev/"),
        ["old-2", "old-1", "old-0"]
    );
    // Made after the migration: the index keeps up.
    let made = client.call(
        "session/new",
        json!({"cwd": dir.path(), "title": "another flaky one"}),
    );
    let made = made["sessionId"].as_str().unwrap().to_owned();
    assert_eq!(found(&mut client, "FLAKY"), [made, "old-0".to_owned()]);
}
