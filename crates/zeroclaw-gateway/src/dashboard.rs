//! The web dashboard's static files, embedded in the binary at compile time
//! (`include_bytes!`: no build step, no Node toolchain, nothing read from disk at run
//! time). They hold no data: the page talks to the daemon through `/rpc` and `/api/v1`
//! like any client, with the cookie `/auth/exchange` set.
//!
//! Every answer carries a strict Content-Security-Policy (scripts, styles and connections
//! to this origin only, no inline script, nothing from another host) and revalidation
//! caching: `Cache-Control: no-cache` with a strong `ETag`, so a browser keeps the files
//! and asks once per load whether they changed (304 when not).

use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use std::sync::OnceLock;

/// The policy every dashboard answer carries. `connect-src 'self'` covers the page's own
/// `ws(s)://` origin (CSP level 3). `img-src blob:` lets the page show a prompt's images
/// from the bytes it read over `/rpc` (`URL.createObjectURL`: a URL only this page can
/// make, from its own script); `data:` stays out.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
    img-src 'self' blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; \
    frame-ancestors 'none'";

struct Asset {
    name: &'static str,
    mime: &'static str,
    bytes: &'static [u8],
}

macro_rules! asset {
    ($name:literal, $mime:literal) => {
        Asset {
            name: $name,
            mime: $mime,
            bytes: include_bytes!(concat!("../dashboard/", $name)),
        }
    };
}

const ASSETS: &[Asset] = &[
    asset!("index.html", "text/html; charset=utf-8"),
    asset!("login.html", "text/html; charset=utf-8"),
    asset!("app.js", "text/javascript; charset=utf-8"),
    asset!("store.js", "text/javascript; charset=utf-8"),
    asset!("dom.js", "text/javascript; charset=utf-8"),
    asset!("connection.js", "text/javascript; charset=utf-8"),
    asset!("status.js", "text/javascript; charset=utf-8"),
    asset!("sessions.js", "text/javascript; charset=utf-8"),
    asset!("chat.js", "text/javascript; charset=utf-8"),
    asset!("modes.js", "text/javascript; charset=utf-8"),
    asset!("checkpoints.js", "text/javascript; charset=utf-8"),
    asset!("project.js", "text/javascript; charset=utf-8"),
    asset!("transcript.js", "text/javascript; charset=utf-8"),
    asset!("approvals.js", "text/javascript; charset=utf-8"),
    asset!("subagents.js", "text/javascript; charset=utf-8"),
    asset!("plan.js", "text/javascript; charset=utf-8"),
    asset!("markdown.js", "text/javascript; charset=utf-8"),
    asset!("usage.js", "text/javascript; charset=utf-8"),
    asset!("images.js", "text/javascript; charset=utf-8"),
    asset!("login.js", "text/javascript; charset=utf-8"),
    asset!("app.css", "text/css; charset=utf-8"),
    asset!("icon.svg", "image/svg+xml"),
];

/// 64-bit FNV-1a: a stable fingerprint of a file's bytes for its `ETag` (not a security
/// boundary: a changed file only has to look changed).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| {
        (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn etags() -> &'static [String] {
    static ETAGS: OnceLock<Vec<String>> = OnceLock::new();
    ETAGS.get_or_init(|| {
        ASSETS
            .iter()
            .map(|a| format!("\"{:016x}\"", fnv1a(a.bytes)))
            .collect()
    })
}

/// The headers of every dashboard answer, found or not.
fn guard(response: &mut Response) {
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
}

fn serve(name: &str, request: &HeaderMap) -> Response {
    let Some(index) = ASSETS.iter().position(|a| a.name == name) else {
        let mut response = (StatusCode::NOT_FOUND, "no such dashboard file").into_response();
        guard(&mut response);
        return response;
    };
    let (asset, etag) = (&ASSETS[index], &etags()[index]);
    let fresh = request
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag));
    let mut response = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        ([(header::CONTENT_TYPE, asset.mime)], asset.bytes).into_response()
    };
    guard(&mut response);
    let h = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(etag) {
        h.insert(header::ETAG, value);
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// `GET /`: the dashboard.
pub async fn index(headers: HeaderMap) -> Response {
    serve("index.html", &headers)
}

/// `GET /login`: reads the one-time code from the URL fragment and exchanges it. Never
/// cached: the page runs once per link.
pub async fn login(headers: HeaderMap) -> Response {
    let mut response = serve("login.html", &headers);
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// `GET /assets/{name}`: the scripts, the stylesheet and the icon.
pub async fn asset(Path(name): Path<String>, headers: HeaderMap) -> Response {
    if name.ends_with(".html") {
        return serve("", &headers);
    }
    serve(&name, &headers)
}

/// The embedded files' total size in bytes, uncompressed (the page's weight).
#[cfg(test)]
fn total_bytes() -> usize {
    ASSETS.iter().map(|a| a.bytes.len()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_file_has_its_own_etag_and_the_page_stays_small() {
        let tags = etags();
        let mut unique = tags.to_vec();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), ASSETS.len());
        // The bound is 300 KB compressed; uncompressed is a stricter check.
        assert!(total_bytes() < 300 * 1024, "{} bytes", total_bytes());
    }

    #[test]
    fn an_unchanged_file_is_answered_304_with_the_policy() {
        let first = serve("app.js", &HeaderMap::new());
        assert_eq!(first.status(), StatusCode::OK);
        let etag = first.headers()[header::ETAG].clone();
        let mut again = HeaderMap::new();
        again.insert(header::IF_NONE_MATCH, etag);
        let second = serve("app.js", &again);
        assert_eq!(second.status(), StatusCode::NOT_MODIFIED);
        assert_eq!(second.headers()[header::CONTENT_SECURITY_POLICY], CSP);
    }
}
