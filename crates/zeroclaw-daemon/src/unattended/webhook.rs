//! A webhook delivery, as the gateway hands it over: signature (the hook's scheme),
//! idempotency, the headers the prompt inserts, record, queue, and the HTTP answer. Logs
//! name the hook, the remote address and the run, never the body, a header's value or the
//! secret.

use super::rules::{self, Request, Source, standard};
use super::{Accepted, NewRun, Refused, accept, entry};
use crate::config::{Signature, WebhookConfig};
use crate::state::DaemonState;
use serde_json::{Value, json};
use std::sync::Arc;
use zeroclaw_agent::store::{Dedup, RunRow};
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
    let (Some(target), Some(entry), Some(hook)) = (
        state.runs.get(Source::Webhook, name),
        entry(state, Source::Webhook, name),
        state.config.webhooks.iter().find(|h| h.name == name),
    ) else {
        return error(404, codes::INVALID_PARAMS, "no such webhook".into());
    };
    let Some(key) = target.secret() else {
        // The caller is not told which variable: that is the daemon's business (the log).
        let why = target.inactive().unwrap_or_default();
        tracing::warn!(webhook = %name, remote = %delivery.remote, secret_env = %hook.secret_env, "webhook refused: inactive, {why}");
        let mut answer = error(
            503,
            codes::INTERNAL_ERROR,
            format!(
                "webhook {name} is inactive: the daemon has no usable key for it; the daemon's log says what to set"
            ),
        );
        answer.retry_after = Some(FULL_RETRY_SECS);
        return answer;
    };
    let (delivery_id, dedup) = match authenticate(hook, key, &delivery) {
        Ok(found) => found,
        Err(answer) => return answer,
    };
    if delivery_id.len() > MAX_DELIVERY_ID {
        return error(
            400,
            codes::INVALID_REQUEST,
            format!("the delivery id is longer than {MAX_DELIVERY_ID} bytes"),
        );
    }
    let request = match Request::checked(&entry.template, &delivery.headers, &delivery.body) {
        Ok(request) => request,
        Err(why) => {
            tracing::warn!(webhook = %name, remote = %delivery.remote, delivery = %delivery_id, "webhook refused: a header the prompt inserts is not a plain token");
            return error(400, codes::INVALID_REQUEST, why);
        }
    };
    let now = chrono::Local::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, false);
    let prompt = rules::render(&entry.template, name, &now, Some(&request));
    let new = NewRun {
        delivery_id: Some(delivery_id.clone()),
        dedup: Some(dedup),
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

/// Checks the delivery's signature under its hook's scheme: its delivery id and what else
/// deduplicates it, or the 401 (logged with the hook, the remote address and why, never a
/// value).
fn authenticate(
    hook: &WebhookConfig,
    key: &[u8],
    delivery: &Delivery,
) -> Result<(String, Dedup), HookAnswer> {
    let header = |wanted: &str| {
        delivery
            .headers
            .iter()
            .find(|(n, _)| n == wanted)
            .map(|(_, v)| v.as_str())
    };
    let (name, remote) = (&hook.name, delivery.remote);
    let since = rules::now_ms().saturating_sub(hook.replay_window_ms());
    match hook.signature {
        Signature::Github => {
            let signature = header("x-hub-signature-256");
            if !rules::verify(key, &delivery.body, signature) {
                let why = if signature.is_some() {
                    "wrong"
                } else {
                    "missing"
                };
                tracing::warn!(webhook = %name, remote = %remote, signature = %why, "webhook refused: bad signature");
                return Err(error(
                    401,
                    codes::AUTH_REQUIRED,
                    format!(
                        "the X-Hub-Signature-256 header is {why}: sign the raw body with HMAC-SHA256 and the hook's secret, as sha256=<hex>"
                    ),
                ));
            }
            // The delivery id is not signed: the signed body is what a replay cannot change.
            let dedup = Dedup {
                body: Some(rules::body_sha256(&delivery.body)),
                since,
            };
            Ok((rules::delivery_id(&delivery.headers, &delivery.body), dedup))
        }
        Signature::Standard => {
            let now = chrono::Utc::now().timestamp();
            let verified = standard::verify(
                key,
                header("webhook-id"),
                header("webhook-timestamp"),
                header("webhook-signature"),
                &delivery.body,
                now,
            );
            match verified {
                // The id is signed: it alone deduplicates, forever.
                Ok(id) => Ok((id.to_owned(), Dedup { body: None, since })),
                Err(refusal) => {
                    let why = refusal.kind();
                    if let standard::Refusal::Stale(off) = refusal {
                        tracing::warn!(webhook = %name, remote = %remote, offset_secs = off, "webhook refused: its signed timestamp is outside the tolerance (a replay, or a clock off)");
                    } else {
                        tracing::warn!(webhook = %name, remote = %remote, signature = %why, "webhook refused: bad signature");
                    }
                    Err(error(401, codes::AUTH_REQUIRED, refusal.message()))
                }
            }
        }
    }
}
