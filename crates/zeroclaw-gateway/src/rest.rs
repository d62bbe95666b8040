//! `/api/v1`: REST over the same dispatch. Each request calls the daemon's method table
//! directly, acting for its token ([`Rest`]), so an answer is exactly the RPC result (the
//! bytes the daemon serialised) and a refusal exactly the RPC error (with its HTTP
//! status). REST acts with the token's authority: it attaches (`session/load`) to the
//! session it addresses first. The streams are in `sse`.

use crate::auth::{App, Authed, Shared};
use crate::daemon::{Rest, json_body, load};
use crate::errors::ApiError;
use axum::Json;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

// The results are named only by the OpenAPI annotations: each route's answer is the RPC
// result, passed through.
use zeroclaw_protocol::MAX_CONTENT_BYTES;
use zeroclaw_protocol::{
    CancelResult, CheckpointsResult, CommandsListResult, ContentBlock, Decision, DeleteResult,
    Empty, MessagePage, NewSessionParams, NoParams, ProjectContext, PromptResult, RewindParams,
    RewindResult, Run, RunsGetParams, RunsListParams, RunsListResult, SessionInfo,
    SessionListResult, SessionSummary, SessionUsageResult, StatusResult, SteerResult,
    UnrewindParams, UnrewindResult, codes, methods as m,
};

fn session(id: String) -> m::SessionIdParams {
    m::SessionIdParams { session_id: id }
}

/// `POST /api/v1/sessions/{id}/prompt`'s body (the session is in the path).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PromptBody {
    pub prompt: String,
    /// Images and resources sent with the prompt, as `session/prompt`'s `content`
    /// (docs/protocol.md). The whole body is bounded by `gateway.max_body_bytes` plus
    /// room for the most `content` a prompt takes ([`prompt_body_bytes`]).
    #[serde(default)]
    pub content: Vec<ContentBlock>,
}

/// `POST /api/v1/sessions/{id}/approvals/{requestId}`'s body.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ApproveBody {
    pub decision: Decision,
}

/// `POST /api/v1/sessions/{id}/steer`'s body.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SteerBody {
    pub text: String,
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
    /// Only sessions whose working directory is exactly this.
    pub cwd: Option<String>,
    /// Also subagents' child sessions (`?include_children=true`).
    #[serde(default)]
    pub include_children: bool,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
pub struct MessagesQuery {
    /// 1 to 1000; 100 if absent.
    pub limit: Option<usize>,
    /// Only messages with an id below this one.
    pub before: Option<i64>,
    /// Also the messages a rewind hid.
    #[serde(rename = "includeHidden")]
    pub include_hidden: Option<bool>,
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

/// The largest body a prompt route reads: `gateway.max_body_bytes` for the text and the
/// rest, plus the most `content` a prompt takes (10 MiB of blocks) in base64, so REST and
/// SSE take the images `session/prompt` takes whatever the limit of the other routes.
pub fn prompt_body_bytes(max_body_bytes: usize) -> usize {
    max_body_bytes.saturating_add(MAX_CONTENT_BYTES.div_ceil(3) * 4)
}

/// Reads the body within `gateway.max_body_bytes` and `gateway.body_timeout_secs`.
async fn body<T: DeserializeOwned>(app: &App, body: Body) -> Result<T, ApiError> {
    body_within(app, body, app.max_body_bytes, "gateway.max_body_bytes").await
}

/// [`body`] with `limit` (which `named` names in a 413) instead of `gateway.max_body_bytes`.
async fn body_within<T: DeserializeOwned>(
    app: &App,
    body: Body,
    limit: usize,
    named: &str,
) -> Result<T, ApiError> {
    let limited = http_body_util::Limited::new(body, limit);
    let bytes = match tokio::time::timeout(app.body_timeout, limited.collect()).await {
        Err(_) => {
            return Err(ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                codes::INVALID_REQUEST,
                format!("the body did not arrive within {:?}", app.body_timeout),
            ));
        }
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            return Err(ApiError::too_large_as(limit, named));
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

#[utoipa::path(get, path = "/api/v1/health", tag = "gateway",
    responses((status = 200, description = "The gateway serves", body = Value)))]
pub async fn health() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

#[utoipa::path(get, path = "/api/v1/status", tag = "daemon",
    responses((status = 200, body = StatusResult), (status = 401, body = Value)),
    security(("bearer" = [])))]
