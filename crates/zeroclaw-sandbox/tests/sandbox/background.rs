//! What a command leaves behind: a process that left the session (`setsid`) and its
//! parent (a double fork), and writes only after the command has returned, is as confined
//! as the command was. The order comes from FIFOs in the command's temp dir: the
//! background process blocks reading `go` until the test, after the command's exit, writes
//! it; then it tries its escapes and writes what happened to `report`, which the test reads.

use std::io::{Read, Write};
use std::path::Path;

use zeroclaw_sandbox::Mode;

use crate::common::{Fixture, helper, helper_result, run_prepared, variants};

/// The background process's escapes, each printing its exit status.
const ESCAPES: &str = r#"echo escaped > "$VICTIM"; echo "victim=$?"; cat "$DATA/zeroclaw.db" >/dev/null 2>&1; echo "db=$?"; echo ok > "$TMPDIR/alive"; echo "temp=$?""#;

#[test]
fn a_detached_double_forked_process_that_writes_after_the_command_returned_is_confined() {
    for (variant, support) in variants() {
        for mode in [Mode::ReadOnly, Mode::WorkspaceWrite] {
            let what = format!("{variant}, {mode}");
            let fx = Fixture::new();
            let prepared = fx.policy(mode).prepare(&support).unwrap();
            let temp = prepared.temp_dir().unwrap().to_path_buf();
            for fifo in ["go", "report"] {
                mkfifo(&temp.join(fifo));
            }
            // setsid: a new session; the subshell `( ... ) &` inside it: a second fork whose
            // parent exits at once, so the process is re-parented away from the command.
            let script = format!(
                r#"setsid sh -c '( read line < "$TMPDIR/go"; {{ {ESCAPES}; }} > "$TMPDIR/report" 2>&1 ) </dev/null >/dev/null 2>&1 &'; echo started"#
            );
            let r = run_prepared(&fx, prepared, &script);
            r.assert_ok(&what);
            let watchdog = Watchdog::arm(&temp);
            // The command has returned. Now let the background process go.
            std::fs::OpenOptions::new()
                .write(true)
                .open(temp.join("go"))
                .unwrap()
                .write_all(b"go\n")
                .unwrap();
            let mut report = String::new();
            std::fs::File::open(temp.join("report"))
                .unwrap()
                .read_to_string(&mut report)
                .unwrap();
            drop(watchdog);
            assert!(
                report.contains("temp=0"),
                "{what}: the process did not run: {report}"
            );
            assert!(!report.contains("victim=0"), "{what}: {report}");
            assert!(!report.contains("db=0"), "{what}: {report}");
            fx.assert_victim_intact(&what);
            drop(r);
        }
    }
}

/// A hang guard: if the background process never comes, opens the FIFOs' other ends after a
/// minute so the test's blocking opens return (and the test fails on the empty report).
struct Watchdog(Option<std::sync::mpsc::Sender<()>>);

impl Watchdog {
    fn arm(temp: &Path) -> Watchdog {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let temp = temp.to_path_buf();
        std::thread::spawn(move || {
            if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                rx.recv_timeout(std::time::Duration::from_secs(60))
            {
                use std::os::unix::fs::OpenOptionsExt;
                let _go = std::fs::OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_NONBLOCK)
                    .open(temp.join("go"));
                let _report = std::fs::OpenOptions::new()
                    .write(true)
                    .open(temp.join("report"));
            }
        });
        Watchdog(Some(tx))
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o600) },
        0,
        "mkfifo {}",
        path.display()
    );
}

#[test]
fn a_socket_in_a_hidden_directory_stays_out_of_reach_when_the_daemon_recreates_it() {
    for (variant, support) in variants() {
        let fx = Fixture::new();
        let prepared = fx.policy(Mode::WorkspaceWrite).prepare(&support).unwrap();
        let temp = prepared.temp_dir().unwrap().to_path_buf();
        for fifo in ["go", "report"] {
            mkfifo(&temp.join(fifo));
        }
        let connect = helper(&format!("connect-unix {}", fx.data_socket.display()));
        std::fs::write(
            temp.join("later.sh"),
            format!("read line < \"$TMPDIR/go\"; {connect} > \"$TMPDIR/report\" 2>&1\n"),
        )
        .unwrap();
        let r = run_prepared(
            &fx,
            prepared,
            r#"setsid sh -c '( sh "$TMPDIR/later.sh" ) </dev/null >/dev/null 2>&1 &'"#,
        );
        r.assert_ok(variant);
        // The daemon restarts: its socket in the data dir is removed and bound again.
        std::fs::remove_file(&fx.data_socket).unwrap();
        let again = std::os::unix::net::UnixListener::bind(&fx.data_socket).unwrap();
        again.set_nonblocking(true).unwrap();
        let watchdog = Watchdog::arm(&temp);
        std::fs::OpenOptions::new()
            .write(true)
            .open(temp.join("go"))
            .unwrap()
            .write_all(b"go\n")
            .unwrap();
        let mut report = String::new();
        std::fs::File::open(temp.join("report"))
            .unwrap()
            .read_to_string(&mut report)
            .unwrap();
        drop(watchdog);
        assert!(helper_result(&report).is_err(), "{variant}: {report}");
        assert!(
            again.accept().is_err(),
            "{variant}: the new socket was reached"
        );
        drop(r);
    }
}
