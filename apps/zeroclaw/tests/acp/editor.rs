//! The editor's side: the ACP crate's client, driving the built `zeroclaw acp` as a child
//! process over its real stdin and stdout, recording what it is sent and answering the
//! agent's requests (permissions, files, questions) the way a test sets.

use crate::common::{HANG_GUARD, TestDir, start_retrying};
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ContentBlock, CreateElicitationRequest, CreateElicitationResponse,
    ElicitationAcceptAction, ElicitationAction, InitializeRequest, InitializeResponse,
    NewSessionRequest, PromptRequest, ReadTextFileRequest, ReadTextFileResponse,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
    SelectedPermissionOutcome, SessionNotification, SessionUpdate, TextContent, ToolCallStatus,
    WriteTextFileRequest, WriteTextFileResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, Error, Lines};
use futures_util::StreamExt;
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::watch;

/// How the editor answers `session/request_permission`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    /// Chooses the option with this id.
    Select(&'static str),
    /// Keeps the request open until [`Editor::cancel_held`] (as an editor does until the
    /// person clicks).
    Hold,
}

/// Everything the agent sent the editor, in order of arrival per kind.
#[derive(Default)]
pub struct Seen {
    pub updates: Vec<SessionNotification>,
    pub permissions: Vec<RequestPermissionRequest>,
    pub reads: Vec<ReadTextFileRequest>,
    pub writes: Vec<WriteTextFileRequest>,
    pub questions: Vec<CreateElicitationRequest>,
    /// Permission requests the agent withdrew (`$/cancel_request`) before they were answered.
    pub withdrawn: usize,
    /// The `usage_update`s, in order (not in `updates`).
    pub usage: Vec<SessionNotification>,
}

impl Seen {
    /// The `sessionUpdate` tag of each update, as on the wire.
    pub fn kinds(&self) -> Vec<String> {
        self.updates.iter().map(|n| kind(&n.update)).collect()
    }

    /// The text of the updates of this kind, concatenated.
    pub fn text_of(&self, wanted: &str) -> String {
        let mut out = String::new();
        for n in &self.updates {
            if kind(&n.update) != wanted {
                continue;
            }
            if let SessionUpdate::AgentMessageChunk(c)
            | SessionUpdate::AgentThoughtChunk(c)
            | SessionUpdate::UserMessageChunk(c) = &n.update
                && let ContentBlock::Text(t) = &c.content
            {
                out.push_str(&t.text);
            }
        }
        out
    }

    /// The updates as JSON, for assertions on their members.
    pub fn json(&self) -> Vec<serde_json::Value> {
        self.updates
            .iter()
            .map(|n| serde_json::to_value(&n.update).unwrap())
            .collect()
    }
}

/// The status of the update at `index`, a `tool_call` or `tool_call_update` (`pending`, the
/// default, is not written on the wire).
impl Seen {
    pub fn status(&self, index: usize) -> Option<ToolCallStatus> {
        match &self.updates[index].update {
            SessionUpdate::ToolCall(call) => Some(call.status),
            SessionUpdate::ToolCallUpdate(update) => update.fields.status,
            _ => None,
        }
    }
}

