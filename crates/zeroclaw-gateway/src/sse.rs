//! Server-sent events: a prompt streamed to its answer, and a session's live events. Each
//! stream is one in-process connection whose `session/update` events arrive as the daemon
//! serialised them and leave as `update` events unchanged (never parsed into a tree and
//! written back), read only as fast as the HTTP client takes them ([`Daemon::streaming`]).
//! The framing is written here rather than with axum's `Sse`, so that the events waiting
//! when the HTTP client is ready leave together, as one chunk of the body.

use crate::auth::{Authed, Shared};
use crate::daemon::Daemon;
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
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use zeroclaw_client::RawUpdate;
use zeroclaw_rpc::{BoxFuture, CallError};

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
    let (daemon, updates) = Daemon::streaming(&app, authed).await?;
    // A missing session is a 404 before the stream starts.
    daemon.session_messages(&id, Some(1), None).await?;
    let principal = daemon.authed.principal.clone();
    // The attach is answered after its replay, which may be longer than the queue: it is
    // awaited inside the stream, and the connection lives as long as the stream does.
    let attach: BoxFuture<Bytes> = Box::pin(async move {
        match daemon.session_load(&id, q.replay).await {
            Ok(_) => std::future::pending().await,
            Err(e) => error_event(closed_or(e)),
        }
    });
    Ok(respond(stream(updates, attach, principal, &app)))
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
    let (daemon, mut updates) = Daemon::streaming(app, authed).await?;
    daemon.attach(&id).await?;
    // What attaching re-sent (a pending approval of an earlier turn) is not this turn's.
    while updates.try_recv().is_ok() {}
    let principal = daemon.authed.principal.clone();
    // Dropped mid-turn (the client went away), only this connection ends: the turn goes
    // on, as it does when a socket client disconnects.
    let answer: BoxFuture<Bytes> = Box::pin(async move {
        match daemon.session_prompt_with(&id, &prompt, content).await {
            Ok(result) => match serde_json::to_string(&result) {
                Ok(data) => event("result", &data),
                Err(e) => error_event(ApiError::unavailable(format!(
                    "the turn's result could not be written: {e}"
                ))),
            },
            Err(e) => error_event(closed_or(e)),
        }
    });
    Ok(respond(stream(updates, answer, principal, app)))
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

/// Why a stream's connection ended, when the daemon ended it.
fn closed() -> ApiError {
    ApiError::unavailable(
        "the daemon closed the stream (the token ended, the daemon stopped, or this client fell too far behind its session)",
    )
}

fn closed_or(e: CallError) -> ApiError {
    match e {
        CallError::Closed => closed(),
        e => e.into(),
    }
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
    out.put_slice(b"event: ");
    out.put_slice(name.as_bytes());
    out.put_slice(b"\ndata: ");
    // One JSON text on one line: a line break in it can only be whitespace between its
    // tokens (inside a string it is escaped), which a space replaces without changing it.
    if data.contains(['\n', '\r']) {
        out.put_slice(data.replace(['\n', '\r'], " ").as_bytes());
    } else {
        out.put_slice(data.as_bytes());
    }
    out.put_slice(b"\n\n");
}

/// At most this many updates leave in one chunk of the body.
const BATCH: usize = 64;

/// The stream: the updates as `update` events until `last` resolves; then the updates
/// already received (every one sent before the answer, since the connection delivers in
/// order), then `last`'s event, then the end. It also ends, with an `error` event, when the
/// connection closes (the daemon let a lagging client go, or stopped), the token ends, or
/// the daemon closes its streams. A comment line every `sse_heartbeat_secs` tells a quiet
/// stream from a dead one.
fn stream(
    updates: mpsc::Receiver<RawUpdate>,
    last: BoxFuture<Bytes>,
    principal: crate::Principal,
    app: &Shared,
) -> impl Stream<Item = Result<Bytes, Infallible>> + Send + 'static {
    struct State {
        updates: mpsc::Receiver<RawUpdate>,
        batch: Vec<RawUpdate>,
        last: BoxFuture<Bytes>,
        principal: crate::Principal,
        close: CancellationToken,
        heartbeat: tokio::time::Interval,
        done: bool,
    }
    let state = State {
        updates,
        batch: Vec::with_capacity(BATCH),
        last,
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
                while let Ok(update) = s.updates.try_recv() {
                    s.batch.push(update);
                }
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

/// `batch` as `update` events (emptied), then `last` if given.
fn updates_chunk(batch: &mut Vec<RawUpdate>, last: Option<Bytes>) -> Bytes {
    let size: usize = batch.iter().map(|u| u.get().len() + 24).sum();
    let mut out = BytesMut::with_capacity(size + last.as_ref().map_or(0, Bytes::len));
    for update in batch.drain(..) {
        put_event(&mut out, "update", update.get());
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
    use serde_json::value::RawValue;

    #[test]
    fn waiting_updates_leave_as_one_chunk_of_events_each_on_one_data_line_then_the_last() {
        let raw = |s: &str| RawValue::from_string(s.to_owned()).unwrap();
        let mut batch = vec![
            raw(r#"{"type":"a"}"#),
            raw("{\"type\":\n\"b\",\r\n\"n\":1}"),
        ];
        let chunk = updates_chunk(&mut batch, Some(event("result", r#"{"text":"x"}"#)));
        assert!(batch.is_empty());
        assert_eq!(
            std::str::from_utf8(&chunk).unwrap(),
            "event: update\ndata: {\"type\":\"a\"}\n\n\
             event: update\ndata: {\"type\": \"b\",  \"n\":1}\n\n\
             event: result\ndata: {\"text\":\"x\"}\n\n"
        );
    }
}
