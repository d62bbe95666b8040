//! The CLI over the gateway: `zeroclaw token ...`, `zeroclaw dashboard`, and
//! `zeroclaw --url ... status|sessions|prompt` against a daemon as if it were remote.

use crate::harness::*;
use zeroclaw_testkit::openai;

#[test]
fn tokens_are_minted_listed_and_revoked_from_the_cli_and_used_with_url() {
    let gw = Gw::new();
    let dir = &gw.env.dir;
    let created = dir
        .command(&[
            "token",
            "create",
            "laptop",
            "--scope",
            "operate",
            "--expires",
            "30d",
        ])
        .output()
        .unwrap();
    assert!(created.status.success(), "{created:?}");
    let stdout = String::from_utf8(created.stdout).unwrap();
    let token = stdout.lines().next().unwrap().to_owned();
    assert!(token.starts_with("zc_") && token.len() == 46, "{stdout}");
    assert!(String::from_utf8_lossy(&created.stderr).contains("expires"));

    let listed = dir.command(&["token", "list"]).output().unwrap();
    let listed = String::from_utf8(listed.stdout).unwrap();
    assert!(
        listed.contains("laptop") && listed.contains("operate"),
        "{listed}"
    );
    assert!(!listed.contains(&token), "never the secret");

    let remote = |args: &[&str]| {
        let mut all = vec!["--url", gw.url.as_str(), "--token-env", "GW_TOKEN"];
        all.extend_from_slice(args);
        dir.command(&all)
            .env("GW_TOKEN", &token)
            // A local endpoint nobody serves: the CLI must not need it with --url.
            .env("ZEROCLAW_SOCKET", NO_ENDPOINT)
            .output()
            .unwrap()
    };
    let status = remote(&["status"]);
    assert!(status.status.success(), "{status:?}");
    assert!(String::from_utf8_lossy(&status.stdout).contains(&gw.url));

    gw.env.fake.push(openai::text(&["remote ", "answer"]));
    let prompt = remote(&["prompt", "--approve", "none", "hello"]);
    assert!(prompt.status.success(), "{prompt:?}");
    assert_eq!(
        String::from_utf8_lossy(&prompt.stdout).trim(),
        "remote answer"
    );
    let sessions = remote(&["sessions", "--json"]);
    assert!(String::from_utf8_lossy(&sessions.stdout).contains("sessionId"));

    // Tokens are never managed over --url.
    let refused = remote(&["token", "list"]);
    assert!(!refused.status.success());

    let revoked = dir
        .command(&["token", "revoke", "laptop"])
        .output()
        .unwrap();
    assert!(revoked.status.success());
    let after = remote(&["status"]);
    assert!(!after.status.success());
    assert!(
        String::from_utf8_lossy(&after.stderr).contains("401"),
        "{after:?}"
    );

    let link = dir.command(&["dashboard"]).output().unwrap();
    let link = String::from_utf8(link.stdout).unwrap();
    assert!(
        link.starts_with(&format!("{}/login#code=", gw.url)),
        "{link}"
    );
}

/// A well-formed local endpoint that no daemon serves.
#[cfg(unix)]
const NO_ENDPOINT: &str = "/nonexistent/socket";
#[cfg(windows)]
const NO_ENDPOINT: &str = r"\\.\pipe\zeroclaw-test-nobody-serves-this";
