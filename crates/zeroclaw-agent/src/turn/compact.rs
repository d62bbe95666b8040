//! Compaction: older messages of a session folded into a summary the model writes, which
//! the model is then sent in their place.
//!
//! Nothing stored is rewritten or removed: the summary is one more message (kind
//! `summary`, `data: {upTo, folded}`), replayed as a `context_compacted` event, and
//! `history::conversation` reads it. A turn compacts before a model call whose request
//! would pass `agent.compact_at_percent` of the context window, and once more, forced, when
//! the provider refuses a request as too long; `session/compact` compacts on demand.
//!
//! What is folded: whole turns, oldest first, never the last one (a running turn's calls
//! and results must stay paired). Automatic compaction keeps the newest turns that fit in
//! [`KEEP_PERCENT`] of the window verbatim; a forced one keeps only the last turn. The
//! summary is written a piece at a time when the folded part is longer than the model can
//! read at once: each piece updates the summary so far.
//!
//! Each summarising call is a model call like a step's: its usage, priced by the provider
//! that answered, is handed back for the turn to count (`usage.rs`: its totals, budgets and
//! `usage_update` events); its retries and fallbacks are told as a step's are, and kept in
//! an unattended run's record.

use super::hooks::Fire;
use super::meter::call_usage;
use super::{Env, ProviderLog};
use crate::history::{self, head_and_tail};
use crate::project::hooks::HookEvent;
use crate::provider::chain::{self, Hop};
use crate::provider::window::{Calibration, tokens_of};
use crate::provider::{ChatMessage, ChatRequest, Delta, ProviderError, Retry, StepResult};
use crate::session::Session;
use crate::store::{MessageKind, MessageRow, NewMessage, StoreError};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use zeroclaw_protocol::{Update, UsageTotals};

/// The share of the window an automatic compaction keeps verbatim, in percent.
pub const KEEP_PERCENT: u64 = 25;
/// The share of the window one summarising request may fill with conversation, in percent.
const PIECE_PERCENT: u64 = 45;
/// How much of one tool call's arguments or output the summariser reads: head and tail.
const TOOL_EXCERPT: usize = 2048;
/// How much of one prompt or answer the summariser reads: head and tail.
const TEXT_EXCERPT: usize = 16 * 1024;

const INSTRUCTIONS: &str = "You compact the conversation of a coding agent so it can go on \
     within its context window. Write a summary that lets the agent continue the work \
     without the original messages: the user's goals and requests, decisions made, files \
     and commands involved with their relevant results, errors met, and what remains to be \
     done. Keep names, paths and numbers exact. Answer with the summary only.";

/// How much to keep verbatim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Before a model call near the window: keep the newest turns that fit in
    /// [`KEEP_PERCENT`] of it.
    Auto,
    /// On demand, or after the provider refused a request as too long: keep only the last
    /// turn.
    Forced,
}

/// A summary written.
#[derive(Debug, Clone)]
pub struct Compacted {
    pub summary: String,
    /// Every message the summary stands for (those of the summary it replaces included).
    pub folded: u64,
}

#[derive(Debug)]
pub enum CompactError {
    Provider(ProviderError),
    Storage(StoreError),
    Cancelled,
}

/// What one compaction works with.
pub struct Compaction<'a> {
    pub env: Env<'a>,
    pub session: &'a Session,
    /// The model that writes the summary: the turn's, or the session's for `session/compact`.
    pub model: &'a str,
    /// The turn compacting, whose id the summary and its event carry (a stored turn); `None`
    /// for `session/compact`.
    pub turn_id: Option<&'a str>,
    pub cancel: &'a CancellationToken,
    /// The model's context window, in tokens.
    pub window: u64,
    /// An unattended run's record of provider events, where the summary's retries and
    /// fallbacks are kept as a step's are; `None` outside one.
    pub provider_log: Option<&'a ProviderLog>,
}

