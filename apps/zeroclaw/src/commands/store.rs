//! `zeroclaw store`: the session database's maintenance, on the file itself (no daemon is
//! needed; `check` and `recover` refuse while one runs on the data dir, whatever its
//! endpoint; `backup` reads a live store and says so).

use std::path::Path;
use zeroclaw_daemon::maintenance::{self, Recovery};
use zeroclaw_ipc::{Holder, Paths};

/// `check`'s exit status when it found something wrong (1 is "could not check").
const DAMAGED: u8 = 2;

pub fn check(paths: &Paths) -> Result<u8, String> {
    let db = maintenance::database(paths);
    let found = maintenance::check(paths).map_err(|e| e.to_string())?;
    if found.is_empty() {
        println!("{}: ok", db.display());
        return Ok(0);
    }
    println!("{}: {} problem(s)", db.display(), found.len());
    for line in &found {
        println!("  {line}");
    }
    println!(
        "`zeroclaw store backup FILE` copies it as it is; `zeroclaw store recover` rebuilds it \
         from what can still be read, keeping this file"
    );
    Ok(DAMAGED)
}

pub fn backup(paths: &Paths, to: &Path) -> Result<u8, String> {
    let db = maintenance::database(paths);
    let live = maintenance::backup(paths, to).map_err(|e| e.to_string())?;
    if let Some(Holder::Daemon { pid, endpoint }) = live {
        let pid = pid.map_or_else(|| "pid unknown".to_owned(), |pid| format!("pid {pid}"));
        let serving = endpoint
            .map(|e| format!(", serving {e}"))
            .unwrap_or_default();
        eprintln!(
            "reading a live store: a daemon ({pid}{serving}) is using it; the copy is the \
             database as it was at one moment, with every commit up to then"
        );
    }
    println!("copied {} to {}", db.display(), to.display());
    Ok(0)
}

pub fn prune(paths: &Paths) -> Result<u8, String> {
    let pruned = maintenance::prune(paths).map_err(|e| e.to_string())?;
    println!(
        "dropped {} checkpoint snapshot(s) no session holds, kept {}; the checkpoint store went from {} to {} bytes",
        pruned.refs_removed, pruned.refs_kept, pruned.bytes_before, pruned.bytes_after
    );
    Ok(0)
}

pub fn recover(paths: &Paths) -> Result<u8, String> {
    let recovery = maintenance::recover(paths).map_err(|e| e.to_string())?;
    print!("{}", describe(&recovery, &maintenance::database(paths)));
    Ok(0)
}

fn describe(r: &Recovery, db: &Path) -> String {
    let mut out = format!("kept the old file as {}\n", r.kept.display());
    if r.was_empty {
        out.push_str("it was empty: nothing to recover\n");
    }
    for t in &r.tables {
        out.push_str(&format!("{:<11} {} recovered", t.name, t.copied));
        if t.unreadable > 0 {
            out.push_str(&format!(", {} row id(s) unreadable", t.unreadable));
        }
        if !t.to_the_end {
            out.push_str(", the rest of the table unreadable (not counted)");
        }
        out.push('\n');
    }
    if r.orphans > 0 {
        out.push_str(&format!(
            "{} turn(s), message(s) and image(s) dropped: their session, turn or message was lost\n",
            r.orphans
        ));
    }
    out.push_str(&format!("new database: {}\n", db.display()));
    out
}
