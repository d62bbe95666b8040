//! `zeroclaw dashboard --open` keeps the login code out of the opener's command line and
//! environment (readable by every local user in `/proc/PID/cmdline`): the opener is handed a
//! 0600 redirect file in the data dir's private `run/` directory, deleted by a later run
//! once its code has expired; an opener that fails or is missing is said, with the link.
#![cfg(unix)]

use crate::harness::*;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

/// The system opener's name on this platform.
const OPENER: &str = if cfg!(target_os = "macos") {
    "open"
} else {
    "xdg-open"
};

/// A `bin/` dir holding an opener script with this body, and a `PATH` starting with it.
fn fake_opener(gw: &Gw, body: &str) -> String {
    let bin = gw.env.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let opener = bin.join(OPENER);
    std::fs::write(&opener, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&opener, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

fn open(gw: &Gw, path: &str) -> (Output, String) {
    let out = gw
        .env
        .dir
        .command(&["dashboard", "--open"])
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let link = String::from_utf8(out.stdout.clone())
        .unwrap()
        .trim()
        .to_owned();
    assert!(
        link.starts_with(&format!("{}/login#code=", gw.url)),
        "{link}"
    );
    (out, link)
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn the_opener_gets_a_private_redirect_file_and_never_the_code() {
    let gw = Gw::new();
    let record = gw.env.dir.path().join("record");
    std::fs::create_dir_all(&record).unwrap();
    let path = fake_opener(
        &gw,
        &format!(
            "printf '%s\\n' \"$@\" > {0}/argv\nenv > {0}/env",
            record.display()
        ),
    );
    let (_, link) = open(&gw, &path);
    let code = link.split_once("#code=").unwrap().1;
    let argv = std::fs::read_to_string(record.join("argv")).unwrap();
    let env = std::fs::read_to_string(record.join("env")).unwrap();
    assert!(
        !argv.contains(code),
        "the code is in the opener's argv: {argv}"
    );
    assert!(
        !env.contains(code),
        "the code is in the opener's environment"
    );

    // One argument: a redirect file in <data dir>/run, 0600 in a 0700 directory, that
    // sends the browser to the link.
    let lines: Vec<&str> = argv.lines().collect();
    assert_eq!(lines.len(), 1, "{argv}");
    let file = PathBuf::from(lines[0]);
    let run = gw.env.dir.data_dir().join("run");
    assert_eq!(file.parent().unwrap(), run);
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(&run), 0o700);
    let page = std::fs::read_to_string(&file).unwrap();
    assert!(
        page.contains(&format!(
            "<meta http-equiv=\"refresh\" content=\"0;url={link}\">"
        )),
        "{page}"
    );

    // A later run deletes the files whose code has expired (5 minutes), not newer ones.
    let recent = run.join("dashboard-open-1-1.html");
    std::fs::write(&recent, "recent").unwrap();
    let ten_minutes_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(600);
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(ten_minutes_ago)
        .unwrap();
    open(&gw, &path);
    assert!(!file.exists(), "the expired redirect file is deleted");
    assert!(recent.exists(), "a file that may still be in use stays");
    let second = std::fs::read_to_string(record.join("argv")).unwrap();
    assert!(Path::new(second.trim()).exists());
}

#[test]
fn an_opener_that_fails_or_is_missing_is_said_with_the_link() {
    let gw = Gw::new();
    let path = fake_opener(&gw, "exit 3");
    let (out, link) = open(&gw, &path);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains(&format!("{OPENER} could not open the browser")),
        "{stderr}"
    );
    assert!(stderr.contains(&link), "{stderr}");

    let empty = gw.env.dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let (out, link) = open(&gw, &empty.display().to_string());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains(&format!("could not start {OPENER}")),
        "{stderr}"
    );
    assert!(stderr.contains(&link), "{stderr}");
}
