//! Dashboard login: a one-time code for a dashboard session (an `HttpOnly;
//! SameSite=Strict` cookie and a proof for the page), which acts only with both and, for
//! state changes and WebSockets, only from our origin.

use crate::harness::*;
use serde_json::json;

#[test]
fn a_login_code_works_once_for_a_dashboard_session_that_acts_with_its_cookie_and_proof_from_our_origin()
 {
    let gw = Gw::new();
    let port = gw.url.rsplit(':').next().unwrap().to_owned();
    let code = gw.code();
    block(async {
        let client = http();
        let page = client
            .get(format!("{}/login", gw.url))
            .send()
            .await
            .unwrap();
        assert_eq!(page.status(), 200);
        assert!(page.text().await.unwrap().contains("/assets/login.js"));
        let script = client
            .get(format!("{}/assets/login.js", gw.url))
            .send()
            .await
            .unwrap();
        let script = script.text().await.unwrap();
        assert!(script.contains("/auth/exchange") && script.contains("sessionStorage"));

        let first = gw.exchange(&code, &[]).await;
        assert_eq!(first.status(), 204);
        assert_eq!(first.headers()["cache-control"], "no-store");
        let session = DashSession::of(&first);
        let cookie = &session.set_cookie;
        assert!(
            cookie.starts_with(&format!("zeroclaw_session_{port}=zcd_")),
            "{cookie}"
        );
        for attribute in ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=604800"] {
            assert!(cookie.contains(attribute), "{cookie}");
        }
        assert!(!cookie.contains("Secure"), "not under plain HTTP: {cookie}");
        assert_eq!(session.proof.len(), 43, "{}", session.proof);
        assert!(!cookie.contains(&session.proof));
        let (status, body) = json_of(gw.exchange(&code, &[]).await).await;
        assert_eq!(
            (status, body["error"]["code"].clone()),
            (401, json!(-32020))
        );

        // Reading needs no Origin; nothing is renewed (the session's limits are the
        // daemon's).
        let read = client
            .get(gw.api("/sessions"))
            .header("cookie", &session.cookie)
            .header("zeroclaw-proof", &session.proof)
            .send()
            .await
            .unwrap();
        assert_eq!(read.status(), 200);
        assert!(!read.headers().contains_key("set-cookie"));
        // A state change without our Origin (or with another) is refused; with it, done.
        let create = |origin: Option<&str>| {
            let mut request = client
                .post(gw.api("/sessions"))
                .header("cookie", &session.cookie)
                .header("zeroclaw-proof", &session.proof)
                .json(&json!({"cwd": gw.work()}));
            if let Some(origin) = origin {
                request = request.header("origin", origin);
            }
            request.send()
        };
        let (status, _) = json_of(create(None).await.unwrap()).await;
        assert_eq!(status, 403);
        let (status, _) = json_of(create(Some("https://evil.example")).await.unwrap()).await;
        assert_eq!(status, 403);
        let (status, _) = json_of(create(Some(&gw.url)).await.unwrap()).await;
        assert_eq!(status, 201);

        // The WebSocket: the proof as a subprotocol beside zeroclaw.v1, and our Origin.
        let offered = format!("zeroclaw.v1, zeroclaw.proof.{}", session.proof);
        let (status, _) = ws_with(
            &gw.ws_url(),
            &[
                ("cookie", &session.cookie),
                ("sec-websocket-protocol", &offered),
            ],
        )
        .await
        .err()
        .unwrap();
        assert_eq!(status, 403);
        let mut ws = ws_with(
            &gw.ws_url(),
            &[
                ("cookie", &session.cookie),
                ("sec-websocket-protocol", &offered),
                ("origin", &gw.url),
            ],
        )
        .await
        .unwrap();
        initialize(&mut ws, json!({})).await;

        // Listed as a dashboard session with its expiry; `token revoke` ends it and its
        // WebSocket.
        let listed = gw.env.daemon.client().call("token/list", json!({}));
        let entry = &listed["tokens"][0];
        let name = entry["name"].as_str().unwrap().to_owned();
        assert!(name.starts_with("dashboard-"), "{listed}");
        assert_eq!(entry["kind"], "dashboard", "{listed}");
        assert_eq!(entry["scope"], "operate");
        assert!(entry["expiresAt"].is_string(), "{listed}");
        gw.revoke(&name);
        assert_eq!(recv(&mut ws).await, None, "closed by the revocation");
        let (status, _) = json_of(
            client
                .get(gw.api("/status"))
                .header("cookie", &session.cookie)
                .header("zeroclaw-proof", &session.proof)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 401);
    });
}

#[test]
fn logging_in_again_from_the_same_browser_replaces_its_session_instead_of_adding_one() {
    let gw = Gw::new();
    let dashboards = || {
        let listed = gw.env.daemon.client().call("token/list", json!({}));
        listed["tokens"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["kind"] == "dashboard")
            .count()
    };
    block(async {
        let first = gw.login().await;
        let offered = format!("zeroclaw.v1, zeroclaw.proof.{}", first.proof);
        let mut ws = ws_with(
            &gw.ws_url(),
            &[
                ("cookie", &first.cookie),
                ("sec-websocket-protocol", &offered),
                ("origin", &gw.url),
            ],
        )
        .await
        .unwrap();
        initialize(&mut ws, json!({})).await;
        // A browser sends the cookie it holds (each answer's `Set-Cookie` replaces it).
        let mut held =
            DashSession::of(&gw.exchange(&gw.code(), &[("cookie", &first.cookie)]).await);
        assert_eq!(
            recv(&mut ws).await,
            None,
            "the replaced session's WebSocket ends"
        );
        for _ in 0..5 {
            let again = gw.exchange(&gw.code(), &[("cookie", &held.cookie)]).await;
            assert_eq!(again.status(), 204);
            held = DashSession::of(&again);
        }
        let status = |session: &DashSession| {
            let request = http()
                .get(gw.api("/status"))
                .header("cookie", &session.cookie)
                .header("zeroclaw-proof", &session.proof)
                .send();
            async move { request.await.unwrap().status().as_u16() }
        };
        assert_eq!(status(&first).await, 401);
        assert_eq!(status(&held).await, 200);
    });
    assert_eq!(dashboards(), 1);
    // Browsers that lost their cookie: never more than 32 sessions.
    block(async {
        for _ in 0..40 {
            assert_eq!(gw.exchange(&gw.code(), &[]).await.status(), 204);
        }
    });
    assert_eq!(dashboards(), 32);
}
