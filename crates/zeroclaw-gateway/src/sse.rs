//! Server-sent events: a prompt streamed to its answer, and a session's live events. Each
//! stream calls the daemon's dispatch directly ([`Rest::streaming`]); the frames the daemon
//! sends it arrive on a queue with a connection's size, pacing and overflow rule, as the
//! bytes it serialised, and each `session/update`'s params leave as an `update` event
//! unchanged (sliced out of the frame, never parsed into a tree and written back), read
//! only as fast as the HTTP client takes them. The framing is written here rather than
//! with axum's `Sse`, so that the events waiting when the HTTP client is ready leave
//! together, as one chunk of the body.

use crate::auth::{Authed, Shared};
use crate::daemon::{Rest, load};
use crate::errors::ApiError;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use bytes::{BufMut, Bytes, BytesMut};
use futures_util::Stream;
use serde::Deserialize;
use serde_json::json;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use zeroclaw_protocol::methods as m;
use zeroclaw_rpc::{BoxFuture, Outbound};

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
pub struct EventsQuery {
    /// Send the stored history first.
    #[serde(default)]
    pub replay: bool,
}

#[utoipa::path(get, path = "/api/v1/sessions/{id}/events", tag = "sessions",
    params(("id" = String, Path, description = "The session id"), EventsQuery),
    responses((status = 200, description = "SSE: `update` events (the history first with `replay`), heartbeat comments every `sse_heartbeat_secs` (15 s)", content_type = "text/event-stream", body = String),
              (status = 404, body = Value)),
    security(("bearer" = [])))]
pub async fn events(
    State(app): State<Shared>,
    authed: Authed,
    Path(id): Path<String>,
    Query(q): Query<EventsQuery>,
) -> Result<Response, ApiError> {
    let (rest, updates) = Rest::streaming(&app, authed)?;
    // A missing session is a 404 before the stream starts.
    let first = m::MessagesParams {
        session_id: id.clone(),
        limit: Some(1),
        before: None,
        include_hidden: false,
    };
    rest.answer::<m::SessionMessages>(&first).await?;
    let principal = rest.authed.principal.clone();
    let rest = Arc::new(rest);
    let caller = rest.clone();
    // The attach is answered after its replay, which may be longer than the queue: it is
    // awaited inside the stream, and the record lives as long as the stream does.
    let attach: BoxFuture<Bytes> = Box::pin(async move {
        match caller
            .answer_untimed::<m::SessionLoad>(&load(&id, q.replay))
            .await
        {
            Ok(_) => std::future::pending().await,
            Err(e) => error_event(e),
        }
    });
    Ok(respond(stream(updates, attach, rest, principal, &app)))
}

/// `POST …/prompt` with `Accept: text/event-stream`: the turn's `update` events, then its
/// answer as the `result` (or `error`) event, then the end.
pub async fn prompt(
    app: &Shared,
    authed: Authed,
    id: String,
    prompt: String,
    content: Vec<zeroclaw_protocol::ContentBlock>,
) -> Result<Response, ApiError> {
    let (rest, mut updates) = Rest::streaming(app, authed)?;
    rest.attach(&id).await?;
    // What attaching re-sent (a pending approval of an earlier turn) is not this turn's.
    while updates.try_recv().is_some() {}
    let principal = rest.authed.principal.clone();
    // Dropped mid-turn (the client went away), only this stream's record ends: the turn
    // goes on, as it does when a socket client disconnects.
    let params = m::PromptParams {
        session_id: id,
        prompt,
        content,
    };
    let rest = Arc::new(rest);
    let caller = rest.clone();
    let answer: BoxFuture<Bytes> = Box::pin(async move {
        match caller.answer_untimed::<m::SessionPrompt>(&params).await {
            Ok(result) => event("result", result.json()),
            Err(e) => error_event(e),
        }
    });
    Ok(respond(stream(updates, answer, rest, principal, app)))
}

