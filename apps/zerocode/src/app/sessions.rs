//! Choosing the session to work in: a new one, one picked from a numbered list, or one
//! found by id or prefix, loaded with its history replayed.

use super::{App, Current, RECENT, Step, Stop, short};
use crate::input::Read;
use crate::render;
use crate::term::dim;
use tokio::sync::broadcast;
use zeroclaw_client::protocol::{MIN_ID_PREFIX, codes};
use zeroclaw_client::{NewSession, SessionSummary, Update};
use zeroclaw_rpc::CallError;

impl App {
    /// Works in `session` from now on (`@` completes under its cwd).
    fn enter(&mut self, session: Current) {
        self.input.set_cwd(std::path::Path::new(&session.cwd));
        self.screen()
            .set_sandbox(session.sandbox.as_ref().map(crate::status::sandbox_label));
        self.screen()
            .set_mode(Some(super::modes::label(session.mode)));
        self.session = session;
        self.last_undo = None;
    }

    /// Fills the status line's context gauge and cost with the session's usage so far
    /// (`session/usage`); the turns' `usage_update` events keep it current. Without an
    /// answer (a daemon that predates the method) the gauge waits for the first event.
    async fn load_usage(&mut self) {
        let gauge = match self.client.session_usage(&self.session.id).await {
            Ok(usage) => crate::usage::Gauge::from_session(&usage),
            Err(_) => crate::usage::Gauge::default(),
        };
        self.screen().set_gauge(gauge);
    }

    /// Creates a session in the directory of new sessions and works in it from now on.
    pub(super) async fn new_session(&mut self, announce: bool) -> Result<bool, Stop> {
        self.new_session_in(self.cwd.clone(), announce).await
    }

    /// Creates a session in `cwd` and works in it from now on.
    pub(super) async fn new_session_in(
        &mut self,
        cwd: String,
        announce: bool,
    ) -> Result<bool, Stop> {
        let params = NewSession {
            cwd: Some(cwd),
            ..NewSession::default()
        };
        match self.client.session_new(params).await {
            Ok(info) => {
                self.enter(Current {
                    id: info.session_id,
                    cwd: info.cwd,
                    model: info.model,
                    titled: info.title.is_some(),
                    sandbox: info.sandbox,
                    mode: info.mode,
                });
                self.load_usage().await;
                if announce {
                    self.line(&dim(&format!(
                        "new session {} · {}",
                        short(&self.session.id),
                        self.session.cwd
                    )));
                }
                Ok(true)
            }
            Err(e) => {
                self.failed("cannot create a session", &e)?;
                Ok(false)
            }
        }
    }

    async fn recent_sessions(&mut self) -> Result<Option<Vec<SessionSummary>>, Stop> {
        match self.client.session_list().await {
            Ok(mut sessions) => {
                sessions.truncate(RECENT);
                self.listed = sessions.clone();
                Ok(Some(sessions))
            }
            Err(e) => {
                self.failed("cannot list the sessions", &e)?;
                Ok(None)
            }
        }
    }

    fn show_sessions(&self, sessions: &[SessionSummary]) {
        for (i, s) in sessions.iter().enumerate() {
            let here = if s.session_id == self.session.id {
                "*"
            } else {
                " "
            };
            let title = render::truncate(s.title.as_deref().unwrap_or("(untitled)"), 30);
            let updated: String = s
                .updated_at
                .chars()
                .take(16)
                .collect::<String>()
                .replace('T', " ");
            let running = if s.running { "  (running)" } else { "" };
            self.line(&format!(
                "{here}{:>3}) {}  {title:<30}  {:>4} msgs  {updated}  {}{running}",
                i + 1,
                short(&s.session_id),
                s.message_count,
                s.cwd
            ));
        }
    }

    pub(super) async fn list_sessions(&mut self) -> Step {
        let Some(sessions) = self.recent_sessions().await? else {
            return Ok(());
        };
        if sessions.is_empty() {
            self.line("no sessions yet");
        } else {
            self.show_sessions(&sessions);
            self.line(&dim("/load N resumes one"));
        }
        Ok(())
    }

    /// `--resume`: a numbered list of recent sessions; Enter starts a new one.
    pub(super) async fn pick(&mut self) -> Result<bool, Stop> {
        let Some(sessions) = self.recent_sessions().await? else {
            return Ok(false);
        };
        if sessions.is_empty() {
            self.line(&dim("no sessions yet; starting a new one"));
            return self.new_session(false).await;
        }
        self.line("recent sessions:");
        self.show_sessions(&sessions);
        let question = format!("resume which? [1-{}, Enter = new session] ", sessions.len());
        loop {
            let read = tokio::select! {
                read = self.input.read(&question) => read,
                () = self.client.closed() => return Err(Stop::DaemonGone),
            };
            let answer = match read {
                Read::Line(answer) => answer,
                Read::Interrupted | Read::Eof => return Err(Stop::Quit),
            };
            let answer = answer.trim();
            if answer.is_empty() {
                return self.new_session(false).await;
            }
            match answer.parse::<usize>().ok().and_then(|n| n.checked_sub(1)) {
                Some(i) if i < sessions.len() => return self.attach(&sessions[i].session_id).await,
                _ => self.line(&format!(
                    "type a number from 1 to {}, or just Enter",
                    sessions.len()
                )),
            }
        }
    }