impl Compaction<'_> {
    /// Folds what `mode` allows into a new summary, stores it and sends its event. `None`
    /// when there is nothing to fold (a session of one turn). Each summarising call's usage
    /// goes into `spent` as it ends, however the compaction ends.
    pub async fn run(
        &self,
        mode: Mode,
        spent: &mut Vec<UsageTotals>,
    ) -> Result<Option<Compacted>, CompactError> {
        let rows = self
            .env
            .store
            .context(&self.session.id)
            .await
            .map_err(CompactError::Storage)?;
        let (previous, up_to, folded_before) = match history::latest_summary(&rows) {
            Some((text, up_to)) => {
                let folded = rows
                    .iter()
                    .rev()
                    .find(|r| r.kind == MessageKind::Summary)
                    .and_then(|r| r.data.as_ref()?.get("folded")?.as_u64())
                    .unwrap_or(0);
                (Some(text.to_owned()), up_to, folded)
            }
            None => (None, 0, 0),
        };
        let open: Vec<&MessageRow> = rows
            .iter()
            .filter(|r| r.kind != MessageKind::Summary && r.id > up_to)
            .collect();
        let calibration = self.session.calibration();
        let fold = &open[..fold_end(&open, mode, self.window, calibration)];
        let Some(last) = fold.last() else {
            return Ok(None);
        };
        self.pre_compact_hooks().await?;
        let summary = self
            .summarise(previous.as_deref(), fold, calibration, spent)
            .await?;
        let folded = folded_before + fold.len() as u64;
        let message = NewMessage {
            turn_id: self.turn_id.map(str::to_owned),
            text: Some(summary.clone()),
            data: Some(json!({ "upTo": last.id, "folded": folded })),
            ..NewMessage::default()
        };
        let row = self
            .env
            .store
            .append(&self.session.id, MessageKind::Summary, message)
            .await
            .map_err(CompactError::Storage)?;
        let update = Update::ContextCompacted {
            summary: summary.as_str().into(),
            messages_folded: folded,
        };
        match self.turn_id {
            Some(turn_id) => self.session.send_stored(turn_id, row, update),
            None => self.session.send_stored_outside_turns(row, update),
        }
        tracing::info!(session = %self.session.id, folded, "context compacted");
        Ok(Some(Compacted { summary, folded }))
    }

    /// The session's `PreCompact` hooks (`hooks.rs`), matched on the trigger: `auto` in a
    /// turn, `manual` for `session/compact`. They cannot stop the compaction: what they say
    /// is shown, not acted on.
    async fn pre_compact_hooks(&self) -> Result<(), CompactError> {
        let trigger = if self.turn_id.is_some() {
            "auto"
        } else {
            "manual"
        };
        let loaded = self.env.project(self.session).await;
        let hooks = loaded.hooks.matching(HookEvent::PreCompact, Some(trigger));
        if hooks.is_empty() {
            return Ok(());
        }
        let fire = Fire {
            env: self.env,
            session: self.session,
            turn_id: self.turn_id,
            step: 0,
            project_root: &loaded.project.root,
            event: HookEvent::PreCompact,
            call: None,
        };
        let fields = json!({ "trigger": trigger, "custom_instructions": "" });
        tokio::select! {
            biased;
            () = self.cancel.cancelled() => Err(CompactError::Cancelled),
            ran = fire.run(hooks, fields) => ran.map(|_| ()).map_err(CompactError::Storage),
        }
    }

    /// The model's summary of `previous` and `fold`, written a piece at a time.
    async fn summarise(
        &self,
        previous: Option<&str>,
        fold: &[&MessageRow],
        calibration: Calibration,
        spent: &mut Vec<UsageTotals>,
    ) -> Result<String, CompactError> {
        let piece_tokens = self.window * PIECE_PERCENT / 100;
        let mut summary = previous.unwrap_or_default().to_owned();
        for piece in pieces(&transcript(fold), piece_tokens, calibration) {
            let ask = format!(
                "Summary so far:\n{}\n\nConversation to add to it:\n{piece}\n\nWrite the updated summary.",
                if summary.is_empty() {
                    "(none)"
                } else {
                    &summary
                }
            );
            let written = self.ask_model(ask, calibration, spent).await?;
            // A model that answers nothing still leaves a summary the next model call can
            // use: the piece itself, cut to fit.
            summary = if written.trim().is_empty() {
                format!("{summary}\n{}", head_and_tail(&piece, TEXT_EXCERPT))
            } else {
                written.trim().to_owned()
            };
        }
        Ok(summary)
    }

    async fn ask_model(
        &self,
        ask: String,
        calibration: Calibration,
        spent: &mut Vec<UsageTotals>,
    ) -> Result<String, CompactError> {
        let messages = [ChatMessage::user(ask)];
        let request = ChatRequest {
            model: self.model,
            system: Some(INSTRUCTIONS),
            messages: &messages,
            tools: &[],
        };
        // The summary is never streamed to clients, so each provider of the route may be
        // asked in turn whatever it did (`provider/chain.rs`); its retries and switches are
        // told to the turn's clients and kept for an unattended run's record as in a step.
        let read = async {
            let route = self.env.provider.route(self.model);
            let mut failures = Vec::new();
            for (index, hop) in route.iter().enumerate() {
                let request = ChatRequest {
                    model: hop.model,
                    ..request
                };
                match self.ask_one(hop, &request).await {
                    Ok((text, result)) => {
                        let estimate = calibration.apply(hop.provider.estimate(&request));
                        spent.push(call_usage(hop, estimate, &text, &result));
                        return Ok(text);
                    }
                    Err(error) => {
                        if let Some(next) = route.get(index + 1) {
                            self.provider_event(Update::ProviderFallback {
                                from: hop.label(),
                                to: next.label(),
                                reason: error.reason(),
                            });
                        }
                        failures.push((hop.label(), error));
                    }
                }
            }
            Err(chain::exhausted(failures))
        };
        tokio::select! {
            biased;
            () = self.cancel.cancelled() => Err(CompactError::Cancelled),
            read = read => read.map_err(CompactError::Provider),
        }
    }
}