/// The wire tag of an update.
pub fn kind(update: &SessionUpdate) -> String {
    serde_json::to_value(update).unwrap()["sessionUpdate"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The editor: what it saw, and how it answers.
pub struct Editor {
    seen: Mutex<Seen>,
    changes: watch::Sender<u64>,
    permission: Mutex<Permission>,
    held: Mutex<Vec<Responder<RequestPermissionResponse>>>,
    /// Its open buffers: what `fs/read_text_file` answers, where `fs/write_text_file` goes.
    pub buffers: Mutex<HashMap<PathBuf, String>>,
    /// What it answers a question (`elicitation/create`): the `answer` field.
    pub answer: Mutex<Option<String>>,
}

impl Editor {
    pub fn new(permission: Permission) -> Arc<Self> {
        Arc::new(Self {
            seen: Mutex::new(Seen::default()),
            changes: watch::Sender::new(0),
            permission: Mutex::new(permission),
            held: Mutex::new(Vec::new()),
            buffers: Mutex::new(HashMap::new()),
            answer: Mutex::new(None),
        })
    }

    pub fn seen(&self) -> MutexGuard<'_, Seen> {
        self.seen.lock().unwrap()
    }

    fn record(&self, f: impl FnOnce(&mut Seen)) {
        f(&mut self.seen.lock().unwrap());
        self.changes.send_modify(|n| *n += 1);
    }

    /// Waits (hang-guarded) until what the editor saw satisfies `pred`.
    pub async fn wait(&self, what: &str, pred: impl Fn(&Seen) -> bool) {
        let mut changes = self.changes.subscribe();
        let waiting = async {
            loop {
                if pred(&self.seen()) {
                    return;
                }
                changes.changed().await.unwrap();
            }
        };
        guard(what, waiting).await;
    }

    /// Answers every held permission request `cancelled`, as ACP asks of an editor that
    /// sent `session/cancel`.
    pub fn cancel_held(&self) {
        for responder in self.held.lock().unwrap().drain(..) {
            let _ = responder.respond(RequestPermissionResponse::new(
                RequestPermissionOutcome::Cancelled,
            ));
        }
    }

    fn permission(
        &self,
        request: RequestPermissionRequest,
        responder: Responder<RequestPermissionResponse>,
    ) -> Result<(), Error> {
        let policy = *self.permission.lock().unwrap();
        self.record(|seen| seen.permissions.push(request));
        match policy {
            Permission::Select(id) => responder.respond(RequestPermissionResponse::new(
                RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(id)),
            )),
            Permission::Hold => {
                self.held.lock().unwrap().push(responder);
                Ok(())
            }
        }
    }

    fn read(&self, request: ReadTextFileRequest) -> Result<ReadTextFileResponse, Error> {
        let content = self.buffers.lock().unwrap().get(&request.path).cloned();
        let path = request.path.clone();
        self.record(|seen| seen.reads.push(request));
        content
            .map(ReadTextFileResponse::new)
            .ok_or_else(|| Error::new(-32002, format!("no buffer for {}", path.display())))
    }

    fn write(&self, request: WriteTextFileRequest) -> WriteTextFileResponse {
        self.buffers
            .lock()
            .unwrap()
            .insert(request.path.clone(), request.content.clone());
        self.record(|seen| seen.writes.push(request));
        WriteTextFileResponse::new()
    }

    fn question(&self, request: CreateElicitationRequest) -> CreateElicitationResponse {
        let answer = self.answer.lock().unwrap().clone();
        self.record(|seen| seen.questions.push(request));
        match answer {
            Some(text) => {
                let content: BTreeMap<String, _> =
                    serde_json::from_value(serde_json::json!({ "answer": text })).unwrap();
                CreateElicitationResponse::new(ElicitationAction::Accept(
                    ElicitationAcceptAction::new().content(content),
                ))
            }
            None => CreateElicitationResponse::new(ElicitationAction::Decline),
        }
    }
}

/// Awaits `work` for at most the hang guard.
pub async fn guard<T>(what: &str, work: impl Future<Output = T>) -> T {
    match tokio::time::timeout(HANG_GUARD, work).await {
        Ok(value) => value,
        Err(_) => panic!("timed out waiting for {what}"),
    }
}

/// How a run of `zeroclaw acp` ended.
pub struct Exit<R> {
    /// What the test's editor code returned.
    pub outcome: Result<R, Error>,
    pub status: ExitStatus,
    pub stderr: String,
}

