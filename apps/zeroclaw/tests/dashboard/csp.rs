//! The page is served with a strict Content-Security-Policy and caching headers, and loads
//! nothing from anywhere but the gateway.

use crate::browser::{Browser, Test};
use crate::page::{Dash, connected};

pub const TESTS: &[Test] = &[(
    "csp::the_page_carries_a_strict_policy_and_requests_nothing_from_elsewhere",
    the_page_carries_a_strict_policy_and_requests_nothing_from_elsewhere,
)];

fn the_page_carries_a_strict_policy_and_requests_nothing_from_elsewhere(b: &Browser) {
    let dash = Dash::new();
    let c = &b.client;
    b.block(async {
        let http = reqwest::Client::new();
        for path in ["/", "/login", "/assets/app.js", "/assets/app.css"] {
            let response = http
                .get(format!("{}{path}", dash.url))
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 200, "{path}");
            let h = response.headers();
            let csp = h["content-security-policy"].to_str().unwrap();
            for directive in [
                "default-src 'none'",
                "script-src 'self'",
                "connect-src 'self'",
                "frame-ancestors 'none'",
            ] {
                assert!(csp.contains(directive), "{path}: {csp}");
            }
            assert!(!csp.contains("unsafe-inline"), "{path}: {csp}");
            // Images: the gateway's own and the blob: URLs the page makes of a prompt's
            // images (read over /rpc); never data: URLs.
            assert!(csp.contains("img-src 'self' blob:;"), "{path}: {csp}");
            assert!(!csp.contains("data:"), "{path}: {csp}");
            assert_eq!(h["x-content-type-options"], "nosniff");
            assert!(h.contains_key("cache-control"), "{path}");
        }
        // Cached files are revalidated: the same ETag gets 304.
        let first = http
            .get(format!("{}/assets/app.js", dash.url))
            .send()
            .await
            .unwrap();
        let etag = first.headers()["etag"].clone();
        let again = http
            .get(format!("{}/assets/app.js", dash.url))
            .header("if-none-match", etag)
            .send()
            .await
            .unwrap();
        assert_eq!(again.status(), 304);

        // In the browser, signed in and connected (its scripts ran under the policy):
        // every resource came from the gateway.
        dash.sign_in(c).await;
        connected(c).await;
        let origins = c
            .execute(
                "return performance.getEntriesByType('resource').map((e) => new URL(e.name).origin).concat([location.origin]);",
                vec![],
            )
            .await
            .unwrap();
        let origins: Vec<String> = serde_json::from_value(origins).unwrap();
        assert!(origins.len() > 1, "the page loaded its scripts: {origins:?}");
        for origin in &origins {
            assert_eq!(origin, &dash.url, "a request left the gateway: {origins:?}");
        }
    });
}