impl Compaction<'_> {
    /// A `provider_retry` or `provider_fallback` of a summarising call: sent to the turn's
    /// clients and kept for an unattended run's record (`session/compact` has no turn to
    /// tell it in).
    fn provider_event(&self, update: Update<'_>) {
        let Some(turn_id) = self.turn_id else { return };
        if let Some(log) = self.provider_log {
            log.push(&update);
        }
        self.session.broadcast(turn_id, update);
    }

    /// The summary from one provider of the route, and how its call ended.
    async fn ask_one(
        &self,
        hop: &Hop<'_>,
        request: &ChatRequest<'_>,
    ) -> Result<(String, StepResult), ProviderError> {
        let label = hop.label();
        let on_retry = |retry: Retry| {
            self.provider_event(Update::ProviderRetry {
                attempt: retry.attempt,
                delay_ms: u64::try_from(retry.delay.as_millis()).unwrap_or(u64::MAX),
                reason: retry.reason,
                provider: Some(label.clone()),
            });
        };
        let open = hop.provider.open(request, &on_retry).await?;
        let mut text = String::new();
        let mut on_delta = |delta: Delta| {
            if let Delta::Text(t) = delta {
                text.push_str(&t);
            }
        };
        let result = open.read(&mut on_delta, self.session).await?;
        Ok((text, result))
    }
}

/// Where the folded part of `open` ends: at the start of the oldest turn kept verbatim.
fn fold_end(open: &[&MessageRow], mode: Mode, window: u64, calibration: Calibration) -> usize {
    let starts: Vec<usize> = open
        .iter()
        .enumerate()
        .filter(|(_, r)| r.kind == MessageKind::User)
        .map(|(i, _)| i)
        .collect();
    // The last turn always stays (messages before the first prompt belong to no turn and
    // fold with the oldest).
    let Some(&last) = starts.last() else {
        return 0;
    };
    if mode == Mode::Forced {
        return last;
    }
    let budget = window * KEEP_PERCENT / 100;
    let mut kept = calibration.apply(rows_tokens(&open[last..]));
    let mut end = last;
    for &start in starts.iter().rev().skip(1) {
        kept += calibration.apply(rows_tokens(&open[start..end]));
        if kept > budget {
            break;
        }
        end = start;
    }
    end
}

fn rows_tokens(rows: &[&MessageRow]) -> u64 {
    rows.iter()
        .map(|r| {
            let data = r.data.as_ref().map_or(0, |d| match d {
                Value::String(s) => s.len(),
                other => other.to_string().len(),
            });
            tokens_of(r.text.as_ref().map_or(0, String::len) + data) + 4
        })
        .sum()
}

