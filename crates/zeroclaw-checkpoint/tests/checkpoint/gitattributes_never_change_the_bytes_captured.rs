//! Whatever the workspace's `.gitattributes` say (end-of-line conversion, `ident`, a
//! filter, an encoding), a snapshot holds the bytes on disk and a restore writes them back
//! exactly: CRLF stays CRLF, LF stays LF.

use crate::common::*;
use zeroclaw_checkpoint::Options;

#[test]
fn gitattributes_never_change_the_bytes_captured() {
    let Some(f) = fixture(Options::default()) else {
        return;
    };
    write(
        f.at(".gitattributes"),
        "* text=auto eol=crlf\n*.txt text eol=lf ident\n*.dat filter=lfs diff=lfs merge=lfs -text\n*.utf16 working-tree-encoding=UTF-16\n",
    );
    write(f.at("crlf.txt"), "one\r\ntwo\r\n$Id$\r\n");
    write(f.at("lf.md"), "one\ntwo\n");
    write(f.at("mixed.c"), "a\r\nb\nc\r\n");
    write(
        f.at("blob.dat"),
        "version https://git-lfs.github.com/spec/v1\r\n",
    );
    write(
        f.at("wide.utf16"),
        [0xff, 0xfe, b'h', 0, b'i', 0, b'\r', 0, b'\n', 0],
    );
    let expected = listing(f.ws.path());
    let snap = f.ws.snapshot(&name("s/0"), None).unwrap();

    for file in ["crlf.txt", "lf.md", "mixed.c", "blob.dat", "wide.utf16"] {
        write(f.at(file), "overwritten\n");
    }
    restore(&f.ws, &snap.id, "s/undo");
    assert_eq!(listing(f.ws.path()), expected);
}
