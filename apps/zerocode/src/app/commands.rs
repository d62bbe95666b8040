//! The slash commands: what each does, and `/help`'s text listing them.

use super::{App, Step, Stop, short};
use crate::term::dim;
use crate::usage;
use zeroclaw_client::SessionSummary;
use zeroclaw_rpc::CallError;

pub const HELP: &str = "\
Type a message and press Enter to send it to the agent. Alt-Enter, or \\ at the end of a
line, starts another line; a pasted block is one prompt. @path attaches a file under the
session's directory (Tab completes it, and /commands); @shot.png, or an image's path pasted
on a line of its own, sends the image. Ctrl-R searches the history.
  /help             this help
  /status           the daemon, this session, its model, message count and usage
  /model [NAME]     set this session's model from the next turn (alone: show it)
  /sandbox          what this session's commands and file tools may touch
  /new              start a new session (in zerocode's directory)
  /clear            start a new session in this session's directory
  /sessions         list recent sessions, numbered
  /load ID|N        resume a session by id (or a unique prefix) or by its /sessions number
  /title NAME       rename this session (it is titled after its first prompt until then)
  /cancel           cancel a turn running in this session
  /compact          fold older turns into a summary the model is sent instead (all stay stored)
  /undo             put the files and the conversation back to before the last turn
  /rewind [N]       list earlier prompts and the files each turn changed; with N, go back to
                    before turn N (/rewind N force: over files changed outside the agent;
                    /rewind back: undo the rewind)
  /fork [N]         continue in a new session with this one's history (up to turn N)
  /context          the AGENTS.md files, skills and custom commands this session's turns load
  /quit             exit (also Ctrl-D, or Ctrl-C twice)
  /NAME [ARGS]      a custom command of the project (listed below when there are any)
While a turn runs: Ctrl-C cancels it (twice quits). Approvals show the change (a diff) or
the command and its cwd, then one key answers: y = allow once, a = allow always (this tool,
this session), n or Esc = reject (Ctrl-C also cancels the turn).";

impl App {
    pub(super) async fn command(&mut self, line: &str) -> Step {
        let (name, arg) = line
            .split_once(char::is_whitespace)
            .map_or((line, ""), |(n, a)| (n, a.trim()));
        match name {
            "/help" | "/?" => {
                self.line(HELP);
                self.help_custom().await?;
            }
            "/quit" | "/exit" | "/q" => return Err(Stop::Quit),
            "/new" => {
                self.new_session(true).await?;
            }
            "/clear" => {
                self.new_session_in(self.session.cwd.clone(), true).await?;
            }
            "/model" if arg.is_empty() => {
                self.line(&format!("model: {}", self.session.model));
            }
            "/model" => self.set_model(arg).await?,
            "/status" => self.show_status().await?,
            "/sandbox" => self.show_sandbox().await?,
            "/context" => self.show_context().await?,
            "/sessions" | "/ls" => self.list_sessions().await?,
            "/load" | "/resume" if arg.is_empty() => {
                self.line("usage: /load ID or /load N (a number from /sessions)");
            }
            "/load" | "/resume" => {
                if let Some(id) = self.find_session(arg, true).await?
                    && self.attach(&id).await?
                {
                    self.line(&dim(&format!(
                        "now in session {} · {}",
                        short(&self.session.id),
                        self.session.cwd
                    )));
                    self.follow_running().await?;
                }
            }
            "/title" if arg.is_empty() => {
                self.line("usage: /title NAME (the session's new title)");
            }
            "/title" => match self
                .client
                .session_rename(&self.session.id, Some(arg))
                .await
            {
                Ok(()) => {
                    self.session.titled = true;
                    self.line(&dim(&format!("title: {arg}")));
                }
                Err(e) => self.failed("cannot rename the session", &e)?,
            },
            "/compact" => {
                self.line(&dim(
                    "compacting: the model is summarising the older turns…",
                ));
                match self.client.session_compact(&self.session.id).await {
                    Ok(done) if done.messages_folded == 0 => {
                        self.line(&dim(
                            "nothing to compact: the session has one turn since the last summary",
                        ));
                    }
                    // The `context_compacted` event says the rest.
                    Ok(_) => {}
                    Err(e) => self.failed("compact failed", &e)?,
                }
            }
            "/undo" => self.rewind(&format!("last {arg}")).await?,
            "/rewind" if arg.is_empty() => self.list_checkpoints().await?,
            "/rewind" => self.rewind(arg).await?,
            "/fork" => self.fork(arg).await?,
            "/cancel" => match self.client.session_cancel(&self.session.id).await {
                Ok(true) => self.line(&dim("cancelled the turn running in this session")),
                Ok(false) => self.line(&dim("nothing is running")),
                Err(e) => self.failed("cancel failed", &e)?,
            },
            other => self.custom(other, arg).await?,
        }
        Ok(())
    }

    /// `/model NAME`: the session's model from its next turn on.
    async fn set_model(&mut self, model: &str) -> Step {
        match self.client.session_set_model(&self.session.id, model).await {
            Ok(set) => {
                self.line(&dim(&format!(
                    "model: {} (was {}; from the next turn)",
                    set.model, set.previous
                )));
                self.session.model = set.model;
                Ok(())
            }
            Err(e) => self.failed("cannot set the model", &e),
        }
    }

    /// `/status`: the daemon, and this session as the store has it, with its usage.
    async fn show_status(&mut self) -> Step {
        let status = match self.client.status().await {
            Ok(status) => status,
            Err(e) => return self.failed("cannot ask the daemon's status", &e),
        };
        let summary = match self.session_summary().await {
            Ok(summary) => summary,
            Err(e) => return self.failed("cannot read the session", &e),
        };
        if let Some(summary) = &summary {
            self.session.model = summary.model.clone();
        }
        // Not fatal: a daemon without `session/usage` still answers the rest.
        let usage = self
            .client
            .session_usage(&self.session.id)
            .await
            .map_or_else(|_| "?".into(), |u| usage::summary(&u));
        let rows = [
            (
                "daemon",
                format!(
                    "{} (pid {}{})",
                    status.server_version,
                    status.pid,
                    if status.ephemeral { ", ephemeral" } else { "" }
                ),
            ),
            ("endpoint", status.endpoint),
            ("session", self.session.id.clone()),
            ("cwd", self.session.cwd.clone()),
            ("model", self.session.model.clone()),
            (
                "messages",
                summary
                    .as_ref()
                    .map_or("?".into(), |s| s.message_count.to_string()),
            ),
            (
                "running",
                match summary.as_ref().map(|s| s.running) {
                    Some(true) => "yes".into(),
                    Some(false) => "no".into(),
                    None => "?".into(),
                },
            ),
            ("usage", usage),
        ];
        for (name, value) in rows {
            self.line(&format!("  {name:<9} {value}"));
        }
        Ok(())
    }

    /// `/sandbox`: this session's sandbox, and the daemon's policy and mechanism.
    async fn show_sandbox(&mut self) -> Step {
        let status = match self.client.status().await {
            Ok(status) => status,
            Err(e) => return self.failed("cannot ask the daemon's status", &e),
        };
        for line in super::sandbox::describe(self.session.sandbox.as_ref(), status.sandbox.as_ref())
        {
            self.line(&line);
        }
        Ok(())
    }

    /// This session's row in `session/list` (searched by its cwd, page by page).
    async fn session_summary(&self) -> Result<Option<SessionSummary>, CallError> {
        let mut cursor = None;
        loop {
            let page = self
                .client
                .session_list_page(zeroclaw_client::protocol::methods::ListParams {
                    cursor,
                    // `search` takes at most 1 KiB: a longer cwd is found among all.
                    search: (self.session.cwd.len() <= 1024).then(|| self.session.cwd.clone()),
                    ..Default::default()
                })
                .await?;
            if let Some(found) = page
                .sessions
                .into_iter()
                .find(|s| s.session_id == self.session.id)
            {
                return Ok(Some(found));
            }
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(None),
            }
        }
    }
}
