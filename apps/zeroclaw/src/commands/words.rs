//! The daemon's errors in the CLI's words. An RPC error's hint names the method to call
//! (`session/list`), which is right for someone speaking JSON-RPC and wrong for someone who
//! typed `zeroclaw sessions show`: here the errors a CLI command can meet get hints that
//! name the command to run instead. `zeroclaw call` prints RPC errors as they are.

use zeroclaw_client::Client;
use zeroclaw_protocol::{MIN_ID_PREFIX, codes};
use zeroclaw_rpc::CallError;

/// "no session ... (error -32000)" for a failed call, its hint in the CLI's words.
pub fn describe_call_error(e: &CallError) -> String {
    match e {
        CallError::Rpc(e) => {
            let message = match e.code {
                codes::SESSION_NOT_FOUND => e
                    .data
                    .as_ref()
                    .and_then(|d| d["sessionId"].as_str())
                    .map_or_else(|| e.message.clone(), no_session),
                codes::SESSION_BUSY => e.message.replace(
                    "wait for it or `session/cancel` it",
                    "wait for it, or press Ctrl-C in the client that started it",
                ),
                codes::REWIND_CONFLICT => rewind_conflict(e.data.as_ref()),
                _ => e.message.clone(),
            };
            format!("{message} (error {})", e.code)
        }
        other => other.to_string(),
    }
}

/// A refused rewind: the paths in the way, and `--force` rather than `force: true`.
fn rewind_conflict(data: Option<&serde_json::Value>) -> String {
    let mut out = String::from(
        "nothing was changed: these files changed outside the agent since the checkpoint (or are not captured):",
    );
    let conflicts = data.and_then(|d| d["conflicts"].as_array());
    for c in conflicts.into_iter().flatten() {
        out.push_str(&format!(
            "\n  {} ({})",
            c["path"].as_str().unwrap_or("?"),
            c["reason"].as_str().unwrap_or("?")
        ));
    }
    out.push_str("\nrun it again with --force to overwrite them (all but `blocked` ones)");
    out
}

fn no_session(id: &str) -> String {
    format!("no session {id:?}; `zeroclaw sessions` lists the sessions there are")
}

/// The full id of the session `id` names: a whole id, or a unique prefix of at least
/// [`MIN_ID_PREFIX`] characters as `zeroclaw sessions` and zerocode show them.
pub async fn resolve_session(client: &Client, id: &str) -> Result<String, String> {
    match client.session_resolve(id).await {
        Ok(full) => Ok(full),
        // A daemon from before `session/resolve` takes whole ids only.
        Err(CallError::Rpc(e)) if e.code == codes::METHOD_NOT_FOUND => Ok(id.to_owned()),
        Err(CallError::Rpc(e)) if e.code == codes::SESSION_NOT_FOUND => {
            Err(format!("{} (error {})", no_session(id), e.code))
        }
        Err(CallError::Rpc(e)) if e.code == codes::INVALID_PARAMS => {
            let candidates: Vec<&str> = e
                .data
                .as_ref()
                .and_then(|d| d["candidates"].as_array())
                .map(|c| c.iter().filter_map(|v| v.as_str()).collect())
                .unwrap_or_default();
            if candidates.is_empty() {
                return Err(format!(
                    "session id {id:?} is too short: give at least {MIN_ID_PREFIX} characters of it (`zeroclaw sessions` lists the ids)"
                ));
            }
            Err(format!(
                "{id:?} starts more than one session id; give more of it:\n  {}",
                candidates.join("\n  ")
            ))
        }
        Err(e) => Err(describe_call_error(&e)),
    }
}
