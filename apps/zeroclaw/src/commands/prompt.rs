//! `zeroclaw prompt TEXT`: one turn, streamed.

use super::describe_call_error;
use super::sessions::fold;
use crate::ApproveMode;
use crate::terminal::{self, dim};
use serde_json::{Value, json};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use zeroclaw_client::keys::Key;
use zeroclaw_client::{
    CallResult, Client, ClientOptions, Decision, ElicitationHandler, ElicitationRequest,
    ElicitationResponse, NewSession, PromptResult, StopReason, TurnEvent, Update,
};
use zeroclaw_ipc::Paths;
use zeroclaw_rpc::BoxFuture;

/// Exit statuses, so scripts can tell how the turn ended.
pub const EXIT_END_TURN: u8 = 0;
pub const EXIT_MAX_TURNS: u8 = 3;
pub const EXIT_BUDGET: u8 = 4;
pub const EXIT_CANCELLED: u8 = 130;

/// What to send: a prompt as given, or a custom command's, expanded by the daemon once the
/// session (and so its project) is known.
pub enum Input {
    Text(String),
    /// The command's name, and its arguments as one string (words with spaces or quotes
    /// quoted again, so `$1`, `$2` are the words the shell gave us).
    Command(String, String),
}

impl Input {
    pub fn new(text: Vec<String>, command: Option<String>) -> Self {
        match command {
            Some(name) => Input::Command(
                name.trim_start_matches('/').to_owned(),
                text.iter().map(|w| quoted(w)).collect::<Vec<_>>().join(" "),
            ),
            None => Input::Text(text.join(" ")),
        }
    }
}

/// `word` as the daemon's splitting reads it back whole.
fn quoted(word: &str) -> String {
    if !word.is_empty() && !word.contains(|c: char| c.is_whitespace() || "\"'\\".contains(c)) {
        return word.to_owned();
    }
    format!("\"{}\"", word.replace('\\', "\\\\").replace('"', "\\\""))
}

/// How the turn runs: who answers its approvals, and the session's permission mode.
pub struct How {
    pub approve: Option<ApproveMode>,
    pub mode: Option<zeroclaw_client::protocol::methods::PermissionMode>,
    /// Image files sent with the prompt (`--image`).
    pub images: Vec<PathBuf>,
}

