//! The `Host` check (DNS rebinding): on a loopback bind the gateway answers only to its
//! loopback names with its own port and to `gateway.allowed_hosts`; any other `Host` gets
//! 421 before routing, so a page on `evil.example` that resolves to 127.0.0.1 reaches no
//! route, not even the ones that need no credentials. On a remote bind the check applies
//! when `allowed_hosts` is set, and its absence is logged at start.

use crate::common::*;
use crate::harness::*;

fn get(path: &str, host: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n")
}

#[test]
fn a_rebound_name_gets_421_on_every_route_before_routing_and_counts_nothing() {
    let gw = Gw::new();
    let addr = gw.addr();
    let port = addr.rsplit(':').next().unwrap().to_owned();
    let evil = format!("evil.example:{port}");
    block(async {
        let requests = [
            get("/api/v1/health", &evil),
            get("/api/v1/openapi.json", &evil),
            get("/login", &evil),
            get("/", &evil),
            get("/assets/app.js", &evil),
            get("/no/such/route", &evil),
            format!(
                "POST /auth/exchange HTTP/1.1\r\nHost: {evil}\r\nContent-Type: application/json\r\nContent-Length: 13\r\nConnection: close\r\n\r\n{{\"code\":\"x\"}}"
            ),
            format!(
                "POST /hooks/deploy HTTP/1.1\r\nHost: {evil}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"
            ),
            format!(
                "OPTIONS /api/v1/sessions HTTP/1.1\r\nHost: {evil}\r\nOrigin: http://{evil}\r\nAccess-Control-Request-Method: POST\r\nConnection: close\r\n\r\n"
            ),
            format!(
                "GET /rpc HTTP/1.1\r\nHost: {evil}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: zeroclaw.v1\r\nOrigin: http://{evil}\r\n\r\n"
            ),
        ];
        for request in &requests {
            // Closed after the refusal (the upgrade request does not ask for that itself).
            let answer = raw(&addr, request).await;
            assert_eq!(status_of(&answer), 421, "{request}\n→ {answer}");
            assert!(answer.contains("gateway.allowed_hosts"), "{answer}");
        }
        // Wrong tokens from the rebound name never reach the failed-auth limiter: the same
        // address is not slowed down afterwards.
        for _ in 0..15 {
            let answer = raw(
                &addr,
                &format!(
                    "GET /api/v1/status HTTP/1.1\r\nHost: {evil}\r\nAuthorization: Bearer zc_wrong\r\nConnection: close\r\n\r\n"
                ),
            )
            .await;
            assert_eq!(status_of(&answer), 421, "{answer}");
        }
        let (status, _) = json_of(
            http()
                .get(gw.api("/status"))
                .bearer_auth("zc_wrong")
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(
            status, 401,
            "not slowed down by requests that were never routed"
        );
    });
    assert!(
        gw.env.daemon.log_text().contains("status=421"),
        "refusals are in the request log"
    );
}

#[test]
fn the_loopback_names_are_served_only_with_the_gateways_own_port() {
    let gw = Gw::new();
    let addr = gw.addr();
    let port: u16 = addr.rsplit(':').next().unwrap().parse().unwrap();
    let other = if port == 65535 { port - 1 } else { port + 1 };
    block(async {
        for host in [
            format!("127.0.0.1:{port}"),
            format!("localhost:{port}"),
            format!("LocalHost:{port}"),
            format!("[::1]:{port}"),
        ] {
            let answer = raw(&addr, &get("/api/v1/health", &host)).await;
            assert_eq!(status_of(&answer), 200, "{host}: {answer}");
        }
        for host in [
            format!("localhost:{other}"),
            format!("127.0.0.1:{other}"),
            "localhost".to_owned(),
            format!("127.0.0.2:{port}"),
            format!("localhost.evil.example:{port}"),
            format!("[::2]:{port}"),
        ] {
            let answer = raw(&addr, &get("/api/v1/health", &host)).await;
            assert_eq!(status_of(&answer), 421, "{host}: {answer}");
        }
        // An absolute request target names the host too, and wins over `Host`.
        let answer = raw(
            &addr,
            &format!(
                "GET http://evil.example:{port}/api/v1/health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
            ),
        )
        .await;
        assert_eq!(status_of(&answer), 421, "{answer}");
        // No `Host` at all (HTTP/1.1 requires one; HTTP/1.0 may omit it, but no browser
        // does, and there is nothing to check), two of them, or a malformed one: 400.
        for request in [
            "GET /api/v1/health HTTP/1.1\r\nConnection: close\r\n\r\n".to_owned(),
            "GET /api/v1/health HTTP/1.0\r\n\r\n".to_owned(),
            format!(
                "GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nHost: evil.example\r\nConnection: close\r\n\r\n"
            ),
            format!("GET /api/v1/health HTTP/1.1\r\nHost: a b:{port}\r\nConnection: close\r\n\r\n"),
            format!(
                "GET /api/v1/health HTTP/1.1\r\nHost: u@127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
            ),
        ] {
            let answer = raw(&addr, &request).await;
            assert_eq!(status_of(&answer), 400, "{request}\n→ {answer}");
        }
        // HTTP/1.0 with its Host is served.
        let answer = raw(
            &addr,
            &format!("GET /api/v1/health HTTP/1.0\r\nHost: localhost:{port}\r\n\r\n"),
        )
        .await;
        assert_eq!(status_of(&answer), 200, "{answer}");
    });
}

#[test]
fn allowed_hosts_adds_names_served_on_any_port() {
    let gw = Gw::with("allowed_hosts = [\"ZeroClaw.test\", \"192.168.7.7\"]", "");
    let addr = gw.addr();
    block(async {
        for host in [
            "zeroclaw.test",
            "zeroclaw.test:443",
            "zeroclaw.test.:8443",
            "ZEROCLAW.TEST",
            "192.168.7.7:80",
        ] {
            let answer = raw(&addr, &get("/api/v1/health", host)).await;
            assert_eq!(status_of(&answer), 200, "{host}: {answer}");
        }
        for host in ["other.test", "sub.zeroclaw.test", "zeroclaw.test.evil"] {
            let answer = raw(&addr, &get("/api/v1/health", host)).await;
            assert_eq!(status_of(&answer), 421, "{host}: {answer}");
        }
    });
}

#[test]
fn a_websocket_from_a_rebound_name_is_refused_and_from_the_own_name_is_served() {
    let gw = Gw::new();
    let token = gw.token("ws", "read");
    let port = gw.addr().rsplit(':').next().unwrap().to_owned();
    block(async {
        let refused = ws_with(
            &gw.ws_url(),
            &[
                ("authorization", &format!("Bearer {token}")),
                ("host", &format!("evil.example:{port}")),
            ],
        )
        .await;
        assert_eq!(refused.err().map(|(status, _)| status), Some(421));
        let mut served = ws(&gw.ws_url(), &token).await;
        initialize(&mut served, serde_json::json!({})).await;
    });
}

/// A daemon whose gateway listens on every address (0.0.0.0), plaintext, with `keys`
/// added; and the URL to reach it on loopback.
fn remote_bind(keys: &str) -> (Env, String) {
    let env = Env::new(
        "",
        &format!(
            "[gateway]\nlisten = \"0.0.0.0:0\"\nallow_remote = true\nallow_plaintext = true\n{keys}"
        ),
    );
    let status = env.daemon.client().call("status", serde_json::json!({}));
    let url = status["gateway"]["url"].as_str().unwrap();
    let port = url.rsplit(':').next().unwrap();
    let local = format!("127.0.0.1:{port}");
    (env, local)
}

#[test]
fn a_remote_bind_checks_hosts_only_when_allowed_hosts_is_set_and_says_so_at_start() {
    let (open, local) = remote_bind("");
    let warning = open.daemon.wait_for_log("gateway.allowed_hosts");
    assert!(
        warning.contains("WARN") && warning.contains("DNS rebinding"),
        "{warning}"
    );
    block(async {
        let answer = raw(&local, &get("/api/v1/health", "evil.example")).await;
        assert_eq!(status_of(&answer), 200, "unchecked: {answer}");
    });

    let (checked, local) = remote_bind("allowed_hosts = [\"box.test\"]");
    assert_eq!(checked.daemon.log_count("gateway.allowed_hosts"), 0);
    let port = local.rsplit(':').next().unwrap().to_owned();
    block(async {
        for (host, status) in [
            ("evil.example".to_owned(), 421),
            (format!("box.test:{port}"), 200),
            ("box.test".to_owned(), 200),
            (format!("localhost:{port}"), 200),
        ] {
            let answer = raw(&local, &get("/api/v1/health", &host)).await;
            assert_eq!(status_of(&answer), status, "{host}: {answer}");
        }
    });
}
