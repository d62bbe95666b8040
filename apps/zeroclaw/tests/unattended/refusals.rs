//! What a delivery is refused with before it is checked: 404 for an unknown hook, 413 for a
//! body over the cap (on its `Content-Length`, before any of it is read), 503 for a hook
//! without its key (naming no variable to the caller); each with the code docs/gateway.md
//! gives its status.

use crate::harness::*;
use serde_json::json;

fn with_a_dark_hook(work: &str) -> String {
    format!(
        "{}\n[[webhooks]]\nname = \"dark\"\nsecret_env = \"UNSET_HOOK_SECRET_VAR\"\ncwd = \"{work}\"\nprompt = \"p\"\n",
        hook(work, "max_body_bytes = 100")
    )
}

#[test]
fn a_content_length_over_the_cap_is_answered_413_before_any_of_the_body_is_sent() {
    let hooks = Hooks::start(with_a_dark_hook, &[]);
    let host = hooks.url.trim_start_matches("http://");
    // The head only: a server that waited for the body would answer 408 after
    // `gateway.body_timeout_secs`, never 413.
    let answer = hooks.raw(&format!(
        "POST /hooks/ci HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\nX-Hub-Signature-256: sha256=00\r\n\r\n"
    ));
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(
        answer.contains("\"code\":-32600")
            && answer.contains("\"data\":{\"limit\":100}")
            && answer.contains(
                "Content-Length 1000000000 is larger than this webhook's max_body_bytes (100 bytes)"
            ),
        "{answer}"
    );
    assert!(hooks.runs(json!({})).is_empty());
}

#[test]
fn an_unknown_hook_is_404_a_large_body_413_and_a_hook_without_its_key_503_with_the_documented_codes()
 {
    let hooks = Hooks::start(with_a_dark_hook, &[]);
    hooks
        .daemon
        .wait_for_log("webhook inactive: its secret_env is not set");
    // A body over the cap, sent whole.
    let big = vec![b'x'; 101];
    let signature = sign(SECRET, &big);
    let (status, answer, _) = hooks.post("ci", &big, &[("x-hub-signature-256", &signature)]);
    assert_eq!(status, 413, "{answer}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert_eq!(answer["error"]["data"], json!({"limit": 100}), "{answer}");
    // An unknown hook: the name in the path is an invalid parameter of a known route.
    let (status, answer, _) = hooks.post("nope", b"{}", &[]);
    assert_eq!(status, 404, "{answer}");
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    // Inactive: the caller learns that, and that the log says more; the log names the
    // variable.
    let (status, answer, retry) = hooks.post("dark", b"{}", &[]);
    assert_eq!(status, 503, "{answer}");
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    assert!(retry.is_some());
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("webhook dark is inactive") && !message.contains("UNSET_HOOK_SECRET_VAR"),
        "{message}"
    );
    let line = hooks.daemon.wait_for_log("webhook refused: inactive");
    assert!(
        line.contains("webhook=dark") && line.contains("secret_env=UNSET_HOOK_SECRET_VAR"),
        "{line}"
    );
    assert!(hooks.runs(json!({})).is_empty());
}
