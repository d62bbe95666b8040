//! `/api/v1`: REST over the same dispatch. Each request opens an in-process connection
//! acting for its token and makes the protocol's typed calls, so an answer is exactly the
//! RPC result and a refusal exactly the RPC error (with its HTTP status). REST acts with
//! the token's authority: it attaches (`session/load`) to the session it addresses first.

use crate::auth::{App, Authed, Shared};
use crate::errors::ApiError;
use crate::raw::{Incoming, RawConn};
use axum::Json;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::Stream;
use http_body_util::BodyExt;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::convert::Infallible;
use zeroclaw_client::{Client, ClientOptions};

use zeroclaw_protocol::{
    CancelResult, Decision, DeleteResult, Empty, MessagePage, NewSessionParams, NoParams,
    PromptResult, Run, RunsGetParams, RunsListParams, RunsListResult, SessionInfo,
    SessionListResult, SessionSummary, StatusResult, codes, methods as m,
};

/// `POST /api/v1/sessions/{id}/prompt`'s body (the session is in the path).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PromptBody {
    pub prompt: String,
}

/// `POST /api/v1/sessions/{id}/approvals/{requestId}`'s body.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ApproveBody {
    pub decision: Decision,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    /// 1 to 1000; 200 if absent.
    pub limit: Option<usize>,
    /// The `nextCursor` of the page before.
    pub cursor: Option<String>,
    /// Only sessions whose title or cwd contains this (ASCII letters in any case).
    pub search: Option<String>,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
pub struct MessagesQuery {
    /// 1 to 1000; 100 if absent.
    pub limit: Option<usize>,
    /// Only messages with an id below this one.
    pub before: Option<i64>,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
pub struct EventsQuery {
    /// Send the stored history first.
    #[serde(default)]
    pub replay: bool,
}

/// A request body read as JSON: 400 (`-32700`) for bad JSON, 400 (`-32602`) for JSON of
/// the wrong shape.
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            codes::PARSE_ERROR,
            format!("the body is not JSON: {e}"),
        )
    })?;
    serde_json::from_value(value).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            codes::INVALID_PARAMS,
            format!("invalid params: {e}"),
        )
    })
}

/// Reads the body within `gateway.max_body_bytes` and `gateway.body_timeout_secs`.
async fn body<T: DeserializeOwned>(app: &App, body: Body) -> Result<T, ApiError> {
    let limited = http_body_util::Limited::new(body, app.max_body_bytes);
    let bytes = match tokio::time::timeout(app.body_timeout, limited.collect()).await {
        Err(_) => {
            return Err(ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                codes::INVALID_REQUEST,
                format!("the body did not arrive within {:?}", app.body_timeout),
            ));
        }
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            return Err(ApiError::too_large(app.max_body_bytes));
        }
        Ok(Err(e)) => {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                codes::INVALID_REQUEST,
                format!("the body could not be read: {e}"),
            ));
        }
        Ok(Ok(collected)) => collected.to_bytes(),
    };
    decode(&bytes)
}

/// An in-process connection, closed when dropped (its peer task would otherwise keep it,
/// and its place among the daemon's connections, open).
pub struct Conn(Client);

impl std::ops::Deref for Conn {
    type Target = Client;
    fn deref(&self) -> &Client {
        &self.0
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// An in-process connection to the dispatch acting for the caller's token.
async fn connect(app: &App, authed: &Authed) -> Result<Conn, ApiError> {
    let label = format!("http:{},token={}", authed.remote, authed.principal.name);
    let stream = app
        .backend
        .connect(&authed.principal, label)
        .ok_or_else(|| ApiError::unavailable("the daemon is stopping"))?;
    let options = ClientOptions {
        name: "zeroclaw-gateway".into(),
        max_frame_bytes: app.max_frame_bytes,
        ..ClientOptions::default()
    };
    match Client::from_stream(stream, "daemon", options).await {
        Ok(client) => Ok(Conn(client)),
        // Refused by the gate itself (the token expired a moment ago): its own error.
        Err(zeroclaw_client::ClientError::Handshake { source, .. }) => Err((*source).into()),
        Err(e) => Err(ApiError::unavailable(format!(
            "the daemon refused the connection: {e}"
        ))),
    }
}

/// A connection attached to `session_id`.
async fn attached(app: &App, authed: &Authed, session_id: &str) -> Result<Conn, ApiError> {
    let client = connect(app, authed).await?;
    client.session_load(session_id, false).await?;
    Ok(client)
}

#[utoipa::path(get, path = "/api/v1/health", tag = "gateway",
    responses((status = 200, description = "The gateway serves", body = Value)))]
pub async fn health() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

#[utoipa::path(get, path = "/api/v1/status", tag = "daemon",
    responses((status = 200, body = StatusResult), (status = 401, body = Value)),
    security(("bearer" = [])))]
pub async fn status(
    State(app): State<Shared>,
    authed: Authed,
) -> Result<Json<StatusResult>, ApiError> {
    let client = connect(&app, &authed).await?;
    Ok(Json(client.request::<m::Status>(&NoParams).await?))
}

