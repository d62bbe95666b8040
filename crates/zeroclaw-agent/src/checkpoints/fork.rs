//! `session/fork`: a new session whose history is a copy of another's conversation up to a
//! checkpoint (the whole visible conversation without one), in the same cwd, with the same
//! model and sandbox, titled "fork of …". The original is untouched. The fork starts with
//! no checkpoints of its own: its first turn takes one, and rewinding the shared turns is
//! done in the original.

use crate::store::{SessionRow, Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum ForkError {
    #[error("no session {0:?}")]
    NoSession(String),
    #[error(
        "session {session:?} has no checkpoint {checkpoint:?}; `session/checkpoints` lists them"
    )]
    NoCheckpoint { session: String, checkpoint: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The longest fork title made, in characters.
const TITLE_CHARS: usize = 200;

/// Forks `session_id` before `checkpoint_id`'s turn (or whole).
pub async fn fork(
    store: &Store,
    session_id: &str,
    checkpoint_id: Option<&str>,
) -> Result<SessionRow, ForkError> {
    let Some(source) = store.session(session_id).await? else {
        return Err(ForkError::NoSession(session_id.to_owned()));
    };
    let checkpoints = store.checkpoints(session_id).await?;
    let before = match checkpoint_id {
        None => None,
        Some(id) => {
            let found = checkpoints.iter().find(|c| c.id == id && !c.hidden);
            let Some(found) = found else {
                return Err(ForkError::NoCheckpoint {
                    session: session_id.to_owned(),
                    checkpoint: id.to_owned(),
                });
            };
            found.message_id
        }
    };
    let name = match (&source.title, checkpoints.first()) {
        (Some(title), _) if !title.trim().is_empty() => title.clone(),
        (_, Some(first)) if !first.prompt.is_empty() => first.prompt.clone(),
        _ => source.id.chars().take(8).collect(),
    };
    let title: String = format!("fork of {name}")
        .chars()
        .take(TITLE_CHARS)
        .collect();
    let new_id = uuid::Uuid::new_v4().to_string();
    Ok(store.fork_session(source, &new_id, &title, before).await?)
}
