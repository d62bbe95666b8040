//! Abuse resistance: a slow sender is cut while others are served, failed authentication
//! is slowed down, and a taken port leaves the socket serving (the connection cap is in
//! `connections.rs`).

use crate::common::*;
use crate::harness::*;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[test]
fn a_client_that_never_finishes_its_headers_is_cut_while_others_are_served() {
    let gw = Gw::with("header_timeout_secs = 1", "");
    let addr = gw.url.trim_start_matches("http://").to_owned();
    block(async {
        let mut slow = tokio::net::TcpStream::connect(&addr).await.unwrap();
        slow.write_all(b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\n")
            .await
            .unwrap();
        // Served meanwhile.
        let (status, _) = json_of(http().get(gw.api("/health")).send().await.unwrap()).await;
        assert_eq!(status, 200);
        // The slow one is closed by the server (after its header timeout), with at most an
        // error status, never a 200.
        let mut answer = Vec::new();
        let _ = slow.read_to_end(&mut answer).await;
        let answer = String::from_utf8_lossy(&answer);
        assert!(!answer.contains("200 OK"), "{answer}");
    });
}

#[test]
fn ten_failed_authentications_get_429_with_retry_after_but_a_valid_token_is_served() {
    let gw = Gw::new();
    let token = gw.token("ops", "read");
    block(async {
        let client = http();
        let mut statuses = Vec::new();
        for _ in 0..11 {
            let response = client
                .get(gw.api("/status"))
                .bearer_auth("zc_wrong")
                .send()
                .await
                .unwrap();
            statuses.push(response.status().as_u16());
            if response.status() == 429 {
                let retry: u64 = response.headers()["retry-after"]
                    .to_str()
                    .unwrap()
                    .parse()
                    .unwrap();
                assert!(retry >= 1);
                let (_, body) = json_of(response).await;
                assert_eq!(body["error"]["code"], -32001);
                assert!(body["error"]["data"]["retryAfterSecs"].is_u64());
            }
        }
        assert_eq!(&statuses[..9], &[401; 9]);
        assert_eq!(&statuses[9..], &[429, 429]);
        let (status, _) = json_of(
            client
                .get(gw.api("/status"))
                .bearer_auth(&token)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 200);
    });
}

#[test]
fn a_taken_port_leaves_the_socket_serving_and_status_says_why() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let dir = TestDir::new();
    dir.write_config(&format!("[gateway]\nlisten = \"127.0.0.1:{port}\"\n"));
    let daemon = dir.start(&[]);
    let warning = daemon.wait_for_log("the gateway is not serving");
    assert!(warning.contains("gateway.listen"), "{warning}");
    let status = daemon.client().call("status", json!({}));
    let error = status["gateway"]["error"].as_str().unwrap();
    assert!(error.contains(&port.to_string()), "{status}");
    let out = dir.command(&["status"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("gateway    down:"));
    drop(taken);

    // With --no-gateway: none at all.
    let dir = TestDir::new();
    let daemon = dir.start(&["--no-gateway"]);
    assert_eq!(
        daemon.client().call("status", json!({}))["gateway"],
        json!(null)
    );
}