pub async fn status(rest: Rest) -> Result<Response, ApiError> {
    rest.respond::<m::Status>(&NoParams).await
}

#[utoipa::path(get, path = "/api/v1/sessions", tag = "sessions", params(ListQuery),
    responses((status = 200, body = SessionListResult)), security(("bearer" = [])))]
pub async fn list(rest: Rest, Query(q): Query<ListQuery>) -> Result<Response, ApiError> {
    let params = m::ListParams {
        limit: q.limit,
        cursor: q.cursor,
        search: q.search,
        cwd: q.cwd,
        include_children: q.include_children,
    };
    rest.respond::<m::SessionList>(&params).await
}

#[utoipa::path(post, path = "/api/v1/sessions", tag = "sessions", request_body = NewSessionParams,
    responses((status = 201, body = SessionInfo), (status = 400, body = Value), (status = 403, body = Value)),
    security(("bearer" = [])))]
pub async fn create(
    State(app): State<Shared>,
    rest: Rest,
    request: Body,
) -> Result<Response, ApiError> {
    let params: NewSessionParams = body(&app, request).await?;
    rest.respond_with::<m::SessionNew>(StatusCode::CREATED, &params)
        .await
}

#[utoipa::path(get, path = "/api/v1/sessions/{id}", tag = "sessions",
    params(("id" = String, Path, description = "The session id")),
    responses((status = 200, body = SessionSummary), (status = 404, body = Value)),
    security(("bearer" = [])))]
pub async fn one(rest: Rest, Path(id): Path<String>) -> Result<Response, ApiError> {
    rest.respond::<m::SessionLoad>(&load(&id, false)).await
}

#[utoipa::path(delete, path = "/api/v1/sessions/{id}", tag = "sessions",
    params(("id" = String, Path, description = "The session id")),
    responses((status = 200, body = DeleteResult), (status = 403, body = Value)),
    security(("bearer" = [])))]
pub async fn delete(rest: Rest, Path(id): Path<String>) -> Result<Response, ApiError> {
    rest.respond::<m::SessionDelete>(&session(id)).await
}

#[utoipa::path(get, path = "/api/v1/sessions/{id}/messages", tag = "sessions",
    params(("id" = String, Path, description = "The session id"), MessagesQuery),
    responses((status = 200, body = MessagePage), (status = 404, body = Value)),
    security(("bearer" = [])))]
pub async fn messages(
    rest: Rest,
    Path(id): Path<String>,
    Query(q): Query<MessagesQuery>,
) -> Result<Response, ApiError> {
    let params = m::MessagesParams {
        session_id: id,
        limit: q.limit,
        before: q.before,
        include_hidden: q.include_hidden.unwrap_or(false),
    };
    rest.respond::<m::SessionMessages>(&params).await
}

/// `POST /api/v1/sessions/{id}/rewind`'s body (the session is in the path).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RewindBody {
    pub checkpoint_id: String,
    /// Default `true`.
    pub files: Option<bool>,
    /// Default `true`.
    pub conversation: Option<bool>,
    #[serde(default)]
    pub force: bool,
}

/// `POST /api/v1/sessions/{id}/unrewind`'s body.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UnrewindBody {
    pub undo_id: String,
    #[serde(default)]
    pub force: bool,
}

/// `POST /api/v1/sessions/{id}/fork`'s body.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ForkBody {
    pub checkpoint_id: Option<String>,
}

#[utoipa::path(get, path = "/api/v1/sessions/{id}/checkpoints", tag = "checkpoints",
    params(("id" = String, Path, description = "The session id")),
    responses((status = 200, body = CheckpointsResult), (status = 404, body = Value)),
    security(("bearer" = [])))]
pub async fn checkpoints(rest: Rest, Path(id): Path<String>) -> Result<Response, ApiError> {
    let params = m::CheckpointsParams { session_id: id };
    rest.respond::<m::SessionCheckpoints>(&params).await
}

#[utoipa::path(post, path = "/api/v1/sessions/{id}/rewind", tag = "checkpoints",
    params(("id" = String, Path, description = "The session id")),
    request_body = RewindBody,
    responses((status = 200, body = RewindResult),
        (status = 409, description = "A turn runs (-32002), or files changed outside the agent are in the way (-32030, `data.conflicts`)", body = Value),
        (status = 422, description = "No such checkpoint, or it has no snapshot (-32031)", body = Value)),
    security(("bearer" = [])))]
