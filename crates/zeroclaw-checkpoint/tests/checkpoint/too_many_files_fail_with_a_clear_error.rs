//! A workspace with more files to capture than `max_files` is refused at once with an
//! error that says what to do, rather than hashing for minutes; ignoring the bulk of them
//! makes it fine.

use crate::common::*;
use zeroclaw_checkpoint::{Error, Options};

#[test]
fn too_many_files_fail_with_a_clear_error() {
    let options = Options {
        max_files: 50,
        ..Options::default()
    };
    let Some(f) = fixture(options) else { return };
    for i in 0..60 {
        write(f.at(&format!("gen/{i}.txt")), i.to_string());
    }
    write(f.at("main.txt"), "main\n");
    let err = f.ws.snapshot(&name("s/0"), None).unwrap_err();
    assert!(
        matches!(err, Error::TooManyFiles { limit: 50, found, .. } if found == 51),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains("add the large trees to .gitignore"),
        "{err}"
    );

    write(f.at(".gitignore"), "gen/\n");
    let snap = f.ws.snapshot(&name("s/0"), None).unwrap();
    assert_eq!(snap.files, 2);
}
