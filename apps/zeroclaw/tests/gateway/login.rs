//! Dashboard login: a one-time code for an `HttpOnly; SameSite=Strict` cookie, and CSRF by
//! `Origin` on cookie-authenticated requests that change state.

use crate::harness::*;
use serde_json::json;

#[test]
fn a_login_code_works_once_and_its_cookie_acts_only_from_our_origin() {
    let gw = Gw::new();
    let link = gw.env.daemon.client().call("dashboard/link", json!({}));
    let url = link["url"].as_str().unwrap();
    let (base, code) = url.split_once("/login#code=").unwrap();
    assert_eq!(base, gw.url);
    block(async {
        let client = http();
        let page = client.get(format!("{base}/login")).send().await.unwrap();
        assert_eq!(page.status(), 200);
        assert!(page.text().await.unwrap().contains("/assets/login.js"));
        let script = client
            .get(format!("{base}/assets/login.js"))
            .send()
            .await
            .unwrap();
        assert!(script.text().await.unwrap().contains("/auth/exchange"));

        let exchange = || {
            client
                .post(format!("{base}/auth/exchange"))
                .header("origin", base)
                .json(&json!({"code": code}))
                .send()
        };
        let first = exchange().await.unwrap();
        assert_eq!(first.status(), 204);
        let cookie = first.headers()["set-cookie"].to_str().unwrap().to_owned();
        assert!(cookie.starts_with("zeroclaw_session=zc_"), "{cookie}");
        for attribute in ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=604800"] {
            assert!(cookie.contains(attribute), "{cookie}");
        }
        assert!(!cookie.contains("Secure"), "not under plain HTTP: {cookie}");
        let (status, body) = json_of(exchange().await.unwrap()).await;
        assert_eq!(
            (status, body["error"]["code"].clone()),
            (401, json!(-32020))
        );

        let session = cookie.split(';').next().unwrap().to_owned();
        // Reading needs no Origin; the cookie is renewed on use.
        let read = client
            .get(gw.api("/sessions"))
            .header("cookie", &session)
            .send()
            .await
            .unwrap();
        assert_eq!(read.status(), 200);
        assert!(read.headers().contains_key("set-cookie"));
        // A state change without our Origin (or with another) is refused; with it, done.
        let create = |origin: Option<&str>| {
            let mut request = client
                .post(gw.api("/sessions"))
                .header("cookie", &session)
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
        let (status, _) = json_of(create(Some(base)).await.unwrap()).await;
        assert_eq!(status, 201);

        // A cookie WebSocket upgrade needs the Origin too.
        let (status, _) = ws_with(&gw.ws_url(), &[("cookie", &session)])
            .await
            .err()
            .unwrap();
        assert_eq!(status, 403);
        let mut ws = ws_with(&gw.ws_url(), &[("cookie", &session), ("origin", base)])
            .await
            .unwrap();
        initialize(&mut ws, json!({})).await;
    });
    // The dashboard's token is listed and ends with `token revoke`.
    let listed = gw.env.daemon.client().call("token/list", json!({}));
    let name = listed["tokens"][0]["name"].as_str().unwrap().to_owned();
    assert!(name.starts_with("dashboard-"), "{listed}");
    assert_eq!(listed["tokens"][0]["scope"], "operate");
    gw.revoke(&name);
}