#[utoipa::path(get, path = "/api/v1/sessions", tag = "sessions", params(ListQuery),
    responses((status = 200, body = SessionListResult)), security(("bearer" = [])))]
pub async fn list(
    State(app): State<Shared>,
    authed: Authed,
    Query(q): Query<ListQuery>,
) -> Result<Json<SessionListResult>, ApiError> {
    let client = connect(&app, &authed).await?;
    let params = m::ListParams {
        limit: q.limit,
        cursor: q.cursor,
        search: q.search,
    };
    Ok(Json(client.session_list_page(params).await?))
}

#[utoipa::path(post, path = "/api/v1/sessions", tag = "sessions", request_body = NewSessionParams,
    responses((status = 201, body = SessionInfo), (status = 400, body = Value), (status = 403, body = Value)),
    security(("bearer" = [])))]
pub async fn create(
    State(app): State<Shared>,
    authed: Authed,
    request: Body,
) -> Result<(StatusCode, Json<SessionInfo>), ApiError> {
    let params: NewSessionParams = body(&app, request).await?;
    let client = connect(&app, &authed).await?;
    let info = client.session_new(params).await?;
    Ok((StatusCode::CREATED, Json(info)))
}

#[utoipa::path(get, path = "/api/v1/sessions/{id}", tag = "sessions",
    params(("id" = String, Path, description = "The session id")),
    responses((status = 200, body = SessionSummary), (status = 404, body = Value)),
    security(("bearer" = [])))]
pub async fn one(
    State(app): State<Shared>,
    authed: Authed,
    Path(id): Path<String>,
) -> Result<Json<SessionSummary>, ApiError> {
    let client = connect(&app, &authed).await?;
    Ok(Json(client.session_load(&id, false).await?))
}

#[utoipa::path(delete, path = "/api/v1/sessions/{id}", tag = "sessions",
    params(("id" = String, Path, description = "The session id")),
    responses((status = 200, body = DeleteResult), (status = 403, body = Value)),
    security(("bearer" = [])))]
pub async fn delete(
    State(app): State<Shared>,
    authed: Authed,
    Path(id): Path<String>,
) -> Result<Json<DeleteResult>, ApiError> {
    let client = connect(&app, &authed).await?;
    let deleted = client.session_delete(&id).await?;
    Ok(Json(DeleteResult { deleted }))
}

#[utoipa::path(get, path = "/api/v1/sessions/{id}/messages", tag = "sessions",
    params(("id" = String, Path, description = "The session id"), MessagesQuery),
    responses((status = 200, body = MessagePage), (status = 404, body = Value)),
    security(("bearer" = [])))]
pub async fn messages(
    State(app): State<Shared>,
    authed: Authed,
    Path(id): Path<String>,
    Query(q): Query<MessagesQuery>,
) -> Result<Json<MessagePage>, ApiError> {
    let client = connect(&app, &authed).await?;
    Ok(Json(client.session_messages(&id, q.limit, q.before).await?))
}

#[utoipa::path(post, path = "/api/v1/sessions/{id}/cancel", tag = "turns",
    params(("id" = String, Path, description = "The session id")),
    responses((status = 200, body = CancelResult), (status = 404, body = Value)),
    security(("bearer" = [])))]
pub async fn cancel(
    State(app): State<Shared>,
    authed: Authed,
    Path(id): Path<String>,
) -> Result<Json<CancelResult>, ApiError> {
    let client = attached(&app, &authed, &id).await?;
    let cancelled = client.session_cancel(&id).await?;
    Ok(Json(CancelResult { cancelled }))
}

#[utoipa::path(post, path = "/api/v1/sessions/{id}/approvals/{requestId}", tag = "turns",
    params(("id" = String, Path, description = "The session id"),
           ("requestId" = String, Path, description = "The approval_request's requestId")),
    request_body = ApproveBody,
    responses((status = 200, body = Empty), (status = 404, body = Value)),
    security(("bearer" = [])))]
pub async fn approve(
    State(app): State<Shared>,
    authed: Authed,
    Path((id, request_id)): Path<(String, String)>,
    request: Body,
) -> Result<Json<Empty>, ApiError> {
    let ApproveBody { decision } = body(&app, request).await?;
    let client = attached(&app, &authed, &id).await?;
    client.session_approve(&id, &request_id, decision).await?;
    Ok(Json(Empty {}))
}

#[utoipa::path(post, path = "/api/v1/sessions/{id}/prompt", tag = "turns",
    params(("id" = String, Path, description = "The session id")),
    request_body = PromptBody,
    responses(
        (status = 200, description = "The turn's result; with `Accept: text/event-stream`, an SSE stream of `update` events then one `result` (or `error`) event", content(
            (PromptResult = "application/json"),
            (String = "text/event-stream"))),
        (status = 409, body = Value), (status = 502, body = Value)),
    security(("bearer" = [])))]
