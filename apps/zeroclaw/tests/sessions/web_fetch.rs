//! `web_fetch` through a real turn, against a real HTTP server on 127.0.0.1: asked about
//! like bash, the page comes back as Markdown; with the session's network off it is
//! refused and the server is never reached.

use crate::common::*;
use serde_json::json;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use zeroclaw_testkit::openai;

const PAGE: &str = "<!doctype html><html><head><title>T</title><style>p{}</style></head>\
    <body><h1>Release notes</h1><p>Version <b>2.0</b> is <a href=\"/dl\">out</a>.</p>\
    <ul><li>faster</li><li>smaller</li></ul><script>alert(1)</script></body></html>";

/// Serves `PAGE` to each connection until the test ends; sends each request's first line.
fn serve() -> (u16, mpsc::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            let head = String::from_utf8_lossy(&head).into_owned();
            let _ = tx.send(head.lines().next().unwrap_or_default().to_owned());
            let response = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{PAGE}",
                PAGE.len()
            );
            let _ = stream.write_all(response.as_bytes());
        }
    });
    (port, rx)
}

#[test]
fn web_fetch_asks_then_returns_the_page_as_markdown() {
    let env = Env::new("", "[sandbox]\nnetwork = true");
    let (port, requests) = serve();
    let url = format!("http://127.0.0.1:{port}/notes");
    env.fake.push(tool_call(
        "call_1",
        "web_fetch",
        json!({ "url": url, "prompt": "what is new?" }),
        1,
    ));
    env.fake.push(openai::text(&["read it"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "read the notes", decide_all("allow_once"));
    assert_eq!(turn.result()["stopReason"], "end_turn");
    assert_eq!(turn.one("approval_request")["name"], "web_fetch");
    assert_eq!(requests.recv().unwrap(), "GET /notes HTTP/1.1");
    let result = turn.one("tool_result");
    assert_eq!(result["isError"], false, "{result}");
    let text = output(result);
    assert!(
        text.starts_with(&format!("{url} (200 OK)\nLooking for: what is new?\n")),
        "{text}"
    );
    assert!(text.contains("# Release notes"), "{text}");
    assert!(text.contains("Version **2.0** is [out](/dl)."), "{text}");
    assert!(
        text.contains("*   faster") || text.contains("- faster"),
        "{text}"
    );
    assert!(
        !text.contains("alert(1)") && !text.contains("p{}"),
        "{text}"
    );
}

#[test]
fn web_fetch_is_refused_with_the_network_off_and_reaches_nothing() {
    let env = Env::new("", "[approvals]\nweb_fetch = \"allow\"");
    let (port, requests) = serve();
    env.fake.push(tool_call(
        "call_1",
        "web_fetch",
        json!({ "url": format!("http://127.0.0.1:{port}/") }),
        1,
    ));
    env.fake.push(openai::text(&["no network"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "fetch", no_questions);
    let result = turn.one("tool_result");
    assert_eq!(result["isError"], true);
    assert!(
        output(result).starts_with("web_fetch: blocked by the sandbox: the network is off"),
        "{}",
        output(result)
    );
    assert!(requests.try_recv().is_err(), "the server was reached");
}
