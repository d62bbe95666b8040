//! Custom commands for the editor (docs/project.md): announced as ACP's
//! `available_commands_update` when a session opens, and a prompt `/NAME ARGS` naming one
//! expanded by the daemon (`commands/expand`) before it is sent. A `/word` that names no
//! command is sent as typed: it may be the editor's own.

use agent_client_protocol::Client as Editor;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, SessionNotification,
    SessionUpdate as AcpUpdate, UnstructuredCommandInput,
};
use zeroclaw_client::{CallResult, Client};

/// Tells the editor the session's commands, if it has any; a failure is only logged (the
/// session works without them).
pub async fn announce(client: &Client, session_id: &str, editor: &ConnectionTo<Editor>) {
    let commands = match client.commands_list(session_id).await {
        Ok(commands) if commands.is_empty() => return,
        Ok(commands) => commands,
        Err(e) => {
            tracing::warn!(session = %session_id, "commands/list failed: {e}");
            return;
        }
    };
    let available = commands
        .into_iter()
        .map(|c| {
            let command = AvailableCommand::new(c.name, c.description.unwrap_or_default());
            match c.argument_hint {
                Some(hint) => command.input(AvailableCommandInput::Unstructured(
                    UnstructuredCommandInput::new(hint),
                )),
                None => command,
            }
        })
        .collect();
    let update = AcpUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(available));
    if let Err(e) =
        editor.send_notification(SessionNotification::new(session_id.to_owned(), update))
    {
        tracing::warn!(session = %session_id, "available_commands_update was not sent: {e}");
    }
}

/// The prompt to send for `text`: a command's expansion when it is `/NAME ARGS` and the
/// session has a command NAME, else `text` itself.
pub async fn expand(client: &Client, session_id: &str, text: String) -> CallResult<String> {
    let Some(rest) = text.strip_prefix('/') else {
        return Ok(text);
    };
    let (name, arguments) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let known = client.commands_list(session_id).await?;
    if !known.iter().any(|c| c.name == name) {
        return Ok(text);
    }
    client.commands_expand(session_id, name, arguments).await
}
