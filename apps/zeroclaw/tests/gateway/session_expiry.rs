//! Dashboard sessions end by themselves, server-side: after
//! `gateway.dashboard_idle_timeout_secs` without use, and `gateway.dashboard_max_age_secs`
//! after the login even while in use (its WebSocket is closed then).

use crate::common::*;
use crate::harness::*;
use serde_json::json;

fn dashboards(gw: &Gw) -> Vec<serde_json::Value> {
    let listed = gw.env.daemon.client().call("token/list", json!({}));
    listed["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["kind"] == "dashboard")
        .cloned()
        .collect()
}

async fn status(gw: &Gw, session: &DashSession) -> u16 {
    http()
        .get(gw.api("/status"))
        .header("cookie", &session.cookie)
        .header("zeroclaw-proof", &session.proof)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[test]
fn an_unused_dashboard_session_ends_after_its_idle_timeout() {
    let gw = Gw::with(
        "dashboard_idle_timeout_secs = 1\ndashboard_max_age_secs = 3600",
        "",
    );
    let session = block(gw.login());
    assert_eq!(block(status(&gw, &session)), 200);
    let listed = dashboards(&gw);
    assert_eq!(listed.len(), 1);
    // Its expiry is its idle limit's (a second after its use), not the max age's hour.
    let expires = secs_of_day(listed[0]["expiresAt"].as_str().unwrap());
    let created = secs_of_day(listed[0]["createdAt"].as_str().unwrap());
    let after = (expires + 86_400 - created) % 86_400;
    assert!(after < 60, "{listed:?}");
    // Nothing uses it: `token list` (over the socket, no use of the session) sees it end.
    poll_until("the idle session to end", || dashboards(&gw).is_empty());
    assert_eq!(block(status(&gw, &session)), 401);
}

/// The seconds into the day of an RFC 3339 time (`2026-12-02T07:13:22Z`).
fn secs_of_day(time: &str) -> u32 {
    let clock = &time[11..19];
    let part = |i: usize| clock[i..i + 2].parse::<u32>().unwrap();
    part(0) * 3600 + part(3) * 60 + part(6)
}

#[test]
fn a_dashboard_session_ends_at_its_max_age_even_with_its_websocket_open() {
    let gw = Gw::with(
        "dashboard_idle_timeout_secs = 2\ndashboard_max_age_secs = 2",
        "",
    );
    block(async {
        let session = gw.login().await;
        let offered = format!("zeroclaw.v1, zeroclaw.proof.{}", session.proof);
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
        // The open WebSocket keeps the session in use (the idle limit does not run), so
        // what closes it is the absolute limit.
        assert_eq!(recv(&mut ws).await, None);
        assert_eq!(status(&gw, &session).await, 401);
    });
    gw.env
        .daemon
        .wait_for_log("closing a connection whose token was revoked or expired");
}
