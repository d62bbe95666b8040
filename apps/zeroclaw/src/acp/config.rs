//! ACP's session config options: the session's **model** (`session/set_model`) and its
//! **permission mode** (`session/set_mode`, also offered as ACP's session modes by
//! `modes.rs`). Sent in the `session/new`, `session/load` and `session/resume` answers; the
//! editor's `session/set_config_option` sets one and is answered with them all; a mode
//! changed elsewhere comes as a `config_option_update` too (`session.rs`).
//!
//! The model is a select whose options are the session's model and the daemon's default
//! (`provider.model`): the daemon has no list of the provider's models. Any other value the
//! editor sends is tried as a model name (the provider says whether it exists at the next
//! turn).

use agent_client_protocol::Error as AcpError;
use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    SessionConfigOption, SessionConfigOptionCategory, SessionConfigOptionValue,
    SessionConfigSelectOption, SetSessionConfigOptionRequest, SetSessionConfigOptionResponse,
};
use std::sync::{Arc, Mutex};
use zeroclaw_client::Client;
use zeroclaw_client::protocol::methods::PermissionMode;

pub const MODEL: &str = "model";
pub const MODE: &str = "mode";

/// What an open session's config options show, kept up to date by the editor's own
/// changes and by `mode_changed` events.
#[derive(Debug, Clone)]
pub struct Current {
    pub model: String,
    pub mode: PermissionMode,
    /// The daemon's default model (`provider.model`), when known.
    pub default_model: Option<String>,
}

pub type Shared = Arc<Mutex<Current>>;

pub fn shared(current: Current) -> Shared {
    Arc::new(Mutex::new(current))
}

/// What a session just opened shows: its model and mode, and the daemon's default model
/// (asked with `status`; none if that fails).
pub async fn current(client: &Client, model: &str, mode: PermissionMode) -> Current {
    let default_model = client
        .status()
        .await
        .ok()
        .and_then(|status| status.provider.map(|p| p.model));
    Current {
        model: model.to_owned(),
        mode,
        default_model,
    }
}

/// Every option, as the editor shows them.
pub fn options(current: &Current) -> Vec<SessionConfigOption> {
    let mut models = vec![SessionConfigSelectOption::new(
        current.model.clone(),
        current.model.clone(),
    )];
    if let Some(default) = &current.default_model
        && *default != current.model
    {
        models.push(
            SessionConfigSelectOption::new(default.clone(), default.clone())
                .description("the daemon's default (provider.model)".to_owned()),
        );
    }
    let modes = PermissionMode::ALL
        .into_iter()
        .map(|mode| {
            let (name, description) = super::modes::describe(mode);
            SessionConfigSelectOption::new(mode.as_str(), name).description(description.to_owned())
        })
        .collect::<Vec<_>>();
    vec![
        SessionConfigOption::select(MODEL, "Model", current.model.clone(), models)
            .category(SessionConfigOptionCategory::Model)
            .description("The model of the session's next turns".to_owned()),
        SessionConfigOption::select(MODE, "Permission mode", current.mode.as_str(), modes)
            .category(SessionConfigOptionCategory::Mode)
            .description("What the agent may do without asking".to_owned()),
    ]
}

/// The editor's `session/set_config_option`: the model or the mode, set in the daemon, then
/// every option as it now stands. An unknown option or value is `-32602` saying which.
pub async fn set(
    client: &Client,
    current: Option<Shared>,
    request: SetSessionConfigOptionRequest,
    responder: Responder<SetSessionConfigOptionResponse>,
) -> Result<(), AcpError> {
    let session_id = request.session_id.0.to_string();
    let Some(current) = current else {
        return responder.respond_with_error(AcpError::invalid_params().data(format!(
            "session {session_id} is not open here: session/new, session/load or session/resume it first"
        )));
    };
    let value = match &request.value {
        SessionConfigOptionValue::ValueId { value } => value.0.to_string(),
        _ => {
            return responder.respond_with_error(
                AcpError::invalid_params().data("the model and the mode take a value id"),
            );
        }
    };
    let config_id = request.config_id.0.to_string();
    match config_id.as_str() {
        MODEL => match client.session_set_model(&session_id, &value).await {
            Ok(set) => lock(&current).model = set.model,
            Err(e) => return responder.respond_with_error(super::mapping::call_error(&e)),
        },
        MODE => {
            let Some(mode) = PermissionMode::parse(&value) else {
                let known: Vec<&str> = PermissionMode::ALL.iter().map(|m| m.as_str()).collect();
                return responder.respond_with_error(AcpError::invalid_params().data(format!(
                    "no mode {value:?}; the modes are {}",
                    known.join(", ")
                )));
            };
            match client.session_set_mode(&session_id, mode).await {
                Ok(set) => lock(&current).mode = set.mode,
                Err(e) => return responder.respond_with_error(super::mapping::call_error(&e)),
            }
        }
        other => {
            return responder.respond_with_error(AcpError::invalid_params().data(format!(
                "no config option {other:?}; the options are {MODEL}, {MODE}"
            )));
        }
    }
    let options = options(&lock(&current));
    responder.respond(SetSessionConfigOptionResponse::new(options))
}

pub fn lock(current: &Shared) -> std::sync::MutexGuard<'_, Current> {
    current.lock().unwrap_or_else(|e| e.into_inner())
}
