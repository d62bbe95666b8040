//! `mcp-test-server [--http [ADDR]]`: a small MCP server on `rmcp`'s server side, for tests.
//!
//! Without `--http` it speaks MCP on stdin/stdout (as a client's child process). With
//! `--http` it serves streamable HTTP on ADDR (default `127.0.0.1:0`, a random port; a
//! test restarting a server names the port it had), prints `http://ADDR/mcp` as its first
//! line on stdout and serves until killed.
//!
//! Its tools:
//!
//! | tool | does |
//! |---|---|
//! | `echo {text}` | returns `text` |
//! | `fail {}` | returns an error result (`isError: true`) "it failed on purpose" |
//! | `hang {}` | never answers (until the client cancels the call) |
//! | `crash {}` | exits the process with status 3 before answering |
//! | `add_tool {name}` | adds a tool `name` (it echoes its arguments), sends `notifications/tools/list_changed` |
//! | `ask {question}` | asks the client (`elicitation/create`, one string `answer`) and returns `answer: …` or `action: …` |
//! | `env {name}` | the value of its environment variable `name`, or `(unset)` |
//! | `header {name}` | (HTTP) the value of the request's header `name`, or `(none)` |
//! | `pid {}` | its process id |
//!
//! With `MCP_TEST_IGNORE_EOF` set, the stdio server keeps running after its stdin closes.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ElicitRequestParams, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{Value, json};

type Error = Box<dyn std::error::Error + Send + Sync>;

#[derive(Clone, Default)]
struct TestServer {
    /// Tools added with `add_tool`, after the fixed ones.
    added: Arc<Mutex<Vec<String>>>,
}

fn tool(name: &str, description: &str, properties: Value, required: &[&str]) -> Value {
    json!({
        "name": name,
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": properties,
            "required": required,
        },
    })
}

fn text(text: impl Into<String>, is_error: bool) -> Result<CallToolResponse, ErrorData> {
    let result: CallToolResult = serde_json::from_value(json!({
        "content": [{"type": "text", "text": text.into()}],
        "isError": is_error,
    }))
    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    Ok(CallToolResponse::Complete(result))
}

fn arg(args: &Value, name: &str) -> String {
    match args.get(name) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

impl TestServer {
    fn tools(&self) -> Vec<Value> {
        let string =
            |name: &str| json!({ name: {"type": "string", "description": format!("the {name}")} });
        let mut tools = vec![
            tool("echo", "Returns its text.", string("text"), &["text"]),
            tool("fail", "Always fails.", json!({}), &[]),
            tool("hang", "Never answers.", json!({}), &[]),
            tool("crash", "Exits the server process.", json!({}), &[]),
            tool(
                "add_tool",
                "Adds a tool and announces the change.",
                string("name"),
                &["name"],
            ),
            tool(
                "ask",
                "Asks the user a question.",
                string("question"),
                &["question"],
            ),
            tool(
                "env",
                "An environment variable's value.",
                string("name"),
                &["name"],
            ),
            tool(
                "header",
                "A request header's value (HTTP).",
                string("name"),
                &["name"],
            ),
            tool("pid", "The server's process id.", json!({}), &[]),
        ];
        let added = self.added.lock().map(|a| a.clone()).unwrap_or_default();
        for name in added {
            tool_push(&mut tools, &name);
        }
        tools
    }
}

fn tool_push(tools: &mut Vec<Value>, name: &str) {
    tools.push(tool(
        name,
        "Added at run time; echoes its arguments.",
        json!({}),
        &[],
    ));
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        ServerConfig::new(capabilities)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        serde_json::from_value(json!({ "tools": self.tools() }))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request
            .arguments
            .map(Value::Object)
            .unwrap_or_else(|| json!({}));
        match request.name.as_ref() {
            "echo" => text(arg(&args, "text"), false),
            "fail" => text("it failed on purpose", true),
            "hang" => {
                context.ct.cancelled().await;
                text("cancelled", true)
            }
            "crash" => std::process::exit(3),
            "add_tool" => {
                let name = arg(&args, "name");
                if let Ok(mut added) = self.added.lock() {
                    added.push(name.clone());
                }
                context
                    .peer
                    .notify_tool_list_changed()
                    .await
                    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                text(format!("added {name}"), false)
            }
            "ask" => {
                let params: ElicitRequestParams = serde_json::from_value(json!({
                    "mode": "form",
                    "message": arg(&args, "question"),
                    "requestedSchema": {
                        "type": "object",
                        "properties": {"answer": {"type": "string"}},
                        "required": ["answer"],
                    },
                }))
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                match context.peer.create_elicitation(params).await {
                    Ok(result) => {
                        let result = serde_json::to_value(&result).unwrap_or(Value::Null);
                        match result.get("action").and_then(Value::as_str) {
                            Some("accept") => text(
                                format!("answer: {}", arg(&result["content"], "answer")),
                                false,
                            ),
                            other => text(format!("action: {}", other.unwrap_or("?")), false),
                        }
                    }
                    Err(e) => text(format!("elicitation failed: {e}"), true),
                }
            }
            "env" => {
                let value = std::env::var(arg(&args, "name"));
                text(value.unwrap_or_else(|_| "(unset)".into()), false)
            }
            "header" => {
                let name = arg(&args, "name");
                let value = context
                    .extensions
                    .get::<http::request::Parts>()
                    .and_then(|parts| parts.headers.get(name.as_str()))
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                text(value.unwrap_or_else(|| "(none)".into()), false)
            }
            "pid" => text(std::process::id().to_string(), false),
            other => {
                let added = self.added.lock().map(|a| a.clone()).unwrap_or_default();
                if added.iter().any(|a| a == other) {
                    text(format!("{other}: {args}"), false)
                } else {
                    Err(ErrorData::invalid_params(format!("no tool {other}"), None))
                }
            }
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let mut args = std::env::args().skip(1);
    if args.next().as_deref() == Some("--http") {
        let addr = args.next().unwrap_or_else(|| "127.0.0.1:0".into());
        return serve_http(&addr).await;
    }
    let running = TestServer::default()
        .serve(rmcp::transport::stdio())
        .await?;
    running.waiting().await?;
    if std::env::var_os("MCP_TEST_IGNORE_EOF").is_some() {
        // Outlives its client, as a careless server would: only a kill ends it.
        std::future::pending::<()>().await;
    }
    Ok(())
}

async fn serve_http(addr: &str) -> Result<(), Error> {
    use hyper_util::rt::TokioIo;
    use hyper_util::service::TowerToHyperService;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
    use std::io::Write;

    let server = TestServer::default();
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "http://{addr}/mcp")?;
        out.flush()?;
    }
    let service = TowerToHyperService::new(service);
    loop {
        let (stream, _) = listener.accept().await?;
        let service = service.clone();
        tokio::spawn(async move {
            let served = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
            if let Err(e) = served {
                eprintln!("mcp-test-server: connection: {e}");
            }
            Ok::<(), Infallible>(())
        });
    }
}
