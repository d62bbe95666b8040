//! A workspace in a subdirectory of the user's repository is captured with the rules the
//! user's git applies there: the `.gitignore` files above it and the repository's
//! `info/exclude` (read, never written). Paths stay relative to the workspace. A workspace
//! the repository itself ignores is captured on its own rules instead.

use crate::common::*;
use zeroclaw_checkpoint::{Change, ChangeKind, Ignored, Options};

#[test]
fn a_workspace_inside_a_repository_follows_its_ignore_rules() {
    let Some(f) = fixture_in(Options::default(), "repo/packages/app") else {
        return;
    };
    let repo = f.dir.path().join("repo");
    let home = f.dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    user_git(&repo, &home, &["init", "-q"]);
    write(
        repo.join(".gitignore"),
        "*.log\nbuild/\n/packages/app/local-only\nscratch/\n",
    );
    write(repo.join(".git/info/exclude"), "secret.txt\n");
    let exclude_before = std::fs::read(repo.join(".git/info/exclude")).unwrap();
    write(repo.join("outside.txt"), "not in the workspace\n");
    write(f.at("src/main.rs"), "fn main() {}\n");
    write(f.at("debug.log"), "log\n");
    write(f.at("build/out.o"), "obj\n");
    write(f.at("secret.txt"), "secret\n");
    write(f.at("local-only"), "mine\n");

    let first = f.ws.snapshot(&name("s/0"), None).unwrap();
    assert_eq!(first.files, 1, "only src/main.rs: {:?}", first.omitted);
    let ignored: Vec<Ignored> = ["build", "debug.log", "local-only", "secret.txt"]
        .into_iter()
        .map(|p| Ignored {
            path: p.into(),
            directory: p == "build",
        })
        .collect();
    assert_eq!(f.ws.ignored(100).unwrap().entries, ignored);

    write(f.at("src/main.rs"), "fn main() { changed() }\n");
    write(f.at("more.log"), "log\n");
    let second = f.ws.snapshot(&name("s/1"), Some(&first.id)).unwrap();
    assert_eq!(
        second.changes,
        vec![Change {
            path: "src/main.rs".into(),
            change: ChangeKind::Modified
        }]
    );
    restore(&f.ws, &first.id, "s/undo");
    assert_eq!(
        std::fs::read_to_string(f.at("src/main.rs")).unwrap(),
        "fn main() {}\n"
    );
    assert_eq!(
        std::fs::read(repo.join(".git/info/exclude")).unwrap(),
        exclude_before
    );

    // A workspace under a directory the repository ignores: its own rules only.
    let scratch = repo.join("scratch/try");
    write(scratch.join("a.txt"), "a\n");
    write(scratch.join("b.log"), "b\n");
    let ws = f.engine.workspace(&scratch).unwrap();
    let snap = ws.snapshot(&name("t/0"), None).unwrap();
    assert_eq!(snap.files, 2, "{:?}", snap.omitted);
}
