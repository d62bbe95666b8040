//! The one place a REST or SSE request reaches the daemon: [`Rest`], the request's calls
//! made directly into the daemon's dispatch ([`Backend::caller`]; a stream's through
//! [`Backend::streaming`]) acting for its caller. No connection and no `initialize`: the
//! daemon admits a record for the request, counted as a client while it lasts, and runs
//! each call through the method table a connection's requests go through, with the same
//! scope and liveness checks. The answer's JSON, as the daemon serialised it, becomes the
//! body. The request is authenticated first ([`Authed`]: the credential and the CSRF rule).
//!
//! [`Backend::caller`]: crate::Backend::caller
//! [`Backend::streaming`]: crate::Backend::streaming

use crate::auth::{App, Authed, Shared};
use crate::errors::ApiError;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use std::time::Duration;
use zeroclaw_protocol::{Method, codes, methods as m};
use zeroclaw_rpc::{Answer, Outbound};

/// How long a REST call may take before it is answered 504 (a prompt's turn is not
/// bounded: [`Rest::answer_untimed`]).
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// A request's calls into the daemon's dispatch, acting for its caller. The daemon counts
/// it as a client until it is dropped: at the end of a REST request, or of a stream.
pub struct Rest {
    caller: Box<dyn crate::Caller>,
    pub authed: Authed,
}

impl FromRequestParts<Shared> for Rest {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &Shared) -> Result<Self, ApiError> {
        let authed = Authed::from_request_parts(parts, app).await?;
        Self::new(app, authed)
    }
}

impl Rest {
    /// For a handler that reads the request before it calls (a prompt: streamed or not).
    pub fn new(app: &App, authed: Authed) -> Result<Self, ApiError> {
        let caller = app
            .backend
            .caller(&authed.principal, label(&authed))
            .map_err(ApiError::unavailable)?;
        Ok(Self { caller, authed })
    }

    /// A stream's: what the daemon sends it (its sessions' events) arrives on the
    /// [`Outbound`], read only as fast as the HTTP client takes it.
    pub fn streaming(app: &App, authed: Authed) -> Result<(Self, Outbound), ApiError> {
        let (caller, outbound) = app
            .backend
            .streaming(&authed.principal, label(&authed))
            .map_err(ApiError::unavailable)?;
        Ok((Self { caller, authed }, outbound))
    }

    /// `M` with `params`: its result as the daemon serialised it; 504 after
    /// [`CALL_TIMEOUT`].
    pub async fn answer<M: Method>(&self, params: &M::Params) -> Result<Answer, ApiError> {
        match tokio::time::timeout(CALL_TIMEOUT, self.answer_untimed::<M>(params)).await {
            Ok(answer) => answer,
            Err(_) => Err(ApiError::new(
                StatusCode::GATEWAY_TIMEOUT,
                codes::INTERNAL_ERROR,
                format!("the daemon did not answer within {CALL_TIMEOUT:?}"),
            )),
        }
    }

    /// `M` with `params`, however long it takes (a turn).
    pub async fn answer_untimed<M: Method>(&self, params: &M::Params) -> Result<Answer, ApiError> {
        let params = serde_json::to_value(params).map_err(|e| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                codes::INVALID_PARAMS,
                format!("invalid params: {e}"),
            )
        })?;
        Ok(self.caller.call(M::NAME, Some(params)).await?)
    }

    /// `M`'s result, read back for a handler that needs its members.
    pub async fn typed<M: Method>(&self, params: &M::Params) -> Result<M::Result, ApiError> {
        let answer = self.answer::<M>(params).await?;
        serde_json::from_str(answer.json()).map_err(|e| {
            ApiError::unavailable(format!("the daemon's answer could not be read: {e}"))
        })
    }

    /// `M`'s result as the response's body, byte for byte.
    pub async fn respond<M: Method>(&self, params: &M::Params) -> Result<Response, ApiError> {
        self.respond_with::<M>(StatusCode::OK, params).await
    }

    /// The same, with another status (201 for what a call created).
    pub async fn respond_with<M: Method>(
        &self,
        status: StatusCode,
        params: &M::Params,
    ) -> Result<Response, ApiError> {
        Ok(json_body(status, self.answer::<M>(params).await?))
    }

    /// Attaches to `session_id` (`session/load` without replay): REST acts in a session
    /// with the token's authority.
    pub async fn attach(&self, session_id: &str) -> Result<(), ApiError> {
        self.answer::<m::SessionLoad>(&load(session_id, false))
            .await
            .map(drop)
    }
}

/// `session/load`'s params.
pub fn load(session_id: &str, replay: bool) -> m::LoadParams {
    m::LoadParams {
        session_id: session_id.to_owned(),
        replay,
        mcp_servers: Vec::new(),
    }
}

/// An answer as a JSON response.
pub fn json_body(status: StatusCode, answer: Answer) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        answer.into_json(),
    )
        .into_response()
}

/// How the daemon's log names a gateway request.
fn label(authed: &Authed) -> String {
    format!("http:{},token={}", authed.remote, authed.principal.name)
}
