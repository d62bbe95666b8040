//! What a sandboxed command may still do: read the system, run the usual tools, and write
//! where its mode allows.

use zeroclaw_sandbox::Mode;

use crate::common::{Fixture, have, run, variants};

#[test]
fn workspace_write_lets_a_command_write_its_workspace_its_roots_and_its_temp_dir() {
    for (variant, support) in variants() {
        let fx = Fixture::new();
        let policy = fx.policy(Mode::WorkspaceWrite);
        let r = run(
            &fx,
            &policy,
            &support,
            r#"set -e
            echo one > file.txt && echo two >> file.txt && : > empty.txt
            mkdir -p a/b && mv file.txt a/b/ && cp a/b/file.txt copy.txt
            ln -s copy.txt link && echo three >> link && ln copy.txt hard
            truncate -s 2 hard && rm -r a && rm empty.txt
            echo root > "$EXTRA/x.txt" && mv "$EXTRA/x.txt" ./from-extra.txt
            echo temp > "$TMPDIR/t" && t=$(mktemp) && echo more > "$t"
            mkfifo fifo && rm fifo
            echo quiet > /dev/null && head -c 4 /dev/urandom | wc -c
            cat copy.txt"#,
        );
        r.assert_ok(variant);
        assert!(r.stdout.ends_with("4\non"), "{variant}: {}", r.stdout);
        assert_eq!(
            std::fs::read_to_string(fx.cwd.join("from-extra.txt")).unwrap(),
            "root\n"
        );
    }
}

#[test]
fn read_only_lets_a_command_write_only_its_temp_dir() {
    for (variant, support) in variants() {
        let fx = Fixture::new();
        let r = run(
            &fx,
            &fx.policy(Mode::ReadOnly),
            &support,
            r#"set -e; echo temp > "$TMPDIR/t"; cat "$TMPDIR/t"; t=$(mktemp -d); echo x > "$t/y"; echo q > /dev/null"#,
        );
        r.assert_ok(variant);
        assert_eq!(r.stdout, "temp\n", "{variant}");
    }
}

#[test]
fn a_sandboxed_command_reads_the_system_and_runs_the_usual_tools() {
    for (variant, support) in variants() {
        for mode in [Mode::ReadOnly, Mode::WorkspaceWrite] {
            let fx = Fixture::new();
            std::fs::write(fx.cwd.join("src.txt"), "hello sandbox\n").unwrap();
            let what = format!("{variant}, {mode}");
            let r = run(
                &fx,
                &fx.policy(mode),
                &support,
                r#"set -e
                ls / >/dev/null; ls -la . >/dev/null; cat /etc/passwd >/dev/null
                test -r /etc/hostname && cat /etc/hostname >/dev/null || true
                grep -c sandbox src.txt; wc -l < src.txt; sort src.txt | uniq | head -1
                cat "$OUT/victim.txt"; ls "$HOMEDIR" >/dev/null
                find . -name '*.txt' | sed 's/^..//'; env | grep -c '^PATH='
                pwd"#,
            );
            r.assert_ok(&what);
            assert_eq!(
                r.stdout,
                format!(
                    "1\n1\nhello sandbox\noriginal\nsrc.txt\n1\n{}\n",
                    fx.cwd.display()
                ),
                "{what}"
            );
            for tool in [
                "git --version",
                "python3 -c 'print(1)'",
                "perl -e 1",
                "tar --version",
            ] {
                let program = tool.split(' ').next().unwrap();
                if !have(program) {
                    eprintln!("SKIPPED {tool}: not installed");
                    continue;
                }
                let r = run(&fx, &fx.policy(mode), &support, tool);
                r.assert_ok(&format!("{what}: {tool}"));
            }
        }
    }
}

#[test]
fn the_temp_dir_is_private_to_the_command_and_removed_with_it() {
    let fx = Fixture::new();
    let support = crate::common::support();
    let policy = fx.policy(Mode::ReadOnly);
    let a = policy.prepare(&support).unwrap();
    let b = policy.prepare(&support).unwrap();
    let (ta, tb) = (
        a.temp_dir().unwrap().to_path_buf(),
        b.temp_dir().unwrap().to_path_buf(),
    );
    assert_ne!(ta, tb);
    assert!(ta.is_dir());
    let r = crate::common::run_prepared(&fx, a, r#"echo "$TMPDIR" "$TMP" "$TEMP""#);
    assert_eq!(r.stdout.trim(), format!("{0} {0} {0}", ta.display()));
    drop(r);
    assert!(!ta.exists(), "the temp dir outlived its Prepared");
    assert!(tb.exists());
}
