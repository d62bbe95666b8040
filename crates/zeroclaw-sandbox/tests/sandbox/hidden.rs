//! The daemon's own files: its data dir (the database), its config dir and its socket are
//! neither readable, nor writable, nor reachable from a sandboxed command, by any path.

use std::os::unix::fs::symlink;

use zeroclaw_sandbox::{Mode, Refusal};

use crate::common::{
    CONFIG_SECRET, DB_SECRET, Fixture, have, helper, helper_result, run, variants,
};

const READS: &[(&str, &str)] = &[
    ("the database", r#"cat "$DATA/zeroclaw.db""#),
    ("the config", r#"cat "$CONFIG/config.toml""#),
    (
        "the database through /proc/self/root",
        r#"cat "/proc/self/root$DATA/zeroclaw.db""#,
    ),
    (
        "the database through a planted symlink",
        "cat planted/zeroclaw.db",
    ),
    (
        "the database copied into the workspace",
        r#"cp "$DATA/zeroclaw.db" copy && cat copy"#,
    ),
    (
        "the config through a path with ..",
        r#"cat "$DATA/../config.toml""#,
    ),
];

#[test]
fn the_daemons_database_and_config_cannot_be_read() {
    for (variant, support) in variants() {
        for mode in [Mode::ReadOnly, Mode::WorkspaceWrite] {
            let fx = Fixture::new();
            symlink(&fx.data_dir, fx.cwd.join("planted")).unwrap();
            let policy = fx.policy(mode);
            for (name, script) in READS {
                let what = format!("{variant}, {mode}: {name}");
                let r = run(&fx, &policy, &support, script);
                r.assert_failed(&what);
                assert_no_secret(&r.output(), &what);
                assert!(
                    matches!(
                        r.prepared.explain(&r.output()),
                        Some(Refusal::Hidden { .. })
                    ),
                    "{what}: not explained as hidden: {:?}\n{}",
                    r.prepared.explain(&r.output()),
                    r.output()
                );
            }
        }
    }
}

#[test]
fn a_search_of_the_whole_tree_finds_no_secret() {
    for (variant, support) in variants() {
        let fx = Fixture::new();
        let policy = fx.policy(Mode::WorkspaceWrite);
        // Every readable file under the fixture, the daemon's dirs included, printed whole.
        let r = run(
            &fx,
            &policy,
            &support,
            r#"find "$ROOT" -type f -exec cat {} + 2>&1; grep -r secret "$ROOT" 2>&1; true"#,
        );
        assert_no_secret(&r.output(), variant);
        assert!(
            r.output().contains(super::common::ORIGINAL.trim()),
            "{variant}: the search read nothing"
        );
    }
}

#[test]
fn the_hidden_directories_look_empty_inside_a_user_namespace() {
    let Some((_, support)) = variants().into_iter().find(|(v, _)| *v == "userns") else {
        return;
    };
    let fx = Fixture::new();
    let r = run(
        &fx,
        &fx.policy(Mode::WorkspaceWrite),
        &support,
        r#"ls -a "$DATA" "$CONFIG""#,
    );
    assert!(!r.output().contains("zeroclaw.db"), "{}", r.output());
    assert!(!r.output().contains("config.toml"), "{}", r.output());
}

#[test]
fn the_daemons_config_cannot_be_changed_even_from_a_workspace_that_holds_it() {
    for (variant, support) in variants() {
        let fx = Fixture::new();
        // The session runs in the home directory that holds the config dir.
        let mut policy = fx.policy(Mode::WorkspaceWrite);
        policy.cwd = fx.home.clone();
        for script in [
            r#"echo 'mode = "full"' > "$CONFIG/config.toml""#,
            r#"echo 'mode = "full"' >> "$CONFIG/config.toml""#,
            r#"echo x > "$CONFIG/new.toml""#,
            r#"rm "$DATA/zeroclaw.db""#,
            r#"mv "$CONFIG" "$HOMEDIR/moved""#,
            r#"rm -rf "$CONFIG""#,
            r#"echo x > .zeroclaw/data/zeroclaw.db"#,
        ] {
            let what = format!("{variant}: {script}");
            let r = run(&fx, &policy, &support, script);
            r.assert_failed(&what);
            assert_eq!(
                std::fs::read_to_string(fx.config_dir.join("config.toml")).unwrap(),
                format!("key = \"{CONFIG_SECRET}\"\n"),
                "{what}"
            );
            assert_eq!(
                std::fs::read_to_string(fx.data_dir.join("zeroclaw.db")).unwrap(),
                DB_SECRET,
                "{what}"
            );
            assert!(!fx.config_dir.join("new.toml").exists(), "{what}");
            assert!(
                matches!(
                    r.prepared.explain(&r.output()),
                    Some(Refusal::Hidden { .. })
                ),
                "{what}: {:?}\n{}",
                r.prepared.explain(&r.output()),
                r.output()
            );
        }
        // The rest of the home directory stays a workspace: an existing file can be changed.
        let r = run(
            &fx,
            &policy,
            &support,
            "echo changed > notes.txt && cat notes.txt",
        );
        r.assert_ok(variant);
        // A new entry beside the hidden dir: with a user namespace; not in the fallback
        // (a documented limit: Landlock cannot grant "create here" without "create beneath").
        let r = run(&fx, &policy, &support, "echo new > new.txt");
        if variant == "userns" {
            r.assert_ok(variant);
        } else {
            r.assert_failed(variant);
        }
    }
}

#[test]
fn the_cover_over_a_hidden_dir_cannot_be_unmounted() {
    for (variant, support) in variants() {
        let fx = Fixture::new();
        let policy = fx.policy(Mode::WorkspaceWrite);
        let r = run(
            &fx,
            &policy,
            &support,
            r#"umount "$DATA"; umount -l "$CONFIG"; cat "$DATA/zeroclaw.db""#,
        );
        r.assert_failed(variant);
        assert_no_secret(&r.output(), variant);
        if have("unshare") {
            // In a nested user and mount namespace of its own, with every capability there.
            let r = run(
                &fx,
                &policy,
                &support,
                r#"unshare -Urm sh -c 'umount "$DATA"; umount -l "$CONFIG"; cat "$DATA/zeroclaw.db"; mount --bind "$OUT" "$CONFIG"'"#,
            );
            r.assert_failed(variant);
            assert_no_secret(&r.output(), variant);
        } else {
            eprintln!("SKIPPED the nested-namespace case: no unshare(1)");
        }
    }
}

#[test]
fn the_daemons_socket_cannot_be_reached_wherever_it_lives() {
    for (variant, support) in variants() {
        for mode in [Mode::ReadOnly, Mode::WorkspaceWrite] {
            let fx = Fixture::new();
            let policy = fx.policy(mode);
            for (name, path) in [
                ("the socket outside the data dir", &fx.socket),
                ("the socket in the data dir", &fx.data_socket),
            ] {
                let what = format!("{variant}, {mode}: {name}");
                let r = run(
                    &fx,
                    &policy,
                    &support,
                    &helper(&format!("connect-unix {}", path.display())),
                );
                assert!(
                    helper_result(&r.output()).is_err(),
                    "{what}: connected\n{}",
                    r.output()
                );
                fx.assert_no_connection(&what);
            }
            // The network setting makes no difference.
            let r = run(
                &fx,
                &policy.clone().network(true),
                &support,
                &helper(&format!("connect-unix {}", fx.socket.display())),
            );
            assert!(
                helper_result(&r.output()).is_err(),
                "{variant}, {mode}, network on: connected"
            );
            fx.assert_no_connection(&format!("{variant}, {mode}, network on"));
        }
    }
}

#[test]
fn an_abstract_unix_socket_outside_the_sandbox_cannot_be_reached() {
    use std::os::linux::net::SocketAddrExt;
    for (index, (variant, support)) in variants().into_iter().enumerate() {
        let fx = Fixture::new();
        // A name of its own per variant: a process another test forks may still hold the
        // previous listener (between its fork and its exec), keeping that name taken.
        let name = format!("zeroclaw-sandbox-test-{}-{index}", std::process::id());
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(&name).unwrap();
        let listener = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
        listener.set_nonblocking(true).unwrap();
        for network in [false, true] {
            let policy = fx.policy(Mode::WorkspaceWrite).network(network);
            let r = run(
                &fx,
                &policy,
                &support,
                &helper(&format!("connect-abstract {name}")),
            );
            assert!(
                helper_result(&r.output()).is_err(),
                "{variant}, network {network}: connected"
            );
        }
        assert!(
            listener.accept().is_err(),
            "{variant}: a connection arrived"
        );
        // Outside the sandbox the same connection works.
        let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
        cmd.args(["--ignored", "--exact", "act::helper", "--nocapture"])
            .env("ZC_SANDBOX_ACT", format!("connect-abstract {name}"));
        let out = cmd.output().unwrap();
        assert_eq!(helper_result(&String::from_utf8_lossy(&out.stdout)), Ok(()));
    }
}

#[test]
fn nested_hidden_paths_in_any_order_are_all_hidden() {
    for (variant, support) in variants() {
        let fx = Fixture::new();
        // The config dir before the data dir inside it, the data dir twice.
        let policy = zeroclaw_sandbox::Policy::new(Mode::WorkspaceWrite, &fx.cwd)
            .hide(&fx.config_dir)
            .hide(&fx.data_dir)
            .hide(&fx.data_dir)
            .hide(&fx.socket);
        let r = run(
            &fx,
            &policy,
            &support,
            r#"cat "$DATA/zeroclaw.db" "$CONFIG/config.toml""#,
        );
        r.assert_failed(variant);
        assert_no_secret(&r.output(), variant);
    }
}

#[test]
fn a_tmux_style_service_socket_is_listed_and_once_hidden_cannot_be_reached() {
    let fx = Fixture::new();
    // A tmux server's socket dir and an ssh agent, as the environment names them.
    let tmux_dir = fx.root.join(format!("tmux-{}", unsafe { libc::geteuid() }));
    std::fs::create_dir(&tmux_dir).unwrap();
    let tmux = std::os::unix::net::UnixListener::bind(tmux_dir.join("default")).unwrap();
    tmux.set_nonblocking(true).unwrap();
    let agent_path = fx.root.join("agent.sock");
    let agent = std::os::unix::net::UnixListener::bind(&agent_path).unwrap();
    agent.set_nonblocking(true).unwrap();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "act::helper", "--nocapture"])
        .env("ZC_SANDBOX_ACT", "service-sockets")
        .env("TMUX_TMPDIR", &fx.root)
        .env("SSH_AUTH_SOCK", &agent_path)
        .env("XDG_RUNTIME_DIR", fx.root.join("no-runtime-dir"))
        .output()
        .unwrap();
    let listed: Vec<std::path::PathBuf> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once("SERVICE ").map(|(_, p)| p.into()))
        .collect();
    assert!(listed.contains(&tmux_dir), "{listed:?}");
    assert!(listed.contains(&agent_path), "{listed:?}");
    assert!(
        !listed.contains(&fx.root.join("no-runtime-dir")),
        "listed a missing path"
    );

    for (variant, support) in variants() {
        let mut policy = fx.policy(Mode::WorkspaceWrite).network(true);
        policy.hidden.extend(listed.iter().cloned());
        for target in [tmux_dir.join("default"), agent_path.clone()] {
            let r = run(
                &fx,
                &policy,
                &support,
                &helper(&format!("connect-unix {}", target.display())),
            );
            assert!(
                helper_result(&r.output()).is_err(),
                "{variant}: reached {}",
                target.display()
            );
        }
        assert!(
            tmux.accept().is_err() && agent.accept().is_err(),
            "{variant}"
        );
    }
}