pub async fn run(
    paths: &Paths,
    input: Input,
    session: Option<String>,
    cwd: Option<PathBuf>,
    how: How,
) -> Result<u8, String> {
    let How {
        approve,
        mode,
        images,
    } = how;
    // Read before anything starts, so a bad file costs no session.
    let content = images
        .iter()
        .map(|path| zeroclaw_client::image_block(path).map_err(|e| format!("--image {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let from_stdin = matches!(&input, Input::Text(text) if text == "-");
    let input = match input {
        Input::Text(_) if from_stdin => Input::Text(read_stdin().await?),
        input => input,
    };
    if let Input::Text(prompt) = &input
        && prompt.trim().is_empty()
    {
        return Err("the prompt is empty".into());
    }
    // Questions go to the terminal on stdin, which is not there when the prompt came from it.
    let interactive = terminal::stdin_is_terminal() && !from_stdin;
    let approve = approve.unwrap_or(if interactive {
        ApproveMode::Ask
    } else {
        ApproveMode::None
    });
    if approve == ApproveMode::Ask && !interactive {
        return Err(
            "--approve ask needs a terminal on stdin; use --approve all or --approve none".into(),
        );
    }
    let options = ClientOptions {
        name: "zeroclaw-cli".into(),
        elicitation: interactive
            .then(|| Arc::new(TerminalElicitation) as Arc<dyn ElicitationHandler>),
        ..ClientOptions::default()
    };
    let remote = super::remote().is_some();
    let client = if remote {
        super::connect_with(paths, options).await?
    } else {
        zeroclaw_client::connect_or_start(paths, options)
            .await
            .map_err(|e| e.to_string())?
    };
    let session_id = match session {
        Some(id) => {
            let id = super::resolve_session(&client, &id).await?;
            client
                .session_load(&id, false)
                .await
                .map_err(|e| describe_call_error(&e))?;
            id
        }
        None => {
            let cwd = match cwd {
                // The daemon's machine names the path as it is.
                Some(dir) if remote => Some(dir),
                Some(dir) => Some(
                    std::path::absolute(&dir)
                        .map_err(|e| format!("bad --cwd {}: {e}", dir.display()))?,
                ),
                // A remote daemon's default is its own working directory: ours means nothing there.
                None if remote => None,
                None => Some(
                    std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?,
                ),
            };
            let title = match &input {
                Input::Text(prompt) => zeroclaw_client::title_from_prompt(prompt),
                Input::Command(name, args) => {
                    zeroclaw_client::title_from_prompt(&format!("/{name} {args}"))
                }
            };
            client
                .session_new(NewSession {
                    cwd: cwd.map(|dir| dir.to_string_lossy().into_owned()),
                    title: Some(title),
                    model: None,
                    mcp_servers: Vec::new(),
                    sandbox: None,
                })
                .await
                .map_err(|e| describe_call_error(&e))?
                .session_id
        }
    };
    if let Some(mode) = mode {
        client
            .session_set_mode(&session_id, mode)
            .await
            .map_err(|e| {
                format!(
                    "cannot set the mode {}: {}",
                    mode.as_str(),
                    describe_call_error(&e)
                )
            })?;
    }
    let prompt = match input {
        Input::Text(prompt) => prompt,
        Input::Command(name, args) => client
            .commands_expand(&session_id, &name, &args)
            .await
            .map_err(|e| describe_call_error(&e))?,
    };
    let outcome = stream_turn(&client, &session_id, &prompt, content, approve).await;
    eprintln!("{}", dim(&format!("session {session_id}")));
    outcome
}

async fn read_stdin() -> Result<String, String> {
    tokio::task::spawn_blocking(|| {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text).map(|_| text)
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(|e| format!("cannot read the prompt from stdin: {e}"))
}

async fn stream_turn(
    client: &Client,
    session_id: &str,
    prompt: &str,
    content: Vec<zeroclaw_client::protocol::ContentBlock>,
    approve: ApproveMode,
) -> Result<u8, String> {
    let mut turn = client.turn_with(session_id, prompt, content);
    let mut screen = Screen::default();
    let mut interrupts = 0;
    // Events read while an approval question waited, shown next in order.
    let mut held = std::collections::VecDeque::new();
    loop {
        let next = async {
            match held.pop_front() {
                Some(event) => Some(event),
                None => turn.next().await,
            }
        };
        tokio::select! {
            Some(event) = next => match event {
                TurnEvent::Update(update) => screen.show(&update),
                TurnEvent::Approval(request) => {
                    screen.end_lines();
                    // Answered elsewhere (another client, a timeout, a cancellation): the
                    // question stops waiting at once.
                    let decision = tokio::select! {
                        decision = decide(approve, &request.name, &request.raw_input) => Some(decision),
                        (by, decision) = turn.resolved(&request.request_id, &mut held) => {
                            eprintln!("\n{}", dim(&resolved_elsewhere(by, decision)));
                            None
                        }
                    };
                    if let Some(decision) = decision
                        && let Err(e) = request.answer(decision).await
                    {
                        eprintln!("zeroclaw: could not answer the approval: {}", describe_call_error(&e));
                    }
                }
                TurnEvent::Lagged(n) => {
                    eprintln!("zeroclaw: {n} events were missed (the terminal could not keep up)");
                }
                TurnEvent::Done(result) => {
                    screen.end_lines();
                    return exit_status(result, session_id);
                }
            },
            _ = tokio::signal::ctrl_c() => {
                interrupts += 1;
                if interrupts > 1 {
                    return Ok(EXIT_CANCELLED);
                }
                eprintln!("\n{}", dim("cancelling… (Ctrl-C again to quit now)"));
                let _ = turn.cancel().await;
            }
            () = client.closed() => {
                return Err("the daemon went away during the turn; its history is kept, run `zeroclaw sessions` after restarting it".into());
            }
        }
    }
}

/// What an approval question settled elsewhere says as it is withdrawn.
fn resolved_elsewhere(
    by: zeroclaw_client::protocol::events::ResolvedBy,
    decision: Decision,
) -> String {
    use zeroclaw_client::protocol::events::ResolvedBy;
    match by {
        ResolvedBy::Client => format!("answered by another client: {}", decision.as_str()),
        ResolvedBy::Timeout => "nobody answered in time: refused".into(),
        ResolvedBy::Cancelled => "the turn was cancelled: refused".into(),
    }
}

/// The exit status for how the turn ended.
fn exit_status(result: CallResult<PromptResult>, session_id: &str) -> Result<u8, String> {
    let result = result.map_err(|e| describe_call_error(&e))?;
    Ok(match result.stop_reason {
        StopReason::EndTurn => EXIT_END_TURN,
        StopReason::MaxTurns => {
            eprintln!(
                "zeroclaw: the agent stopped at agent.max_steps; continue with --session {session_id}"
            );
            EXIT_MAX_TURNS
        }
        StopReason::Budget => {
            let why = result
                .budget
                .map(|b| format!(" {} ({})", b.limit, b.used))
                .unwrap_or_default();
            eprintln!(
                "zeroclaw: the agent stopped at its budget{why}; continue with --session {session_id}"
            );
            EXIT_BUDGET
        }
        StopReason::Cancelled => {
            eprintln!("zeroclaw: turn cancelled");
            EXIT_CANCELLED
        }
        // A failed turn answers an error, never this result; kept total.
        StopReason::Error => 1,
    })
}

/// Where the last text went and whether its line is still open, so a tool line or an
/// answer chunk never starts in the middle of a thought (and the other way round).
#[derive(Default)]
struct Screen {
    answer_open: bool,
    thought_open: bool,
}

impl Screen {
    fn end_lines(&mut self) {
        if self.answer_open {
            println!();
            self.answer_open = false;
        }
        if self.thought_open {
            eprintln!();
            self.thought_open = false;
        }
    }

    fn show(&mut self, update: &Update) {
        match update {
            Update::AgentMessageChunk { text } => {
                if self.thought_open {
                    eprintln!();
                    self.thought_open = false;
                }
                let mut out = std::io::stdout();
                let _ = out.write_all(text.as_bytes());
                let _ = out.flush();
                self.answer_open = !text.ends_with('\n');
            }
            Update::AgentThoughtChunk { text } => {
                if self.answer_open {
                    println!();
                    self.answer_open = false;
                }
                eprint!("{}", dim(text));
                self.thought_open = !text.ends_with('\n');
            }
            Update::ToolCall {
                name, raw_input, ..
            } => {
                self.end_lines();
                eprintln!(
                    "{}",
                    dim(&format!("→ {name} {}", describe_input(raw_input)))
                );
            }
            Update::ToolResult {
                raw_output,
                is_error,
                ..
            } => {
                self.end_lines();
                let text = match raw_output {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                let mark = if *is_error { "✗" } else { "←" };
                eprintln!("{}", dim(&format!("{mark} {}", fold(&text, 12))));
            }
            _ => {}
        }
    }
}

fn describe_input(input: &Value) -> String {
    match input.get("command").and_then(Value::as_str) {
        Some(command) => command.to_owned(),
        None => input.to_string(),
    }
}

async fn decide(mode: ApproveMode, name: &str, input: &Value) -> Decision {
    let what = format!("{name} {}", describe_input(input));
    match mode {
        ApproveMode::All => {
            eprintln!("{}", dim(&format!("allowed: {what}")));
            Decision::AllowOnce
        }
        ApproveMode::None => {
            eprintln!("{}", dim(&format!("rejected (--approve none): {what}")));
            Decision::Reject
        }
        ApproveMode::Ask => loop {
            let question =
                format!("Allow {what}? [y]es / [n]o / [a]lways for {name} / [?] the whole call: ");
            // One key on a terminal, as coding agents ask; a line when there is none.
            let Some(key) = terminal::ask_key(&question).await else {
                match line_answer(&question, name, input).await {
                    Some(decision) => break decision,
                    None => continue,
                }
            };
            let (decision, said) = match key {
                Key::Char('y' | 'Y') => (Decision::AllowOnce, "yes"),
                Key::Char('a' | 'A') => (Decision::AllowAlways, "always"),
                Key::Char('n' | 'N') | Key::Esc | Key::CtrlC | Key::CtrlD => {
                    (Decision::Reject, "no")
                }
                Key::Char('?') => {
                    eprintln!("?\n{name} {}", super::pretty(input));
                    continue;
                }
                _ => {
                    eprintln!();
                    eprintln!("press y, n, a or ?");
                    continue;
                }
            };
            eprintln!("{said}");
            break decision;
        },
    }
}

/// The approval answered as a line (`y`, `n`, `a`, `?`); `None` to ask again.
async fn line_answer(question: &str, name: &str, input: &Value) -> Option<Decision> {
    let answer = terminal::ask(question).await;
    match answer.as_deref().map(str::trim) {
        Some("y" | "Y" | "yes") => Some(Decision::AllowOnce),
        Some("a" | "A" | "always") => Some(Decision::AllowAlways),
        Some("n" | "N" | "no") | None => Some(Decision::Reject),
        Some("?") => {
            eprintln!("{name} {}", super::pretty(input));
            None
        }
        Some(_) => {
            eprintln!("answer y, n, a or ?");
            None
        }
    }
}

/// Answers `ask_user` questions on the terminal.
struct TerminalElicitation;

impl ElicitationHandler for TerminalElicitation {
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<ElicitationResponse> {
        Box::pin(async move {
            eprintln!("\n{}", request.message);
            let choices: Vec<String> = request
                .requested_schema
                .as_ref()
                .and_then(|s| s.pointer("/properties/answer/enum"))
                .and_then(Value::as_array)
                .map(|c| {
                    c.iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            for (i, choice) in choices.iter().enumerate() {
                eprintln!("  {}) {choice}", i + 1);
            }
            let Some(line) = terminal::ask("answer (empty to decline): ").await else {
                return ElicitationResponse::cancel();
            };
            let line = line.trim();
            if line.is_empty() {
                return ElicitationResponse::decline();
            }
            let answer = line
                .parse::<usize>()
                .ok()
                .and_then(|n| choices.get(n.wrapping_sub(1)).cloned())
                .unwrap_or_else(|| line.to_owned());
            ElicitationResponse::accept(json!({ "answer": answer }))
        })
    }
}
