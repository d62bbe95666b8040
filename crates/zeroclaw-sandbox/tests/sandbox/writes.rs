//! Writing outside the writable set, every way a shell offers: each attempt fails, the
//! file outside is untouched, nothing new appears outside, and the failure is explained.

use std::os::unix::fs::symlink;

use zeroclaw_sandbox::{Mode, Refusal};

use crate::common::{Fixture, run, variants};

struct Attempt {
    name: &'static str,
    script: &'static str,
    /// Whether the program's message names a path `explain` can place (a bare file name
    /// after a `cd` cannot be placed).
    explained: bool,
}

const ATTEMPTS: &[Attempt] = &[
    Attempt {
        name: "a direct path",
        script: r#"echo escaped > "$VICTIM""#,
        explained: true,
    },
    Attempt {
        name: "an append",
        script: r#"echo escaped >> "$VICTIM""#,
        explained: true,
    },
    Attempt {
        name: "a path with ..",
        script: r#"echo escaped > ../outside/victim.txt"#,
        explained: true,
    },
    Attempt {
        name: "truncate(1)",
        script: r#"truncate -s 0 "$VICTIM""#,
        explained: true,
    },
    Attempt {
        name: "dd into the file",
        script: r#"dd if=/dev/zero of="$VICTIM" bs=1 count=1 conv=notrunc"#,
        explained: true,
    },
    Attempt {
        name: "removing the file",
        script: r#"rm -f "$VICTIM""#,
        explained: true,
    },
    Attempt {
        name: "renaming the file outside",
        script: r#"mv "$VICTIM" "$OUT/moved""#,
        explained: true,
    },
    Attempt {
        name: "moving the file into the workspace",
        script: r#"mv "$VICTIM" ./stolen"#,
        explained: true,
    },
    Attempt {
        name: "creating a file beside it",
        script: r#"echo escaped > "$OUT/new.txt""#,
        explained: true,
    },
    Attempt {
        name: "creating a directory beside it",
        script: r#"mkdir "$OUT/newdir""#,
        explained: true,
    },
    Attempt {
        name: "a symlink the command makes in the workspace",
        script: r#"ln -s "$OUT" link; echo escaped > link/victim.txt"#,
        explained: true,
    },
    Attempt {
        name: "a symlink planted in the workspace before the command",
        script: r#"echo escaped > planted/victim.txt"#,
        explained: true,
    },
    Attempt {
        name: "a dangling symlink planted in the workspace",
        script: r#"echo escaped > dangling"#,
        explained: false,
    },
    Attempt {
        name: "a hard link the command makes to the file",
        script: r#"ln "$VICTIM" hard && echo escaped > hard"#,
        explained: true,
    },
    Attempt {
        name: "/proc/self/root",
        script: r#"echo escaped > "/proc/self/root$VICTIM""#,
        explained: true,
    },
    Attempt {
        name: "/proc/self/cwd and ..",
        script: r#"echo escaped > /proc/self/cwd/../outside/victim.txt"#,
        explained: true,
    },
    Attempt {
        name: "cd out first",
        script: r#"cd "$OUT" && echo escaped > victim.txt"#,
        explained: false,
    },
    Attempt {
        name: "a subshell in the background, waited for",
        script: r#"(echo escaped > "$VICTIM") & wait $!"#,
        explained: true,
    },
];

#[test]
fn writes_outside_the_workspace_are_blocked_in_every_sandboxed_mode() {
    for (variant, support) in variants() {
        for mode in [Mode::ReadOnly, Mode::WorkspaceWrite] {
            let fx = Fixture::new();
            let policy = fx.policy(mode);
            for attempt in ATTEMPTS {
                let what = format!("{variant}, {mode}: {}", attempt.name);
                reset_workspace(&fx);
                let r = run(&fx, &policy, &support, attempt.script);
                r.assert_failed(&what);
                fx.assert_victim_intact(&what);
                let outside: Vec<_> = std::fs::read_dir(&fx.outside)
                    .unwrap()
                    .map(|e| e.unwrap().file_name())
                    .collect();
                assert_eq!(
                    outside,
                    ["victim.txt"],
                    "{what}: something was made outside"
                );
                if attempt.explained {
                    match r.prepared.explain(&r.output()) {
                        Some(refusal @ Refusal::Write { .. }) => {
                            let text = refusal.to_string();
                            let expected = match mode {
                                Mode::ReadOnly => {
                                    "blocked by the sandbox: write in a read-only session"
                                }
                                _ => "blocked by the sandbox: write outside the workspace",
                            };
                            assert!(text.starts_with(expected), "{what}: {text}");
                        }
                        other => panic!(
                            "{what}: not explained as a write: {other:?}\n{}",
                            r.output()
                        ),
                    }
                }
            }
        }
    }
}

#[test]
fn the_workspace_and_the_writable_roots_are_read_only_in_read_only_mode() {
    for (variant, support) in variants() {
        let fx = Fixture::new();
        let policy = fx.policy(Mode::ReadOnly);
        for script in [
            "echo x > inside.txt",
            r#"echo x > "$EXTRA/x.txt""#,
            "mkdir sub",
        ] {
            let r = run(&fx, &policy, &support, script);
            r.assert_failed(&format!("{variant}: {script}"));
            assert!(
                matches!(
                    r.prepared.explain(&r.output()),
                    Some(Refusal::Write {
                        mode: Mode::ReadOnly,
                        ..
                    })
                ),
                "{variant}: {script}: {:?}",
                r.prepared.explain(&r.output())
            );
        }
        assert_eq!(std::fs::read_dir(&fx.cwd).unwrap().count(), 0, "{variant}");
        assert_eq!(
            std::fs::read_dir(&fx.extra).unwrap().count(),
            0,
            "{variant}"
        );
    }
}

/// Empties the workspace and plants the links the attempts use.
fn reset_workspace(fx: &Fixture) {
    std::fs::remove_dir_all(&fx.cwd).unwrap();
    std::fs::create_dir(&fx.cwd).unwrap();
    symlink(&fx.outside, fx.cwd.join("planted")).unwrap();
    symlink(fx.outside.join("dangling-target"), fx.cwd.join("dangling")).unwrap();
}