/// The folded messages as lines of text for the summariser; long ones cut to head and tail.
fn transcript(fold: &[&MessageRow]) -> Vec<String> {
    fold.iter()
        .filter_map(|r| {
            let text = || head_and_tail(r.text.as_deref().unwrap_or_default(), TEXT_EXCERPT);
            let data = || match &r.data {
                Some(Value::String(s)) => head_and_tail(s, TOOL_EXCERPT),
                Some(v) => head_and_tail(&v.to_string(), TOOL_EXCERPT),
                None => String::new(),
            };
            let name = r.tool_name.as_deref().unwrap_or_default();
            Some(match r.kind {
                MessageKind::User => format!("User: {}", text()),
                MessageKind::Assistant => format!("Agent: {}", text()),
                MessageKind::ToolCall => format!("Agent called {name} with {}", data()),
                MessageKind::ToolResult if r.is_error => format!("{name} failed: {}", data()),
                MessageKind::ToolResult => format!("{name} returned: {}", data()),
                MessageKind::Thought
                | MessageKind::Summary
                | MessageKind::Error
                | MessageKind::Hook
                | MessageKind::Plan => return None,
            })
        })
        .collect()
}

/// `lines` joined into pieces of at most `tokens` each (a longer line is cut to fit).
fn pieces(lines: &[String], tokens: u64, calibration: Calibration) -> Vec<String> {
    let cost = |text: &str| calibration.apply(tokens_of(text.len()));
    // A line alone may take most of a piece.
    let max_bytes = (calibration.bytes_for(tokens) * 9 / 10).max(1024);
    let mut pieces = Vec::new();
    let mut piece = String::new();
    for line in lines {
        let line = head_and_tail(line, max_bytes);
        if !piece.is_empty() && cost(&piece) + cost(&line) > tokens {
            pieces.push(std::mem::take(&mut piece));
        }
        piece.push_str(&line);
        piece.push('\n');
    }
    if !piece.is_empty() {
        pieces.push(piece);
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(first_id: i64, turn: &str, output: usize) -> Vec<MessageRow> {
        let mut user = MessageRow::bare(first_id, turn, 0, MessageKind::User);
        user.text = Some(format!("prompt {turn}"));
        let mut call = MessageRow::bare(first_id + 1, turn, 1, MessageKind::ToolCall);
        call.tool_name = Some("bash".into());
        call.data = Some(json!({"command": "ls"}));
        let mut result = MessageRow::bare(first_id + 2, turn, 1, MessageKind::ToolResult);
        result.tool_name = Some("bash".into());
        result.data = Some(json!("o".repeat(output)));
        vec![user, call, result]
    }

    #[test]
    fn whole_turns_fold_and_the_newest_that_fit_stay() {
        let rows: Vec<MessageRow> = (0..6)
            .flat_map(|n| turn(n * 3 + 1, &format!("t{n}"), 4000))
            .collect();
        let open: Vec<&MessageRow> = rows.iter().collect();
        let c = Calibration::default();
        // Each turn is ~1,000 tokens; a 10,000-token window keeps 2,500: two turns.
        assert_eq!(fold_end(&open, Mode::Auto, 10_000, c), 12);
        assert_eq!(fold_end(&open, Mode::Forced, 10_000, c), 15);
        // A huge window keeps everything; one turn alone never folds.
        assert_eq!(fold_end(&open, Mode::Auto, 1_000_000, c), 0);
        assert_eq!(fold_end(&open[..3], Mode::Forced, 10_000, c), 0);
    }

    #[test]
    fn the_transcript_is_cut_into_pieces_that_fit() {
        let rows = turn(1, "t", 100_000);
        let open: Vec<&MessageRow> = rows.iter().collect();
        let lines = transcript(&open);
        assert_eq!(lines.len(), 3);
        assert!(lines[2].contains("bytes cut"), "tool outputs are excerpted");
        let many: Vec<String> = (0..100)
            .map(|n| format!("User: {n} {}", "w".repeat(2000)))
            .collect();
        let pieces = pieces(&many, 2000, Calibration::default());
        assert!(pieces.len() > 20, "{}", pieces.len());
        assert!(pieces.iter().all(|p| tokens_of(p.len()) <= 2000));
        assert_eq!(pieces.concat().lines().count(), 100);
    }
}
