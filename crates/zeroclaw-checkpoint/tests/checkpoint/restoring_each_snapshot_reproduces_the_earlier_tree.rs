//! A workspace with text, binary, executable, symlink and nested directories goes through
//! the edits an agent makes (append, delete, new directories, a binary file, mode changes,
//! symlinks, a directory replaced by a file); restoring each snapshot, in any order, gives
//! back exactly the tree it was taken of: every directory, content hash, mode and link
//! target.

#![cfg(unix)]

use crate::common::*;
use zeroclaw_checkpoint::Options;

#[test]
fn restoring_each_snapshot_reproduces_the_earlier_tree() {
    let Some(f) = fixture(Options::default()) else {
        return;
    };
    write(f.at("a"), "first line\n");
    write(f.at("b"), "bee\n");
    write(
        f.at("bin.dat"),
        (0u8..=255).cycle().take(4096).collect::<Vec<u8>>(),
    );
    write(f.at("run.sh"), "#!/bin/sh\necho hi\n");
    set_executable(f.at("run.sh"), true);
    symlink("a", f.at("link"));
    write(f.at("d1/d2/deep.txt"), "deep\r\nwindows line\r\n");

    let mut states = Vec::new();
    let mut take = |label: &str| {
        let snap = f.ws.snapshot(&name(&format!("t/{label}")), None).unwrap();
        states.push((label.to_string(), snap.id, listing(f.ws.path())));
    };
    take("start");

    // echo >> a
    let mut a = std::fs::read(f.at("a")).unwrap();
    a.extend_from_slice(b"\n");
    write(f.at("a"), a);
    take("append");

    std::fs::remove_file(f.at("b")).unwrap();
    take("rm-b");

    write(f.at("x/y/z"), "");
    take("mkdir-touch");

    write(f.at("new.bin"), noise(70_000, 7));
    take("binary");

    set_executable(f.at("a"), true);
    set_executable(f.at("run.sh"), false);
    take("modes");

    symlink("d1/d2", f.at("dirlink"));
    std::fs::remove_file(f.at("link")).unwrap();
    symlink("does-not-exist", f.at("link"));
    take("symlinks");

    std::fs::remove_dir_all(f.at("d1")).unwrap();
    write(f.at("d1"), "now a file\n");
    take("dir-to-file");

    let order = [0, 7, 3, 6, 1, 5, 2, 4, 0, 6, 7, 2];
    for (n, &i) in order.iter().enumerate() {
        let (label, id, expected) = &states[i];
        restore(&f.ws, id, &format!("t/undo/{n}"));
        assert_eq!(
            &listing(f.ws.path()),
            expected,
            "restoring {label} did not reproduce its tree"
        );
    }
}
