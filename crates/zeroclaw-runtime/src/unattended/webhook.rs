//! A webhook delivery, as the gateway hands it over: signature, idempotency, record,
//! queue, and the HTTP answer. Logs name the hook, the remote address and the run, never
//! the body, a header's value or the secret.

use super::{Accepted, NewRun, Refused, accept, entry};
use crate::runs::{self, Request, Source};
use crate::state::DaemonState;
use crate::store::RunRow;
use serde_json::{Value, json};
use std::sync::Arc;
use zeroclaw_gateway::{Delivery, HookAnswer};
use zeroclaw_protocol::codes;

/// `Retry-After` on a 429: a full queue drains a turn at a time.
const FULL_RETRY_SECS: u64 = 30;
/// The longest delivery id taken from a header.
const MAX_DELIVERY_ID: usize = 256;

fn error(status: u16, code: i64, message: String) -> HookAnswer {
    HookAnswer {
        status,
        body: json!({ "error": { "code": code, "message": message } }),
        retry_after: None,
    }
}

fn first_run(row: &RunRow) -> Value {
    json!({
        "runId": row.id,
        "sessionId": row.session_id,
        "deliveryId": row.delivery_id,
        "status": row.status.as_str(),
    })
}

pub async fn deliver(state: &Arc<DaemonState>, delivery: Delivery) -> HookAnswer {
    let name = delivery.name.as_str();
    let (Some(target), Some(entry)) = (
        state.runs.get(Source::Webhook, name),
        entry(state, Source::Webhook, name),
    ) else {
        return error(404, codes::INVALID_PARAMS, "no such webhook".into());
    };
    let Some(secret) = target.secret() else {
        let hook = state.config.webhooks.iter().find(|h| h.name == name);
        let var = hook.map_or("", |h| h.secret_env.as_str());
        let mut answer = error(
            503,
            codes::INTERNAL_ERROR,
            format!("webhook {name} is inactive: the daemon's environment has no {var}"),
        );
        answer.retry_after = Some(FULL_RETRY_SECS);
        return answer;
    };
    let header = |wanted: &str| {
        delivery
            .headers
            .iter()
            .find(|(n, _)| n == wanted)
            .map(|(_, v)| v.as_str())
    };
    if !runs::verify(secret, &delivery.body, header("x-hub-signature-256")) {
        let why = if header("x-hub-signature-256").is_some() {
            "wrong"
        } else {
            "missing"
        };
        tracing::warn!(webhook = %name, remote = %delivery.remote, signature = %why, "webhook refused: bad signature");
        return error(
            401,
            codes::AUTH_REQUIRED,
            format!(
                "the X-Hub-Signature-256 header is {why}: sign the raw body with HMAC-SHA256 and the hook's secret, as sha256=<hex>"
            ),
        );
    }
    let delivery_id = runs::delivery_id(&delivery.headers, &delivery.body);
    if delivery_id.len() > MAX_DELIVERY_ID {
        return error(
            400,
            codes::INVALID_REQUEST,
            format!("the delivery id is longer than {MAX_DELIVERY_ID} bytes"),
        );
    }
    let now = chrono::Local::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, false);
    let request = Request {
        headers: &delivery.headers,
        body: &delivery.body,
    };
    let prompt = runs::render(&entry.template, name, &now, Some(&request));
    let new = NewRun {
        delivery_id: Some(delivery_id.clone()),
        tick: None,
        prompt,
    };
    match accept(state, target, new).await {
        Ok(Accepted::Queued(row)) => {
            tracing::info!(webhook = %name, remote = %delivery.remote, run = %row.id, delivery = %delivery_id, "webhook accepted");
            HookAnswer {
                status: 202,
                body: json!({ "runId": row.id, "sessionId": row.session_id, "deliveryId": row.delivery_id }),
                retry_after: None,
            }
        }
        Ok(Accepted::Repeat(first)) => {
            tracing::info!(webhook = %name, remote = %delivery.remote, run = %first.id, delivery = %delivery_id, "webhook redelivered; nothing started");
            HookAnswer {
                status: 200,
                body: first_run(&first),
                retry_after: None,
            }
        }
        Err(Refused::Full) => {
            tracing::warn!(webhook = %name, remote = %delivery.remote, "webhook refused: its queue is full");
            let queue = state
                .config
                .webhooks
                .iter()
                .find(|h| h.name == name)
                .map_or(0, |h| h.queue);
            let mut answer = error(
                429,
                codes::LIMIT_REACHED,
                format!("webhook {name} has {queue} runs waiting, its queue's limit; retry later"),
            );
            answer.retry_after = Some(FULL_RETRY_SECS);
            answer
        }
        Err(Refused::Stopping) => {
            let mut answer = error(503, codes::INTERNAL_ERROR, "the daemon is stopping".into());
            answer.retry_after = Some(FULL_RETRY_SECS);
            answer
        }
        Err(Refused::Storage(e)) => {
            tracing::error!(webhook = %name, error = %e, "could not record a webhook's run");
            error(500, codes::INTERNAL_ERROR, e.to_string())
        }
    }
}
