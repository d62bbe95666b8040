//! Server-sent events: a prompt streamed to its answer, and a session's live events. Each
//! stream is one in-process connection whose `session/update` events arrive as the daemon
//! serialised them and leave as `update` events unchanged (never parsed into a tree and
//! written back), read only as fast as the HTTP client takes them ([`Daemon::streaming`]).

use crate::auth::{Authed, Shared};
use crate::daemon::Daemon;
use crate::errors::ApiError;
use axum::extract::{Path, Query, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::Stream;
use serde::Deserialize;
use serde_json::json;
use std::convert::Infallible;
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
    let attach: BoxFuture<Event> = Box::pin(async move {
        match daemon.session_load(&id, q.replay).await {
            Ok(_) => std::future::pending().await,
            Err(e) => error_event(closed_or(e)),
        }
    });
    Ok(respond(
        &app,
        stream(updates, attach, principal, app.close.clone()),
    ))
}

/// `POST …/prompt` with `Accept: text/event-stream`: the turn's `update` events, then its
/// answer as the `result` (or `error`) event, then the end.
pub async fn prompt(
    app: &Shared,
    authed: Authed,
    id: String,
    prompt: String,
) -> Result<Response, ApiError> {
    let (daemon, mut updates) = Daemon::streaming(app, authed).await?;
    daemon.attach(&id).await?;
    // What attaching re-sent (a pending approval of an earlier turn) is not this turn's.
    while updates.try_recv().is_ok() {}
    let principal = daemon.authed.principal.clone();
    // Dropped mid-turn (the client went away), only this connection ends: the turn goes
    // on, as it does when a socket client disconnects.
    let answer: BoxFuture<Event> = Box::pin(async move {
        match daemon.session_prompt(&id, &prompt).await {
            Ok(result) => match serde_json::to_string(&result) {
                Ok(data) => Event::default().event("result").data(data),
                Err(e) => error_event(ApiError::unavailable(format!(
                    "the turn's result could not be written: {e}"
                ))),
            },
            Err(e) => error_event(closed_or(e)),
        }
    });
    Ok(respond(
        app,
        stream(updates, answer, principal, app.close.clone()),
    ))
}

fn respond(
    app: &Shared,
    events: impl Stream<Item = Result<Event, Infallible>> + Send + 'static,
) -> Response {
    Sse::new(events)
        .keep_alive(KeepAlive::new().interval(app.sse_heartbeat))
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

fn error_event(error: ApiError) -> Event {
    let mut body = json!({ "code": error.error.code, "message": error.error.message });
    if let Some(data) = error.error.data {
        body["data"] = data;
    }
    Event::default()
        .event("error")
        .data(json!({ "error": body }).to_string())
}

/// The stream: each update as an `update` event until `last` resolves; then the updates
/// already received (every one sent before the answer, since the connection delivers in
/// order), then `last`'s event, then the end. It also ends, with an `error` event, when the
/// connection closes (the daemon let a lagging client go, or stopped), the token ends, or
/// the daemon closes its streams.
fn stream(
    updates: mpsc::Receiver<RawUpdate>,
    last: BoxFuture<Event>,
    principal: crate::Principal,
    close: CancellationToken,
) -> impl Stream<Item = Result<Event, Infallible>> {
    struct State {
        updates: mpsc::Receiver<RawUpdate>,
        last: BoxFuture<Event>,
        principal: crate::Principal,
        close: CancellationToken,
        /// `last`'s event, once it resolved, sent after the updates still queued.
        ending: Option<Event>,
        done: bool,
    }
    let state = State {
        updates,
        last,
        principal,
        close,
        ending: None,
        done: false,
    };
    futures_util::stream::unfold(state, |mut s| async move {
        loop {
            if s.done {
                return None;
            }
            if let Some(ending) = s.ending.take() {
                let event = match s.updates.try_recv() {
                    Ok(update) => {
                        s.ending = Some(ending);
                        update_event(&update)
                    }
                    Err(_) => {
                        s.done = true;
                        ending
                    }
                };
                return Some((Ok(event), s));
            }
            let event = tokio::select! {
                biased;
                update = s.updates.recv() => match update {
                    Some(update) => update_event(&update),
                    None => {
                        s.done = true;
                        error_event(closed())
                    }
                },
                event = &mut s.last => {
                    s.ending = Some(event);
                    continue;
                }
                () = s.principal.over() => {
                    s.done = true;
                    error_event(ApiError::unauthorized("the token was revoked or expired"))
                }
                () = s.close.cancelled() => {
                    s.done = true;
                    error_event(ApiError::unavailable("the daemon is stopping"))
                }
            };
            return Some((Ok(event), s));
        }
    })
}

fn update_event(update: &RawUpdate) -> Event {
    Event::default().event("update").data(update.get())
}
