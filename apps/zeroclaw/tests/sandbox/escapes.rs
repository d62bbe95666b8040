//! The escape suite, in the default `workspace-write` (and `read-only`) sessions: every way
//! out is blocked with the explained text, nothing changes outside; the counterparts in
//! the workspace and the temp dir succeed.

use crate::common::*;
use crate::{BLOCKED, Sandboxed};
use serde_json::{Value, json};
use std::io::Write;
use std::process::Command;

#[test]
fn writes_outside_the_workspace_are_blocked_whichever_way_they_go() {
    let mut s = Sandboxed::new("", Value::Null);
    let outside = s.outside.clone();
    let parent = s.env.dir.path().to_path_buf();
    std::fs::write(outside.join("target"), "original").unwrap();
    std::os::unix::fs::symlink(&outside, s.env.work.join("link")).unwrap();

    let direct = s.bash(&format!("echo x > {}/direct", outside.display()));
    direct.blocked("write outside the workspace");
    assert!(direct.is_error);
    s.bash("echo x > ../escaped")
        .blocked("write outside the workspace");
    s.bash("echo x > link/via-link")
        .blocked("write outside the workspace");
    s.bash(&format!(
        "echo x > /proc/self/root{}/via-proc",
        outside.display()
    ))
    .blocked("write outside the workspace");
    s.bash(&format!(
        "ln {}/target hard && echo y >> hard",
        outside.display()
    ))
    .blocked("");
    for gone in ["direct", "via-link", "via-proc"] {
        assert!(!outside.join(gone).exists(), "{gone} was written");
    }
    assert!(!parent.join("escaped").exists());
    assert_eq!(
        std::fs::read_to_string(outside.join("target")).unwrap(),
        "original"
    );

    // The counterparts: the workspace and the private temp dir are writable.
    let inside =
        s.bash("echo inside > made && cat made && echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\"");
    inside.allowed();
    assert!(inside.text.contains("inside\nt\n"), "{}", inside.text);
    assert_eq!(
        std::fs::read_to_string(s.env.work.join("made")).unwrap(),
        "inside\n"
    );
}

#[test]
fn a_detached_double_forked_child_is_still_confined_after_the_call_returned() {
    let mut s = Sandboxed::new("", Value::Null);
    let fifo = s.env.work.join("go");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let late = s.outside.join("late");
    let done = s.env.work.join("done");
    // The child blocks on the FIFO until the test writes to it, after the call returned.
    let started = s.bash(&format!(
        "( setsid sh -c 'cat go > /dev/null; echo x > {}; touch done' \
           > /dev/null 2>&1 < /dev/null & ) ; echo started",
        late.display()
    ));
    started.allowed();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&fifo)
        .unwrap()
        .write_all(b"go\n")
        .unwrap();
    poll_until("the background child to finish", || done.exists());
    assert!(!late.exists(), "the detached child wrote outside");
}

#[test]
fn the_daemons_database_config_and_socket_are_out_of_reach() {
    let mut s = Sandboxed::new("", Value::Null);
    let db = s.env.dir.data_dir().join("zeroclaw.db");
    assert!(db.exists());
    let read = s.bash(&format!("head -c 16 {}", db.display()));
    read.blocked("one of the daemon's own files");
    assert!(!read.text.contains("SQLite format"), "{}", read.text);
    let config = s.env.dir.config_dir().join("config.toml");
    let read = s.bash(&format!("cat {}", config.display()));
    read.blocked("one of the daemon's own files");
    assert!(!read.text.contains("[provider]"), "{}", read.text);
    let write = s.bash(&format!("echo '[agent]' >> {}", config.display()));
    write.blocked("");
    assert!(!s.env.dir.config_text().contains("[agent]"));
    // The socket: connecting to its path reaches nothing (a covered path), so a command
    // can never approve its own requests.
    let socket = s.env.dir.data_dir().join("daemon.sock");
    let connect = s.bash(&format!(
        "python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect(\"{}\"); print(\"connected\")'",
        socket.display()
    ));
    assert!(connect.is_error, "{}", connect.text);
    assert!(!connect.text.contains("\nconnected"), "{}", connect.text);
}

#[test]
fn a_process_outside_cannot_be_killed() {
    let mut s = Sandboxed::new("", Value::Null);
    let mut victim = Command::new("sleep").arg("300").spawn().unwrap();
    let killed = s.bash(&format!("kill -TERM {}", victim.id()));
    killed.blocked("processes outside the sandbox");
    assert!(
        victim.try_wait().unwrap().is_none(),
        "the process outside died"
    );
    victim.kill().unwrap();
    victim.wait().unwrap();
    // Its own children it may signal and wait for.
    s.bash("sleep 300 & kill $! && wait $!; echo reaped")
        .allowed();
}

#[test]
fn a_read_only_session_writes_nothing_but_its_temp_dir() {
    let mut s = Sandboxed::new("", json!({"mode": "read-only"}));
    let refused = s.bash("echo x > made");
    refused.blocked("write in a read-only session");
    assert!(!s.env.work.join("made").exists());
    s.bash("echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\" && ls")
        .allowed();
    assert!(!s.bash("true").text.contains(BLOCKED));
}
