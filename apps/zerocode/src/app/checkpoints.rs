//! `/undo`, `/rewind` and `/fork` (issue 31): the daemon's checkpoints, one before each
//! turn. `/rewind` alone is the picker: the session's earlier prompts, numbered by turn,
//! with the files each turn changed; `/rewind N` puts the files and the conversation back to
//! before turn N; `/undo` does that for the last turn; `/rewind back` reverses the last
//! rewind. A rewind the daemon refuses because files changed outside the agent lists them,
//! and `/rewind N force` overwrites them. `/fork [N]` continues in a new session whose
//! history is this one's up to turn N (all of it without N).

use super::{App, Step, short};
use crate::term::dim;
use zeroclaw_client::protocol::{Checkpoint, RewindParams, UnrewindParams, codes};
use zeroclaw_rpc::CallError;

/// Changed files listed per turn in the picker; more are counted.
const FILES_SHOWN: usize = 5;

impl App {
    /// The session's checkpoints, or `None` once the failure is shown.
    async fn checkpoints(&mut self) -> Result<Option<Vec<Checkpoint>>, super::Stop> {
        match self.client.session_checkpoints(&self.session.id).await {
            Ok(list) => Ok(Some(list)),
            Err(e) => {
                self.failed("cannot list the checkpoints", &e)?;
                Ok(None)
            }
        }
    }

    /// `/rewind` alone: the picker.
    pub(super) async fn list_checkpoints(&mut self) -> Step {
        let Some(list) = self.checkpoints().await? else {
            return Ok(());
        };
        if list.is_empty() {
            self.line(&dim("no checkpoints yet: one is taken before each turn"));
            return Ok(());
        }
        for c in &list {
            self.line(&format!("  {:>3}  {}", c.turn, c.prompt));
            if let Some(error) = &c.error {
                self.line(&dim(&format!("       files not rewindable: {error}")));
            }
            for f in c.changed_files.iter().take(FILES_SHOWN) {
                self.line(&dim(&format!("       {:<8} {}", f.change, f.path)));
            }
            if c.changed_files.len() > FILES_SHOWN {
                let more = c.changed_files.len() - FILES_SHOWN;
                self.line(&dim(&format!("       … {more} more")));
            }
        }
        self.line(&dim(
            "/rewind N puts the files and the conversation back to before turn N (/rewind back undoes it)",
        ));
        Ok(())
    }

    /// `/rewind N [force]`, `/rewind back`, and `/undo` (the last turn).
    pub(super) async fn rewind(&mut self, arg: &str) -> Step {
        let mut words = arg.split_whitespace();
        let target = words.next().unwrap_or("");
        let force = words.next() == Some("force");
        if target == "back" {
            return self.unrewind(force).await;
        }
        let Some(list) = self.checkpoints().await? else {
            return Ok(());
        };
        let chosen = if target == "last" {
            list.last()
        } else {
            target
                .parse::<u64>()
                .ok()
                .and_then(|n| list.iter().find(|c| c.turn == n))
        };
        let Some(chosen) = chosen else {
            self.line(&format!(
                "no turn {target:?} to rewind to; /rewind lists them"
            ));
            return Ok(());
        };
        let params = RewindParams {
            session_id: self.session.id.clone(),
            checkpoint_id: chosen.checkpoint_id.clone(),
            files: true,
            conversation: true,
            force,
        };
        match self.client.session_rewind(&params).await {
            Ok(done) => {
                for f in &done.restored_files {
                    self.line(&dim(&format!("  {:<8} {}", f.change, f.path)));
                }
                self.line(&dim(&format!(
                    "rewound to before turn {} ({:?}): {} file(s) restored, {} message(s) the model no longer sees; /rewind back undoes it",
                    chosen.turn,
                    chosen.prompt,
                    done.restored_files.len(),
                    done.messages_hidden
                )));
                self.last_undo = Some(done.undo_id);
                Ok(())
            }
            Err(e) => self.refused(&e, &format!("/rewind {} force", chosen.turn)),
        }
    }

    async fn unrewind(&mut self, force: bool) -> Step {
        let Some(undo_id) = self.last_undo.clone() else {
            self.line("nothing to undo: no rewind in this session since zerocode started");
            return Ok(());
        };
        let params = UnrewindParams {
            session_id: self.session.id.clone(),
            undo_id,
            force,
        };
        match self.client.session_unrewind(&params).await {
            Ok(done) => {
                self.last_undo = None;
                self.line(&dim(&format!(
                    "rewind undone: {} file(s) restored, {} message(s) back in the conversation",
                    done.restored_files.len(),
                    done.messages_restored
                )));
                Ok(())
            }
            Err(e) => self.refused(&e, "/rewind back force"),
        }
    }

    /// A refused rewind: the paths in the way and the command that overwrites them.
    fn refused(&mut self, e: &CallError, forced: &str) -> Step {
        if let CallError::Rpc(rpc) = e
            && rpc.code == codes::REWIND_CONFLICT
        {
            self.line("nothing was changed: these files changed outside the agent since then:");
            let conflicts = rpc.data.as_ref().and_then(|d| d["conflicts"].as_array());
            for c in conflicts.into_iter().flatten() {
                self.line(&format!(
                    "  {} ({})",
                    c["path"].as_str().unwrap_or("?"),
                    c["reason"].as_str().unwrap_or("?")
                ));
            }
            self.line(&format!("{forced} overwrites them"));
            return Ok(());
        }
        self.failed("cannot rewind", e)
    }

    /// `/fork [N]`: a new session from this one's conversation before turn N (all of it),
    /// which zerocode continues in.
    pub(super) async fn fork(&mut self, arg: &str) -> Step {
        let checkpoint = if arg.is_empty() {
            None
        } else {
            let Some(list) = self.checkpoints().await? else {
                return Ok(());
            };
            let found = arg
                .parse::<u64>()
                .ok()
                .and_then(|n| list.into_iter().find(|c| c.turn == n));
            let Some(found) = found else {
                self.line(&format!("no turn {arg:?} to fork from; /rewind lists them"));
                return Ok(());
            };
            Some(found.checkpoint_id)
        };
        let from = self.session.id.clone();
        let info = match self.client.session_fork(&from, checkpoint.as_deref()).await {
            Ok(info) => info,
            Err(e) => return self.failed("cannot fork the session", &e),
        };
        if self.attach(&info.session_id).await? {
            self.last_undo = None;
            self.line(&dim(&format!(
                "forked {} into session {} ({}); the original is unchanged",
                short(&from),
                short(&info.session_id),
                info.title.as_deref().unwrap_or("")
            )));
        }
        Ok(())
    }
}