/// Starts `zeroclaw --config-dir <dir>/cfg acp`, connects `editor` to its stdio with the
/// ACP crate's client, runs `main`, then closes the agent's stdin and waits for it to exit.
pub async fn run<R>(
    dir: &TestDir,
    editor: Arc<Editor>,
    main: impl AsyncFnOnce(ConnectionTo<Agent>) -> Result<R, Error>,
) -> Exit<R> {
    let mut command = tokio::process::Command::from(dir.command(&["acp"]));
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let what = format!("{command:?}");
    let mut child = start_retrying(&what, || command.spawn());
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let stderr = tokio::spawn(async move {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text).await;
        text
    });
    // Stdout must hold nothing but protocol messages: a line that is not JSON fails here.
    // ACP_TEST_TRACE=1 prints every line both ways (docs/acp.md's transcript).
    let incoming =
        futures_util::stream::unfold(BufReader::new(stdout).lines(), |mut lines| async move {
            match lines.next_line().await {
                Ok(Some(line)) => {
                    if std::env::var_os("ACP_TEST_TRACE").is_some() {
                        eprintln!("agent → editor: {line}");
                    }
                    assert!(
                        serde_json::from_str::<serde_json::Value>(&line).is_ok(),
                        "not a protocol message on the agent's stdout: {line:?}"
                    );
                    Some((Ok(line), lines))
                }
                Ok(None) => None,
                Err(e) => Some((Err(e), lines)),
            }
        });
    let outgoing = futures_util::sink::unfold(stdin, |mut stdin, line: String| async move {
        if std::env::var_os("ACP_TEST_TRACE").is_some() {
            eprintln!("editor → agent: {line}");
        }
        stdin.write_all(line.as_bytes()).await?;
        stdin.write_all(b"\n").await?;
        stdin.flush().await?;
        Ok::<_, std::io::Error>(stdin)
    });
    let transport = Lines::new(Box::pin(outgoing), incoming.boxed());
    let outcome = Client
        .v1()
        .name("test-editor")
        .on_receive_notification(
            {
                let editor = editor.clone();
                async move |n: SessionNotification, _cx: ConnectionTo<Agent>| {
                    editor.record(|seen| {
                        // The context gauge comes after every model call: kept apart, so the
                        // tests' sequences of what the turn did stay as they are.
                        if matches!(n.update, SessionUpdate::UsageUpdate(_)) {
                            seen.usage.push(n);
                        } else {
                            seen.updates.push(n);
                        }
                    });
                    Ok(())
                }
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            {
                let editor = editor.clone();
                async move |request: RequestPermissionRequest,
                            responder: Responder<RequestPermissionResponse>,
                            _cx: ConnectionTo<Agent>| {
                    // Also wakes when the request is answered: only a withdrawal counts.
                    let cancellation = responder.cancellation();
                    let watcher = editor.clone();
                    tokio::spawn(async move {
                        cancellation.cancelled().await;
                        if cancellation.is_cancelled() {
                            watcher.record(|seen| seen.withdrawn += 1);
                        }
                    });
                    editor.permission(request, responder)
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let editor = editor.clone();
                async move |request: ReadTextFileRequest,
                            responder: Responder<ReadTextFileResponse>,
                            _cx: ConnectionTo<Agent>| {
                    match editor.read(request) {
                        Ok(answer) => responder.respond(answer),
                        Err(e) => responder.respond_with_error(e),
                    }
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let editor = editor.clone();
                async move |request: WriteTextFileRequest,
                            responder: Responder<WriteTextFileResponse>,
                            _cx: ConnectionTo<Agent>| {
                    responder.respond(editor.write(request))
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let editor = editor.clone();
                async move |request: CreateElicitationRequest,
                            responder: Responder<CreateElicitationResponse>,
                            _cx: ConnectionTo<Agent>| {
                    responder.respond(editor.question(request))
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(transport, main)
        .await;
    let status = guard("zeroclaw acp to exit", child.wait()).await.unwrap();
    let stderr = guard("zeroclaw acp's stderr", stderr).await.unwrap();
    Exit {
        outcome,
        status,
        stderr,
    }
}

/// A multi-threaded runtime for one test (the daemon and the fake provider run outside it).
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// `initialize` with these client capabilities.
pub async fn initialize(
    cx: &ConnectionTo<Agent>,
    capabilities: ClientCapabilities,
) -> Result<InitializeResponse, Error> {
    cx.send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(capabilities))
        .block_task()
        .await
}

/// `initialize` with no capabilities, then `session/new` in `cwd`: the session id.
pub async fn open(cx: &ConnectionTo<Agent>, cwd: &Path) -> Result<String, Error> {
    initialize(cx, ClientCapabilities::new()).await?;
    let session = cx
        .send_request(NewSessionRequest::new(cwd))
        .block_task()
        .await?;
    Ok(session.session_id.0.to_string())
}

/// A prompt of one text block.
pub fn text_prompt(session_id: &str, text: &str) -> PromptRequest {
    PromptRequest::new(
        session_id.to_owned(),
        vec![ContentBlock::Text(TextContent::new(text))],
    )
}
