//! A lost connection is shown and retried with backoff; once back, the open session
//! catches up from its history without showing anything twice.

use crate::browser::{Browser, Test, count, element, texts, until_text};
use crate::page::{Dash, gateway_url, open, prompt};
use serde_json::json;
use zeroclaw_testkit::openai;

pub const TESTS: &[Test] = &[(
    "reconnect::a_lost_connection_is_retried_and_the_session_catches_up_without_duplicates",
    a_lost_connection_is_retried_and_the_session_catches_up_without_duplicates,
)];

fn a_lost_connection_is_retried_and_the_session_catches_up_without_duplicates(b: &Browser) {
    // The daemon restarts on the same address, so the gateway needs a fixed port: a free
    // one, picked here.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut dash = Dash::with(&format!("[gateway]\nlisten = \"127.0.0.1:{port}\""));
    let id = dash.session("reconnect");
    dash.env.fake.push(openai::text(&["first ", "answer"]));
    let c = &b.client;
    b.block(async {
        dash.sign_in(c).await;
        open(c, &id).await;
        prompt(c, "first prompt").await;
        until_text(c, ".turn-end", "done").await;

        // The daemon goes away: the page says so and retries.
        dash.env.daemon.stop();
        until_text(
            c,
            "#conn[data-state='down']",
            "connection lost; retrying in",
        )
        .await;
        element(c, "#retry:not([hidden])").await;

        // Meanwhile another client has a turn in the session (the daemon is back without
        // its gateway, so the page cannot see it live).
        dash.env.daemon = dash.env.dir.start(&["--no-gateway"]);
        dash.env.fake.push(openai::text(&["second ", "answer"]));
        let mut other = dash.env.daemon.client();
        other.call("session/load", json!({"sessionId": id}));
        let turn = other.prompt(&id, "second prompt", crate::common::no_questions);
        assert_eq!(turn.result()["stopReason"], "end_turn");
        drop(other);
        dash.env.daemon.stop();

        // The gateway is back on the same address: the page reconnects by itself and
        // rebuilds the session from its history.
        dash.env.daemon = dash.env.dir.start(&[]);
        assert_eq!(gateway_url(&dash.env.daemon), dash.url);
        element(c, "#conn[data-state='up']").await;
        until_text(c, ".msg.assistant", "second answer").await;
        crate::page::loaded(c, &id).await;
        assert_eq!(
            texts(c, ".msg.user").await,
            ["first prompt", "second prompt"]
        );
        assert_eq!(
            texts(c, ".msg.assistant").await,
            ["first answer", "second answer"]
        );
        assert_eq!(count(c, "#transcript .note.error").await, 0);
    });
}