    /// The session `/load ARG` means: a number (up to 3 digits) from the last list, when
    /// `numbered`; else an id, or a unique prefix of one (like the short ids shown).
    pub(super) async fn find_session(
        &mut self,
        arg: &str,
        numbered: bool,
    ) -> Result<Option<String>, Stop> {
        if let Some(n) = arg
            .parse::<usize>()
            .ok()
            .filter(|_| numbered && arg.len() <= 3)
        {
            if self.listed.is_empty() && self.recent_sessions().await?.is_none() {
                return Ok(None);
            }
            return Ok(match n.checked_sub(1).and_then(|i| self.listed.get(i)) {
                Some(s) => Some(s.session_id.clone()),
                None => {
                    self.line(&format!(
                        "there is no session {n} in the list; /sessions shows the numbers"
                    ));
                    None
                }
            });
        }
        // The daemon resolves the prefix among every stored session, as for the CLI.
        match self.client.session_resolve(arg).await {
            Ok(id) => Ok(Some(id)),
            Err(CallError::Rpc(e)) if e.code == codes::SESSION_NOT_FOUND => {
                self.line(&format!("no session matches {arg}; /sessions lists them"));
                Ok(None)
            }
            Err(CallError::Rpc(e)) if e.code == codes::INVALID_PARAMS => {
                let candidates: Vec<String> = e
                    .data
                    .as_ref()
                    .and_then(|d| d["candidates"].as_array())
                    .map(|c| {
                        c.iter()
                            .filter_map(|v| v.as_str())
                            .map(|id| short(id).to_owned())
                            .collect()
                    })
                    .unwrap_or_default();
                if candidates.is_empty() {
                    self.line(&format!(
                        "{arg} is too short: type at least {MIN_ID_PREFIX} characters of the id"
                    ));
                } else {
                    self.line(&format!(
                        "{arg} matches {} sessions ({}); type more of the id",
                        candidates.len(),
                        candidates.join(", ")
                    ));
                }
                Ok(None)
            }
            Err(e) => {
                self.failed("cannot find the session", &e)?;
                Ok(None)
            }
        }
    }

    /// Loads a session with its history replayed (compactly) and works in it from now on.
    pub(super) async fn attach(&mut self, id: &str) -> Result<bool, Stop> {
        let mut events = self.client.subscribe(id);
        let summary = match self.client.session_load(id, true).await {
            Ok(summary) => summary,
            Err(e) => {
                self.failed(&format!("cannot load session {id}"), &e)?;
                return Ok(false);
            }
        };
        // The replay arrives before the answer, so it is all queued by now.
        let mut pending = Vec::new();
        loop {
            match events.try_recv() {
                Ok(event) => match (&event.update, tagged(&event)) {
                    (Update::ApprovalRequest { .. }, _) => pending.push(event),
                    // A running subagent's live event (a replay carries none): counted
                    // under its `task` call, as the followed turn goes on to show.
                    (update, Some(subagent)) => self.screen().subagent(&subagent, update),
                    (update, None) => self.screen().replay(update),
                },
                Err(broadcast::error::TryRecvError::Lagged(n)) => {
                    self.line(&dim(&format!("… {n} earlier messages not shown")));
                }
                Err(_) => break,
            }
        }
        self.screen().end_line();
        self.enter(Current {
            id: summary.session_id.clone(),
            cwd: summary.cwd.clone(),
            model: summary.model.clone(),
            titled: summary.title.is_some(),
            sandbox: summary.sandbox,
            mode: summary.mode,
        });
        self.load_usage().await;
        if let Some(parent) = &summary.parent_session_id {
            self.line(&dim(&format!(
                "a subagent's session: a `task` call of session {} made it (/load {} goes back)",
                short(parent),
                short(parent)
            )));
        }
        self.running = (summary.running || summary.turn_id.is_some())
            .then(|| self.client.follow(&summary.session_id, events, pending));
        Ok(true)
    }
}

/// The subagent a live event comes from, when it is one's (docs/protocol.md §13a).
fn tagged(event: &zeroclaw_client::SessionUpdate) -> Option<zeroclaw_client::Subagent> {
    event
        .parent_tool_call_id
        .as_ref()
        .map(|id| zeroclaw_client::Subagent {
            parent_tool_call_id: id.to_string(),
            child_session_id: event.child_session_id.as_ref().map(|c| c.to_string()),
        })
}