pub async fn rewind(
    State(app): State<Shared>,
    rest: Rest,
    Path(id): Path<String>,
    request: Body,
) -> Result<Response, ApiError> {
    let b: RewindBody = body(&app, request).await?;
    rest.attach(&id).await?;
    let params = RewindParams {
        session_id: id,
        checkpoint_id: b.checkpoint_id,
        files: b.files.unwrap_or(true),
        conversation: b.conversation.unwrap_or(true),
        force: b.force,
    };
    rest.respond::<m::SessionRewind>(&params).await
}

#[utoipa::path(post, path = "/api/v1/sessions/{id}/unrewind", tag = "checkpoints",
    params(("id" = String, Path, description = "The session id")),
    request_body = UnrewindBody,
    responses((status = 200, body = UnrewindResult), (status = 409, body = Value), (status = 422, body = Value)),
    security(("bearer" = [])))]
pub async fn unrewind(
    State(app): State<Shared>,
    rest: Rest,
    Path(id): Path<String>,
    request: Body,
) -> Result<Response, ApiError> {
    let b: UnrewindBody = body(&app, request).await?;
    rest.attach(&id).await?;
    let params = UnrewindParams {
        session_id: id,
        undo_id: b.undo_id,
        force: b.force,
    };
    rest.respond::<m::SessionUnrewind>(&params).await
}

#[utoipa::path(post, path = "/api/v1/sessions/{id}/fork", tag = "checkpoints",
    params(("id" = String, Path, description = "The session id")),
    request_body = ForkBody,
    responses((status = 201, body = SessionInfo), (status = 404, body = Value), (status = 422, body = Value)),
    security(("bearer" = [])))]
pub async fn fork(
    State(app): State<Shared>,
    rest: Rest,
    Path(id): Path<String>,
    request: Body,
) -> Result<Response, ApiError> {
    let b: ForkBody = body(&app, request).await?;
    let params = m::ForkParams {
        session_id: id,
        checkpoint_id: b.checkpoint_id,
    };
    rest.respond_with::<m::SessionFork>(StatusCode::CREATED, &params)
        .await
}

#[utoipa::path(get, path = "/api/v1/sessions/{id}/context", tag = "sessions",
    params(("id" = String, Path, description = "The session id")),
    responses((status = 200, body = ProjectContext), (status = 404, body = Value)),
    security(("bearer" = [])))]
pub async fn context(rest: Rest, Path(id): Path<String>) -> Result<Response, ApiError> {
    rest.respond::<m::SessionContext>(&session(id)).await
}

#[utoipa::path(get, path = "/api/v1/sessions/{id}/usage", tag = "sessions",
    params(("id" = String, Path, description = "The session id")),
    responses((status = 200, body = SessionUsageResult), (status = 404, body = Value)),
    security(("bearer" = [])))]
pub async fn usage(rest: Rest, Path(id): Path<String>) -> Result<Response, ApiError> {
    rest.respond::<m::SessionUsage>(&session(id)).await
}

#[utoipa::path(get, path = "/api/v1/sessions/{id}/attachments/{attachmentId}", tag = "sessions",
    params(("id" = String, Path, description = "The session id"),
        ("attachmentId" = String, Path, description = "A prompt image's id, from a replay's or `messages`' `images`")),
    responses((status = 200, description = "The image's bytes, with its type as `Content-Type`", content_type = "image/*"),
        (status = 400, body = Value), (status = 404, body = Value)),
    security(("bearer" = [])))]
pub async fn attachment(
    rest: Rest,
    Path((id, attachment_id)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    use base64::Engine;
    let params = m::AttachmentParams {
        session_id: id,
        attachment_id,
    };
    let found = rest.typed::<m::SessionAttachment>(&params).await?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(found.data)
        .map_err(|e| ApiError::unavailable(format!("the stored image could not be read: {e}")))?;
    // Served as an image, never sniffed or run as anything else.
    Ok((
        [
            (header::CONTENT_TYPE, found.mime_type),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_owned()),
            (
                header::CACHE_CONTROL,
                "private, max-age=86400, immutable".to_owned(),
            ),
        ],
        bytes,
    )
        .into_response())
}