fn respond(body: impl Stream<Item = Result<Bytes, Infallible>> + Send + 'static) -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(body),
    )
        .into_response()
}

/// Why a stream ended, when the daemon ended it.
fn closed() -> ApiError {
    ApiError::unavailable(
        "the daemon closed the stream (the token ended, the daemon stopped, or this client fell too far behind its session)",
    )
}

fn error_event(error: ApiError) -> Bytes {
    let mut body = json!({ "code": error.error.code, "message": error.error.message });
    if let Some(data) = error.error.data {
        body["data"] = data;
    }
    event("error", &json!({ "error": body }).to_string())
}

/// One event: `event: NAME`, `data: DATA`, a blank line.
fn event(name: &str, data: &str) -> Bytes {
    let mut out = BytesMut::with_capacity(name.len() + data.len() + 16);
    put_event(&mut out, name, data);
    out.freeze()
}

fn put_event(out: &mut BytesMut, name: &str, data: &str) {
    put_event_bytes(out, name, data.as_bytes());
}

fn put_event_bytes(out: &mut BytesMut, name: &str, data: &[u8]) {
    out.put_slice(b"event: ");
    out.put_slice(name.as_bytes());
    out.put_slice(b"\ndata: ");
    // One JSON text on one line: a line break in it can only be whitespace between its
    // tokens (inside a string it is escaped), which a space replaces without changing it.
    if data.iter().any(|&b| b == b'\n' || b == b'\r') {
        out.extend(data.iter().map(|&b| match b {
            b'\n' | b'\r' => b' ',
            b => b,
        }));
    } else {
        out.put_slice(data);
    }
    out.put_slice(b"\n\n");
}

/// The start of every `session/update` the daemon writes (`Notification::new` and the
/// hand-written hot paths, whose tests check they write the same bytes).
const UPDATE_START: &[u8] = br#"{"jsonrpc":"2.0","method":"session/update","params":"#;

/// The params of `frame` if it is a `session/update` notification, as the daemon wrote
/// them: sliced out of the frame when it has the daemon's own layout, found by a borrowed
/// parse (no tree) otherwise.
fn update_params(frame: &Bytes) -> Option<Bytes> {
    if frame.starts_with(UPDATE_START) && frame.ends_with(b"}") {
        return Some(frame.slice(UPDATE_START.len()..frame.len() - 1));
    }
    #[derive(Deserialize)]
    struct Envelope<'a> {
        #[serde(borrow, default)]
        method: Option<std::borrow::Cow<'a, str>>,
        #[serde(default)]
        id: Option<serde::de::IgnoredAny>,
        #[serde(borrow, default)]
        params: Option<&'a serde_json::value::RawValue>,
    }
    let envelope: Envelope<'_> = serde_json::from_slice(frame).ok()?;
    match envelope {
        Envelope {
            method: Some(method),
            id: None,
            params: Some(params),
        } if method == zeroclaw_protocol::events::SESSION_UPDATE => {
            Some(Bytes::copy_from_slice(params.get().as_bytes()))
        }
        _ => None,
    }
}

/// At most this many updates leave in one chunk of the body.
const BATCH: usize = 64;