pub async fn prompt(
    State(app): State<Shared>,
    authed: Authed,
    Path(id): Path<String>,
    headers: HeaderMap,
    request: Body,
) -> Result<Response, ApiError> {
    let PromptBody { prompt } = body(&app, request).await?;
    if !wants_stream(&headers) {
        // Dropped mid-turn (the client went away), only this connection ends: the turn
        // goes on, as it does when a socket client disconnects.
        let client = attached(&app, &authed, &id).await?;
        let result: PromptResult = client.session_prompt(&id, &prompt).await?;
        return Ok(Json(result).into_response());
    }
    // Streamed: a raw connection read only as fast as the HTTP client takes the events.
    let mut raw = RawConn::open(&app, &authed).await?;
    raw.call("session/load", json!({ "sessionId": id, "replay": false }))
        .await?;
    let prompt_id = raw
        .send(
            "session/prompt",
            json!({ "sessionId": id, "prompt": prompt }),
        )
        .await
        .map_err(|e| ApiError::unavailable(format!("the daemon's connection failed: {e}")))?;
    let stream = sse_stream(
        raw,
        Some(prompt_id),
        authed.principal.clone(),
        app.close.clone(),
    );
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(app.sse_heartbeat))
        .into_response())
}

fn wants_stream(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.contains("text/event-stream"))
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

/// The SSE events of a raw connection: each `session/update` as an `update` event; with
/// `answer`, the answer to that request as the `result` (or `error`) event, then the end.
/// Without one (the events route) it runs until the token ends, the daemon stops or closes
/// the connection (a client too slow for its session is let go: the socket's rule).
fn sse_stream(
    raw: RawConn,
    answer: Option<u64>,
    principal: crate::Principal,
    close: tokio_util::sync::CancellationToken,
) -> impl Stream<Item = Result<Event, Infallible>> {
    struct State {
        raw: RawConn,
        answer: Option<u64>,
        principal: crate::Principal,
        close: tokio_util::sync::CancellationToken,
        done: bool,
    }
    let state = State {
        raw,
        answer,
        principal,
        close,
        done: false,
    };
    futures_util::stream::unfold(state, |mut s| async move {
        if s.done {
            return None;
        }
        loop {
            let event = tokio::select! {
                biased;
                next = s.raw.next() => match next {
                    Ok(Some(Incoming::Update(params))) => Event::default().event("update").data(params.get()),
                    Ok(Some(Incoming::Answer { id, outcome })) if Some(id) == s.answer => {
                        s.done = true;
                        match outcome {
                            Ok(result) => Event::default().event("result").data(result.get()),
                            Err(e) => error_event(e.into()),
                        }
                    }
                    Ok(Some(_)) => continue,
                    Ok(None) | Err(_) => {
                        s.done = true;
                        error_event(ApiError::unavailable(
                            "the daemon closed the stream (the token ended, the daemon stopped, or this client fell too far behind its session)",
                        ))
                    }
                },
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
    let mut raw = RawConn::open(&app, &authed).await?;
    // A missing session is a 404 before the stream starts.
    raw.call("session/messages", json!({ "sessionId": id, "limit": 1 }))
        .await?;
    raw.send(
        "session/load",
        json!({ "sessionId": id, "replay": q.replay }),
    )
    .await
    .map_err(|e| ApiError::unavailable(format!("the daemon's connection failed: {e}")))?;
    let stream = sse_stream(raw, None, authed.principal.clone(), app.close.clone());
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(app.sse_heartbeat))
        .into_response())
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
pub struct RunsQuery {
    /// `webhook` or `schedule`.
    pub source: Option<String>,
    /// Only the runs of this hook or schedule.
    pub name: Option<String>,
    /// 1 to 1000; 50 if absent.
    pub limit: Option<usize>,
}

#[utoipa::path(get, path = "/api/v1/runs", tag = "runs", params(RunsQuery),
    responses((status = 200, body = RunsListResult)), security(("bearer" = [])))]
pub async fn runs(
    State(app): State<Shared>,
    authed: Authed,
    Query(q): Query<RunsQuery>,
) -> Result<Json<RunsListResult>, ApiError> {
    let client = connect(&app, &authed).await?;
    let params = RunsListParams {
        source: q.source,
        name: q.name,
        limit: q.limit,
    };
    Ok(Json(client.request::<m::RunsList>(&params).await?))
}

#[utoipa::path(get, path = "/api/v1/runs/{id}", tag = "runs",
    params(("id" = String, Path, description = "The run id")),
    responses((status = 200, body = Run), (status = 404, body = Value)),
    security(("bearer" = [])))]
pub async fn run(
    State(app): State<Shared>,
    authed: Authed,
    Path(id): Path<String>,
) -> Result<Json<Run>, ApiError> {
    let client = connect(&app, &authed).await?;
    Ok(Json(
        client.request::<m::RunsGet>(&RunsGetParams { id }).await?,
    ))
}

pub async fn not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        codes::METHOD_NOT_FOUND,
        "no such route: see /api/v1/openapi.json",
    )
}
