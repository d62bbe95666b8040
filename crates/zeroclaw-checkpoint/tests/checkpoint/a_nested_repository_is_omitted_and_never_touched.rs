//! A directory with a `.git` of its own (a clone, a submodule) is left out whole and
//! listed; a restore to a time before it existed leaves it, and everything in it, alone.

use crate::common::*;
use zeroclaw_checkpoint::Options;

#[test]
fn a_nested_repository_is_omitted_and_never_touched() {
    let Some(f) = fixture(Options::default()) else {
        return;
    };
    let home = f.dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    write(f.at("top.txt"), "top\n");
    let before = f.ws.snapshot(&name("s/0"), None).unwrap();

    let nested = f.at("vendor/lib");
    std::fs::create_dir_all(&nested).unwrap();
    user_git(&nested, &home, &["init", "-q"]);
    write(nested.join("code.c"), "int x;\n");
    write(f.at("vendor/readme"), "vendored\n");
    let inner_before = listing(&nested);

    let after = f.ws.snapshot(&name("s/1"), Some(&before.id)).unwrap();
    assert_eq!(
        after.omitted.nested_repositories,
        vec![std::path::PathBuf::from("vendor/lib")]
    );
    assert_eq!(after.files, 2, "top.txt and vendor/readme");

    restore(&f.ws, &before.id, "s/undo");
    assert!(!f.at("vendor/readme").exists());
    assert_eq!(listing(&nested), inner_before);
}
