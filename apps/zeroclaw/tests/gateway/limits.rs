//! Abuse resistance: a slow sender is cut while others are served, wrong secrets are slowed
//! down (and only they: requests without one count nothing, valid ones are always served),
//! and a taken port leaves the socket serving (the connection cap is in `connections.rs`).

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
fn requests_without_a_secret_count_nothing_and_others_failures_never_refuse_a_valid_token_or_code()
{
    let gw = Gw::new();
    let token = gw.token("ops", "read");
    let session = block(gw.login());
    let code = gw.code();
    block(async {
        let client = http();
        // What any web page can make a browser send (`<img src=…>`): no credential, or the
        // dashboard's cookie without its proof. Each is a plain 401, and none counts.
        for i in 0..300 {
            let mut request = client.get(gw.api("/status"));
            if i % 2 == 1 {
                request = request.header("cookie", &session.cookie);
            }
            let (status, body) = json_of(request.send().await.unwrap()).await;
            assert_eq!(
                (status, body["error"]["code"].clone()),
                (401, json!(-32020)),
                "request {i}"
            );
        }
        // Dozens of wrong secrets from the same address: slowed from the tenth on.
        let mut statuses = Vec::new();
        for _ in 0..30 {
            let response = client
                .get(gw.api("/status"))
                .bearer_auth("zc_wrong")
                .send()
                .await
                .unwrap();
            statuses.push(response.status().as_u16());
        }
        assert_eq!(&statuses[..9], &[401; 9]);
        assert!(statuses[9..].iter().all(|s| *s == 429), "{statuses:?}");
        let (status, _) = json_of(gw.exchange("not-a-code", &[]).await).await;
        assert_eq!(status, 429, "a wrong code is slowed too");
        // A valid token, dashboard session and login code from that address: served.
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
        let served = client
            .get(gw.api("/status"))
            .header("cookie", &session.cookie)
            .header("zeroclaw-proof", &session.proof)
            .send()
            .await
            .unwrap();
        assert_eq!(served.status(), 200);
        let login = gw.exchange(&code, &[]).await;
        assert_eq!(login.status(), 204, "a valid code signs in");
        let fresh = DashSession::of(&login);
        let served = client
            .get(gw.api("/status"))
            .header("cookie", &fresh.cookie)
            .header("zeroclaw-proof", &fresh.proof)
            .send()
            .await
            .unwrap();
        assert_eq!(served.status(), 200);
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