#[test]
fn a_unix_socket_of_the_workspace_still_works_with_a_user_namespace() {
    let Some((_, support)) = variants().into_iter().find(|(v, _)| *v == "userns") else {
        return;
    };
    let fx = Fixture::new();
    let listener = std::os::unix::net::UnixListener::bind(fx.cwd.join("app.sock")).unwrap();
    listener.set_nonblocking(true).unwrap();
    let r = run(
        &fx,
        &fx.policy(Mode::WorkspaceWrite),
        &support,
        &helper(&format!(
            "connect-unix {}",
            fx.cwd.join("app.sock").display()
        )),
    );
    assert_eq!(helper_result(&r.output()), Ok(()), "{}", r.output());
    assert!(listener.accept().is_ok());
}

fn assert_no_secret(output: &str, what: &str) {
    assert!(
        !output.contains(DB_SECRET) && !output.contains(CONFIG_SECRET),
        "{what}: a secret leaked:\n{output}"
    );
}

#[test]
fn a_file_descriptor_the_parent_leaked_does_not_reach_the_command() {
    for (variant, support) in variants() {
        let fx = Fixture::new();
        // The daemon's database, opened by a careless library without O_CLOEXEC.
        let path = std::ffi::CString::new(
            fx.data_dir
                .join("zeroclaw.db")
                .into_os_string()
                .into_encoded_bytes(),
        )
        .unwrap();
        // SAFETY: a NUL-terminated path; closed below.
        let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY) };
        assert!(fd > 2);
        let r = run(
            &fx,
            &fx.policy(Mode::WorkspaceWrite),
            &support,
            &format!("cat <&{fd}"),
        );
        // SAFETY: the fd opened above.
        unsafe { libc::close(fd) };
        r.assert_failed(variant);
        assert_no_secret(&r.output(), variant);
    }
}
