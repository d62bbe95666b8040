//! A dashboard session's cookie is not a credential on its own: every other server on the
//! host receives it (cookies are not isolated by port), so every API route and the
//! WebSocket refuse it without the page's proof, and it is never a bearer token.

use crate::harness::*;
use serde_json::{Value, json};

/// The routes that need no credential (or, `/hooks`, a webhook's signature instead).
const OPEN: &[&str] = &[
    "/api/v1/health",
    "/api/v1/openapi.json",
    "/auth/exchange",
    "/hooks/{name}",
];

#[test]
fn the_cookie_alone_or_as_a_bearer_token_is_refused_on_every_api_route_and_the_websocket() {
    let gw = Gw::new();
    block(async {
        let session = gw.login().await;
        let client = http();
        let (_, doc) = json_of(client.get(gw.api("/openapi.json")).send().await.unwrap()).await;
        let paths = doc["paths"].as_object().unwrap();
        let mut checked = 0;
        for (path, item) in paths {
            if OPEN.contains(&path.as_str()) {
                continue;
            }
            for method in item.as_object().unwrap().keys() {
                let concrete = path.replace("{id}", "none").replace("{requestId}", "none");
                let url = format!("{}{concrete}", gw.url);
                // The cookie alone, as a page on another local port can make the
                // browser send it (with any Origin: here our own).
                let mut request = match method.as_str() {
                    "get" => client.get(&url),
                    "post" => client.post(&url).json(&json!({})),
                    "delete" => client.delete(&url),
                    other => panic!("unexpected method {other}"),
                };
                request = request
                    .header("cookie", &session.cookie)
                    .header("origin", &gw.url);
                let (status, body) = json_of(request.send().await.unwrap()).await;
                assert_eq!(
                    (status, body["error"]["code"].clone()),
                    (401, json!(-32020)),
                    "{method} {path}: {body}"
                );
                checked += 1;
            }
        }
        assert!(checked >= 12, "{checked}");

        // With a wrong proof, or the cookie's value as a bearer token: refused too (and
        // counted as wrong secrets, fewer than the ten that slow an address down).
        let tries: [&[(&str, String)]; 2] = [
            &[
                ("cookie", session.cookie.clone()),
                ("zeroclaw-proof", "wrong".into()),
            ],
            &[("authorization", format!("Bearer {}", session.secret()))],
        ];
        for headers in tries {
            let mut request = client.get(gw.api("/status"));
            for (name, value) in headers {
                request = request.header(*name, value);
            }
            let (status, body) = json_of(request.send().await.unwrap()).await;
            assert_eq!(
                (status, body["error"]["code"].clone()),
                (401, json!(-32020)),
                "{headers:?}: {body}"
            );
        }

        // The WebSocket: the cookie alone, the cookie's value as a subprotocol bearer or
        // an Authorization bearer.
        let bearer = format!("zeroclaw.v1, zeroclaw.bearer.{}", session.secret());
        let authorization = format!("Bearer {}", session.secret());
        let tries: [&[(&str, &str)]; 3] = [
            &[("cookie", &session.cookie), ("origin", &gw.url)],
            &[("sec-websocket-protocol", &bearer)],
            &[("authorization", &authorization)],
        ];
        for headers in tries {
            let (status, body) = ws_with(&gw.ws_url(), headers).await.err().unwrap();
            assert_eq!(
                (status, body["error"]["code"].clone()),
                (401, json!(-32020)),
                "{headers:?}"
            );
        }

        // With its proof, the same cookie is served.
        let (status, body): (u16, Value) = json_of(
            client
                .get(gw.api("/status"))
                .header("cookie", &session.cookie)
                .header("zeroclaw-proof", &session.proof)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 200, "{body}");
    });
}
