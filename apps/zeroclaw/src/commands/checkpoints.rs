//! `zeroclaw sessions checkpoints ID`, `rewind ID CHECKPOINT [--files-only |
//! --conversation-only] [--force]`, `unrewind ID UNDO_ID`, `fork ID [CHECKPOINT]` (issue 31). A CHECKPOINT is its
//! id, a unique prefix of it, or the number of its turn as `checkpoints` lists it.

use super::{connect, describe_call_error, print_json, resolve_session};
use crate::terminal::dim;
use zeroclaw_client::Client;
use zeroclaw_client::protocol::{Checkpoint, RewindParams, UnrewindParams};
use zeroclaw_ipc::Paths;

pub async fn list(paths: &Paths, id: &str, json: bool) -> Result<(), String> {
    let client = connect(paths).await?;
    let id = &resolve_session(&client, id).await?;
    let checkpoints = fetch(&client, id).await?;
    if json {
        return print_json(serde_json::to_value(&checkpoints));
    }
    if checkpoints.is_empty() {
        println!("session {id} has no checkpoints yet: one is taken before each turn");
        return Ok(());
    }
    for c in &checkpoints {
        let at: String = c.created_at.chars().take(19).collect::<String>();
        println!(
            "{:>3}  {}  {}  {}",
            c.turn,
            &c.checkpoint_id[..8.min(c.checkpoint_id.len())],
            at.replace('T', " "),
            c.prompt
        );
        if let Some(error) = &c.error {
            println!(
                "     {}",
                dim(&format!("no snapshot of the files: {error}"))
            );
        }
        for f in &c.changed_files {
            println!("     {}", dim(&format!("{:<8} {}", f.change, f.path)));
        }
    }
    Ok(())
}

async fn fetch(client: &Client, id: &str) -> Result<Vec<Checkpoint>, String> {
    client
        .session_checkpoints(id)
        .await
        .map_err(|e| describe_call_error(&e))
}

/// The checkpoint `name` names among the session's: its turn number, its id, or a unique
/// prefix of its id.
async fn find(client: &Client, id: &str, name: &str) -> Result<Checkpoint, String> {
    let checkpoints = fetch(client, id).await?;
    if let Ok(turn) = name.parse::<u64>()
        && let Some(c) = checkpoints.iter().find(|c| c.turn == turn)
    {
        return Ok(c.clone());
    }
    let matching: Vec<&Checkpoint> = checkpoints
        .iter()
        .filter(|c| c.checkpoint_id.starts_with(name))
        .collect();
    match matching[..] {
        [one] => Ok(one.clone()),
        [] => Err(format!(
            "session {id} has no checkpoint {name:?}; `zeroclaw sessions checkpoints {id}` lists them"
        )),
        _ => Err(format!(
            "{name:?} starts more than one checkpoint id; give more of it, or the turn number"
        )),
    }
}

pub struct Rewind<'a> {
    pub id: &'a str,
    pub checkpoint: &'a str,
    pub files_only: bool,
    pub conversation_only: bool,
    pub force: bool,
    pub json: bool,
}

pub async fn rewind(paths: &Paths, r: Rewind<'_>) -> Result<(), String> {
    let client = connect(paths).await?;
    let id = &resolve_session(&client, r.id).await?;
    let checkpoint = find(&client, id, r.checkpoint).await?;
    // A rewind is made by an attached caller, as a prompt is.
    client
        .session_load(id, false)
        .await
        .map_err(|e| describe_call_error(&e))?;
    let params = RewindParams {
        session_id: id.clone(),
        checkpoint_id: checkpoint.checkpoint_id.clone(),
        files: !r.conversation_only,
        conversation: !r.files_only,
        force: r.force,
    };
    let done = client
        .session_rewind(&params)
        .await
        .map_err(|e| describe_call_error(&e))?;
    if r.json {
        return print_json(serde_json::to_value(&done));
    }
    println!(
        "rewound session {id} to before turn {} ({:?})",
        checkpoint.turn, checkpoint.prompt
    );
    for f in &done.restored_files {
        println!("  {:<8} {}", f.change, f.path);
    }
    if params.files {
        println!("{} file(s) restored", done.restored_files.len());
    }
    if params.conversation {
        println!(
            "{} message(s) hidden from the conversation",
            done.messages_hidden
        );
    }
    println!("undo it: zeroclaw sessions unrewind {id} {}", done.undo_id);
    Ok(())
}

pub async fn unrewind(paths: &Paths, id: &str, undo: &str, force: bool) -> Result<(), String> {
    let client = connect(paths).await?;
    let id = &resolve_session(&client, id).await?;
    client
        .session_load(id, false)
        .await
        .map_err(|e| describe_call_error(&e))?;
    let params = UnrewindParams {
        session_id: id.clone(),
        undo_id: undo.to_owned(),
        force,
    };
    let done = client
        .session_unrewind(&params)
        .await
        .map_err(|e| describe_call_error(&e))?;
    println!(
        "undid the rewind of session {id}: {} file(s) restored, {} message(s) back in the conversation",
        done.restored_files.len(),
        done.messages_restored
    );
    Ok(())
}

pub async fn fork(
    paths: &Paths,
    id: &str,
    checkpoint: Option<&str>,
    json: bool,
) -> Result<(), String> {
    let client = connect(paths).await?;
    let id = &resolve_session(&client, id).await?;
    let checkpoint = match checkpoint {
        Some(name) => Some(find(&client, id, name).await?),
        None => None,
    };
    let info = client
        .session_fork(id, checkpoint.as_ref().map(|c| c.checkpoint_id.as_str()))
        .await
        .map_err(|e| describe_call_error(&e))?;
    if json {
        return print_json(serde_json::to_value(&info));
    }
    println!(
        "forked session {id} into {} ({:?})",
        info.session_id,
        info.title.as_deref().unwrap_or("")
    );
    Ok(())
}