/// The stream: the updates as `update` events until `last` resolves; then the updates
/// already queued (every one sent before the answer: a turn queues its events as it goes,
/// before it answers), then `last`'s event, then the end. It also ends, with an `error`
/// event, when the daemon closes the queue (it let a lagging client go, or stopped), the
/// token ends, or the daemon closes its streams. A comment line every `sse_heartbeat_secs` tells a quiet
/// stream from a dead one.
fn stream(
    updates: Outbound,
    last: BoxFuture<Bytes>,
    // The stream's record: its queue stays open after `last` resolved, until the end.
    rest: Arc<Rest>,
    principal: crate::Principal,
    app: &Shared,
) -> impl Stream<Item = Result<Bytes, Infallible>> + Send + 'static {
    struct State {
        updates: Outbound,
        batch: Vec<Bytes>,
        last: BoxFuture<Bytes>,
        _rest: Arc<Rest>,
        principal: crate::Principal,
        close: CancellationToken,
        heartbeat: tokio::time::Interval,
        done: bool,
    }
    let state = State {
        updates,
        batch: Vec::with_capacity(BATCH),
        last,
        _rest: rest,
        principal,
        close: app.close.clone(),
        heartbeat: heartbeat(app.sse_heartbeat),
        done: false,
    };
    futures_util::stream::unfold(state, |mut s| async move {
        if s.done {
            return None;
        }
        let chunk = tokio::select! {
            biased;
            n = s.updates.recv_many(&mut s.batch, BATCH) => {
                if n == 0 {
                    s.done = true;
                    error_event(closed())
                } else {
                    updates_chunk(&mut s.batch, None)
                }
            }
            last = &mut s.last => {
                s.done = true;
                while let Some(update) = s.updates.try_recv() {
                    s.batch.push(update);
                }
                // Let go by the daemon (it fell behind), events may be missing: the
                // answer is not given as if the stream were whole.
                let last = if s.updates.is_closed() { error_event(closed()) } else { last };
                updates_chunk(&mut s.batch, Some(last))
            }
            () = s.principal.over() => {
                s.done = true;
                error_event(ApiError::unauthorized("the token was revoked or expired"))
            }
            () = s.close.cancelled() => {
                s.done = true;
                error_event(ApiError::unavailable("the daemon is stopping"))
            }
            _ = s.heartbeat.tick() => Bytes::from_static(b":\n\n"),
        };
        Some((Ok(chunk), s))
    })
}

/// Ticks every `period`, the first one a period from now.
fn heartbeat(period: Duration) -> tokio::time::Interval {
    let mut interval = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    interval
}

/// The `session/update`s of `batch` (emptied) as `update` events, then `last` if given.
/// Other frames (none is sent to a stream today) are left out, as a client library would
/// route them elsewhere.
fn updates_chunk(batch: &mut Vec<Bytes>, last: Option<Bytes>) -> Bytes {
    let size: usize = batch.iter().map(|u| u.len() + 24).sum();
    let mut out = BytesMut::with_capacity(size + last.as_ref().map_or(0, Bytes::len));
    for frame in batch.drain(..) {
        if let Some(params) = update_params(&frame) {
            put_event_bytes(&mut out, "update", &params);
        }
    }
    if let Some(last) = last {
        out.put_slice(&last);
    }
    out.freeze()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn waiting_updates_leave_as_one_chunk_of_events_each_on_one_data_line_then_the_last() {
        let update = |params: &str| {
            Bytes::from(format!(
                r#"{{"jsonrpc":"2.0","method":"session/update","params":{params}}}"#
            ))
        };
        let mut batch = vec![
            update(r#"{"type":"a"}"#),
            update("{\"type\":\n\"b\",\r\n\"n\":1}"),
            // Not an update: left out.
            Bytes::from_static(br#"{"jsonrpc":"2.0","method":"other","params":{}}"#),
            // Another layout of an update: found by parsing.
            Bytes::from_static(
                br#"{"params":{"type":"c"}, "method":"session/update","jsonrpc":"2.0"}"#,
            ),
        ];
        let chunk = updates_chunk(&mut batch, Some(event("result", r#"{"text":"x"}"#)));
        assert!(batch.is_empty());
        assert_eq!(
            std::str::from_utf8(&chunk).unwrap(),
            "event: update\ndata: {\"type\":\"a\"}\n\n\
             event: update\ndata: {\"type\": \"b\",  \"n\":1}\n\n\
             event: update\ndata: {\"type\":\"c\"}\n\n\
             event: result\ndata: {\"text\":\"x\"}\n\n"
        );
    }
}