#[utoipa::path(get, path = "/api/v1/sessions/{id}/commands", tag = "sessions",
    params(("id" = String, Path, description = "The session id")),
    responses((status = 200, body = CommandsListResult), (status = 404, body = Value)),
    security(("bearer" = [])))]
pub async fn commands(rest: Rest, Path(id): Path<String>) -> Result<Response, ApiError> {
    rest.respond::<m::CommandsList>(&session(id)).await
}

#[utoipa::path(post, path = "/api/v1/sessions/{id}/cancel", tag = "turns",
    params(("id" = String, Path, description = "The session id")),
    responses((status = 200, body = CancelResult), (status = 404, body = Value)),
    security(("bearer" = [])))]
pub async fn cancel(rest: Rest, Path(id): Path<String>) -> Result<Response, ApiError> {
    rest.attach(&id).await?;
    rest.respond::<m::SessionCancel>(&session(id)).await
}

#[utoipa::path(post, path = "/api/v1/sessions/{id}/approvals/{requestId}", tag = "turns",
    params(("id" = String, Path, description = "The session id"),
           ("requestId" = String, Path, description = "The approval_request's requestId")),
    request_body = ApproveBody,
    responses((status = 200, body = Empty), (status = 404, body = Value)),
    security(("bearer" = [])))]
pub async fn approve(
    State(app): State<Shared>,
    rest: Rest,
    Path((id, request_id)): Path<(String, String)>,
    request: Body,
) -> Result<Response, ApiError> {
    let ApproveBody { decision } = body(&app, request).await?;
    rest.attach(&id).await?;
    let params = m::ApproveParams {
        session_id: id,
        request_id,
        decision,
    };
    rest.respond::<m::SessionApprove>(&params).await
}

#[utoipa::path(post, path = "/api/v1/sessions/{id}/steer", tag = "turns",
    params(("id" = String, Path, description = "The session id")),
    request_body = SteerBody,
    responses((status = 200, body = SteerResult), (status = 404, body = Value),
        (status = 409, description = "No turn is running (-32005): send a prompt instead", body = Value)),
    security(("bearer" = [])))]
pub async fn steer(
    State(app): State<Shared>,
    rest: Rest,
    Path(id): Path<String>,
    request: Body,
) -> Result<Response, ApiError> {
    let SteerBody { text } = body(&app, request).await?;
    rest.attach(&id).await?;
    let params = m::SteerParams {
        session_id: id,
        text,
    };
    rest.respond::<m::SessionSteer>(&params).await
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
    let limit = prompt_body_bytes(app.max_body_bytes);
    let named = "what a prompt takes: gateway.max_body_bytes plus 10 MiB of content in base64";
    let PromptBody { prompt, content } = body_within(&app, request, limit, named).await?;
    if wants_stream(&headers) {
        return crate::sse::prompt(&app, authed, id, prompt, content).await;
    }
    // Dropped mid-turn (the client went away), only this request's record ends: the turn
    // goes on, as it does when a socket client disconnects.
    let rest = Rest::new(&app, authed)?;
    rest.attach(&id).await?;
    let params = m::PromptParams {
        session_id: id,
        prompt,
        content,
    };
    let answer = rest.answer_untimed::<m::SessionPrompt>(&params).await?;
    Ok(json_body(StatusCode::OK, answer))
}

fn wants_stream(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.contains("text/event-stream"))
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
pub async fn runs(rest: Rest, Query(q): Query<RunsQuery>) -> Result<Response, ApiError> {
    let params = RunsListParams {
        source: q.source,
        name: q.name,
        limit: q.limit,
    };
    rest.respond::<m::RunsList>(&params).await
}

#[utoipa::path(get, path = "/api/v1/runs/{id}", tag = "runs",
    params(("id" = String, Path, description = "The run id")),
    responses((status = 200, body = Run), (status = 404, body = Value)),
    security(("bearer" = [])))]
pub async fn run(rest: Rest, Path(id): Path<String>) -> Result<Response, ApiError> {
    rest.respond::<m::RunsGet>(&RunsGetParams { id }).await
}

pub async fn not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        codes::METHOD_NOT_FOUND,
        "no such route: see /api/v1/openapi.json",
    )
}
