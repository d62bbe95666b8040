//! `zeroclaw call METHOD [PARAMS]`: one raw call.

use super::{connect, pretty};
use serde_json::Value;
use std::time::Duration;
use zeroclaw_client::ClientOptions;
use zeroclaw_ipc::Paths;
use zeroclaw_rpc::CallError;

pub async fn run(
    paths: &Paths,
    method: &str,
    params: Option<&str>,
    events: bool,
    timeout: u64,
) -> Result<u8, String> {
    let params: Value = match params {
        None => Value::Object(Default::default()),
        Some(text) => serde_json::from_str(text).map_err(|e| {
            format!(
                "PARAMS is not valid JSON ({e}); pass an object such as '{{\"sessionId\":\"...\"}}'"
            )
        })?,
    };
    if !(params.is_object() || params.is_array()) {
        return Err("PARAMS must be a JSON object or array".into());
    }
    let client = if events {
        let options = ClientOptions {
            name: "zeroclaw-cli".into(),
            tap_notifications: true,
            ..ClientOptions::default()
        };
        super::connect_with(paths, options).await?
    } else {
        connect(paths).await?
    };
    let print = |note: zeroclaw_client::Notification| {
        let line =
            serde_json::json!({"jsonrpc": "2.0", "method": note.method, "params": note.params});
        eprintln!("{line}");
    };
    let call = client.call_with_timeout(method, params, Duration::from_secs(timeout));
    tokio::pin!(call);
    let outcome = loop {
        tokio::select! {
            outcome = &mut call => break outcome,
            Some(note) = client.next_notification(), if events => print(note),
        }
    };
    // Notifications sent before the answer are already queued; print them too.
    while let Some(note) = client.try_next_notification() {
        print(note);
    }
    match outcome {
        Ok(result) => {
            println!("{}", pretty(&result));
            Ok(0)
        }
        Err(CallError::Rpc(e)) => {
            eprintln!("error {}: {}", e.code, e.message);
            if let Some(data) = &e.data {
                eprintln!("data: {data}");
            }
            Ok(1)
        }
        Err(other) => Err(format!("{method} failed: {other}")),
    }
}
