//! A shadow repository with parts missing or an object damaged is reported as `Corrupt`
//! (never a panic), `remove` deletes it and the next snapshot starts a new one; a damaged
//! index, being only a cache, is rebuilt without a word.

use crate::common::*;
use zeroclaw_checkpoint::{Error, Options};

#[test]
fn a_damaged_store_is_reported_and_can_be_started_afresh() {
    let Some(f) = fixture(Options::default()) else {
        return;
    };
    write(f.at("a.txt"), "a\n");
    write(f.at("b.txt"), "b\n");
    let first = f.ws.snapshot(&name("s/0"), None).unwrap();
    let repo = f.ws.store_dir();

    // The index: garbage, then nothing at all.
    std::fs::write(repo.join("index"), b"not an index").unwrap();
    assert_eq!(f.ws.snapshot(&name("s/1"), None).unwrap().id, first.id);
    std::fs::write(repo.join("index"), b"DI").unwrap();
    assert_eq!(f.ws.snapshot(&name("s/1"), None).unwrap().id, first.id);

    // Damaged objects, loose and packed (the trees are packed): verify finds them.
    let objects = repo.join("objects");
    let mut damaged = 0;
    for dir in std::fs::read_dir(&objects).unwrap().flatten() {
        let name = dir.file_name().to_string_lossy().into_owned();
        if name.len() != 2 && name != "pack" {
            continue;
        }
        for object in std::fs::read_dir(dir.path()).unwrap().flatten() {
            let path = object.path();
            if name == "pack" && path.extension().is_none_or(|e| e != "pack") {
                continue;
            }
            let mut perms = std::fs::metadata(&path).unwrap().permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            perms.set_readonly(false);
            std::fs::set_permissions(&path, perms).unwrap();
            std::fs::write(&path, b"garbage").unwrap();
            damaged += 1;
        }
    }
    assert!(damaged > 0);
    let err = f.ws.verify().unwrap_err();
    assert!(matches!(err, Error::Corrupt { .. }), "{err:?}");
    assert!(
        err.to_string().contains("remove it to start afresh"),
        "{err}"
    );

    // A missing part: every operation says so.
    std::fs::remove_file(repo.join("HEAD")).unwrap();
    let err = f.ws.snapshot(&name("s/2"), None).unwrap_err();
    assert!(
        matches!(&err, Error::Corrupt { detail, .. } if detail.contains("HEAD")),
        "{err:?}"
    );
    assert!(matches!(
        f.ws.diff(&first.id, &first.id),
        Err(Error::Corrupt { .. })
    ));

    f.ws.remove().unwrap();
    assert!(!repo.exists());
    let again = f.ws.snapshot(&name("s/0"), None).unwrap();
    assert_eq!(again.id, first.id);
    f.ws.verify().unwrap();
}
