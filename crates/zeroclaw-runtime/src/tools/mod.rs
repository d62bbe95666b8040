//! The built-in tools the model can call.
//!
//! [`definitions`] is what the model sees (names, descriptions, JSON Schemas);
//! [`run`] executes one call. `ask_user` is only *described* here: answering it needs
//! the client connection, so the turn loop handles it itself and [`run`] refuses it.
//!
//! Every failure a model can cause (bad arguments, missing files, non-zero exits,
//! time-outs) comes back as a [`ToolOutput`] with `is_error = true`, never as a Rust
//! error: the text is meant to be shown to the model so it can correct itself.

mod bash;
mod files;
pub mod orphans;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

/// One tool as presented to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDef {
    pub name: &'static str,
    pub description: &'static str,
    /// A JSON Schema object (`"type": "object"`) for the call's arguments.
    pub input_schema: Value,
    /// True if the tool never changes anything (safe to run without confirmation).
    pub read_only: bool,
}

/// All tools, in a fixed order: bash, read_file, write_file, edit_file, list_dir, ask_user.
pub fn definitions() -> Vec<ToolDef> {
    vec![
        ToolDef {
            name: "bash",
            description: "Run a shell command with `bash -c` in the session's working directory and \
                return its output. stdin is empty (/dev/null), so interactive programs will not \
                work; pass flags such as `--yes` or `--no-pager` instead. stdout and stderr are \
                both captured; the result ends with `[exit code N]`. Long output keeps only its \
                beginning and end. The command and everything it starts are killed when the time \
                limit expires. Background processes (`cmd &`) may keep running after the command \
                exits, but their later output is not captured.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "command": {
                        "type": "string",
                        "description": "The command line to run, e.g. `cargo test 2>&1 | tail -50`. \
                            Runs in the working directory; use `cd dir && ...` to run elsewhere."
                    },
                    "timeout_secs": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "Time limit in seconds (default 120, at most 600). The whole \
                            process group is killed when it expires."
                    }
                },
                "required": ["command"],
                "additionalProperties": false
            }),
            read_only: false,
        },
        ToolDef {
            name: "read_file",
            description: "Read a UTF-8 text file and return its contents exactly (no line numbers \
                are added). Very large files are cut off, with a note saying how much was left \
                out; use bash (e.g. `sed -n 100,200p FILE`) to read a specific part of them.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "File path, relative to the working directory unless absolute."
                    }
                },
                "required": ["path"],
                "additionalProperties": false
            }),
            read_only: true,
        },
        ToolDef {
            name: "write_file",
            description: "Create or overwrite a file with the given content. Missing parent \
                directories are created. The write is atomic (the file is either fully replaced \
                or left untouched) and an existing file keeps its permissions. Prefer edit_file \
                for small changes to an existing file.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "File path, relative to the working directory unless absolute."
                    },
                    "content": {
                        "type": "string",
                        "description": "The complete new content of the file."
                    }
                },
                "required": ["path", "content"],
                "additionalProperties": false
            }),
            read_only: false,
        },
        ToolDef {
            name: "edit_file",
            description: "Replace one exact occurrence of `old_text` in a text file with \
                `new_text`. `old_text` must match the file byte for byte (including whitespace \
                and indentation) and must occur exactly once; include enough surrounding lines \
                to make it unique. To delete text, pass an empty `new_text`. The write is atomic.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "File path, relative to the working directory unless absolute."
                    },
                    "old_text": {
                        "type": "string",
                        "description": "The exact text to replace; must be non-empty and occur exactly once."
                    },
                    "new_text": {
                        "type": "string",
                        "description": "The replacement text."
                    }
                },
                "required": ["path", "old_text", "new_text"],
                "additionalProperties": false
            }),
            read_only: false,
        },
        ToolDef {
            name: "list_dir",
            description: "List a directory's entries, sorted by name: subdirectories end with \
                `/`, files show their size in bytes, symbolic links show their target. Not \
                recursive; use bash (e.g. `find` or `git ls-files`) for trees.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "Directory path, relative to the working directory unless \
                            absolute; `.` is the working directory itself."
                    }
                },
                "required": ["path"],
                "additionalProperties": false
            }),
            read_only: true,
        },
        ToolDef {
            name: "ask_user",
            description: "Ask the person at the client a question and wait for their answer, \
                which is returned as the result. Use it when a decision is genuinely theirs \
                (ambiguous requirements, destructive actions, choosing between options), not \
                for things you can find out yourself.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "question": {
                        "type": "string",
                        "description": "The question, phrased so it can be answered without further context."
                    },
                    "choices": {
                        "type": "array",
                        "items": { "type": "string" },
                        "description": "Optional answers to offer; the person may still answer freely."
                    }
                },
                "required": ["question"],
                "additionalProperties": false
            }),
            read_only: true,
        },
    ]
}

/// The definition of the tool called `name`, if there is one.
pub fn find(name: &str) -> Option<ToolDef> {
    definitions().into_iter().find(|d| d.name == name)
}

/// The result of one tool call, as shown to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub text: String,
    pub is_error: bool,
}

impl ToolOutput {
    /// A successful result.
    pub fn ok(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: false,
        }
    }

    /// A failed result; `text` explains what went wrong.
    pub fn error(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: true,
        }
    }
}

/// Size and time limits for tool calls.
#[derive(Debug, Clone)]
pub struct ToolLimits {
    /// Maximum captured bash output (stdout + stderr), head and tail kept. Default 32 KiB.
    pub output_limit_bytes: usize,
    /// bash time limit when the call gives none. Default 120 s.
    pub bash_default_timeout: Duration,
    /// Upper bound for a requested bash time limit. Default 600 s.
    pub bash_max_timeout: Duration,
    /// Maximum bytes of a file returned by read_file. Default 256 KiB.
    pub read_limit_bytes: usize,
    /// Maximum entries returned by list_dir. Default 1000.
    pub list_limit: usize,
}

impl Default for ToolLimits {
    fn default() -> Self {
        Self {
            output_limit_bytes: 32 * 1024,
            bash_default_timeout: Duration::from_secs(120),
            bash_max_timeout: Duration::from_secs(600),
            read_limit_bytes: 256 * 1024,
            list_limit: 1000,
        }
    }
}

/// What a tool call runs against.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// Working directory: bash runs here and relative paths are resolved against it.
    pub cwd: PathBuf,
    /// Cancelling it stops a running bash command (its process group is killed).
    pub cancel: CancellationToken,
    pub limits: ToolLimits,
    /// Where running bash process groups are recorded (`orphans.rs`); `None` records none.
    pub process_records: Option<PathBuf>,
}

/// Runs one of bash/read_file/write_file/edit_file/list_dir. ask_user is NOT run here
/// (the turn loop does it, because it needs the client connection): run() returns an
/// error ToolOutput for it and for unknown names.
pub async fn run(name: &str, args: &Value, ctx: &ToolContext) -> ToolOutput {
    if ctx.cancel.is_cancelled() {
        return ToolOutput::error(format!("{name}: cancelled before it started"));
    }
    match name {
        "bash" => bash::run(args, ctx).await,
        "read_file" => files::read_file(args, ctx).await,
        "write_file" => files::write_file(args, ctx).await,
        "edit_file" => files::edit_file(args, ctx).await,
        "list_dir" => files::list_dir(args, ctx).await,
        "ask_user" => ToolOutput::error(
            "ask_user is answered by the client, not executed by the tool runner (internal error)",
        ),
        other => {
            let names: Vec<&str> = definitions().iter().map(|d| d.name).collect();
            ToolOutput::error(format!(
                "unknown tool `{other}`; available tools: {}",
                names.join(", ")
            ))
        }
    }
}

/// Checked access to a call's arguments; every error is a message for the model.
pub(crate) struct Args<'a> {
    tool: &'static str,
    map: &'a Map<String, Value>,
}

impl<'a> Args<'a> {
    /// `args` must be a JSON object whose keys are all in `allowed`.
    pub(crate) fn new(
        tool: &'static str,
        args: &'a Value,
        allowed: &[&str],
    ) -> Result<Self, ToolOutput> {
        let Some(map) = args.as_object() else {
            return Err(ToolOutput::error(format!(
                "invalid arguments for {tool}: expected a JSON object, got {}",
                type_name(args)
            )));
        };
        if let Some(unknown) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(ToolOutput::error(format!(
                "invalid arguments for {tool}: unknown argument `{unknown}` (allowed: {})",
                allowed.join(", ")
            )));
        }
        Ok(Self { tool, map })
    }

    fn invalid(&self, msg: String) -> ToolOutput {
        ToolOutput::error(format!("invalid arguments for {}: {msg}", self.tool))
    }

    pub(crate) fn string(&self, key: &str) -> Result<&'a str, ToolOutput> {
        match self.map.get(key) {
            None | Some(Value::Null) => {
                Err(self.invalid(format!("missing required string argument `{key}`")))
            }
            Some(Value::String(s)) => Ok(s),
            Some(other) => Err(self.invalid(format!(
                "`{key}` must be a string, got {}",
                type_name(other)
            ))),
        }
    }

    /// A required, non-empty path argument.
    pub(crate) fn path(&self, key: &str) -> Result<&'a str, ToolOutput> {
        let s = self.string(key)?;
        if s.is_empty() {
            return Err(self.invalid(format!("`{key}` must not be empty")));
        }
        Ok(s)
    }

    /// An optional non-negative integer (absent or null → None).
    pub(crate) fn opt_u64(&self, key: &str) -> Result<Option<u64>, ToolOutput> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => match n.as_u64() {
                Some(v) => Ok(Some(v)),
                None => {
                    Err(self.invalid(format!("`{key}` must be a non-negative integer, got {n}")))
                }
            },
            Some(other) => Err(self.invalid(format!(
                "`{key}` must be an integer, got {}",
                type_name(other)
            ))),
        }
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `path` relative to `cwd` unless it is absolute.
pub(crate) fn resolve(cwd: &Path, path: &str) -> PathBuf {
    let p = Path::new(path);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

/// `bytes` as text: valid UTF-8 as is, otherwise decoded lossily. Returns whether it was lossy.
pub(crate) fn lossy_utf8(bytes: Vec<u8>) -> (String, bool) {
    match String::from_utf8(bytes) {
        Ok(s) => (s, false),
        Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), true),
    }
}

/// The longest prefix of `bytes` that does not end in the middle of a UTF-8 sequence.
/// (Only an incomplete sequence at the very end is dropped; invalid bytes elsewhere stay.)
pub(crate) fn utf8_head(bytes: &[u8]) -> &[u8] {
    // A sequence is at most 4 bytes: look at the last up-to-3 bytes for an unfinished lead.
    let len = bytes.len();
    for back in 1..=len.min(3) {
        let b = bytes[len - back];
        if b & 0b1100_0000 == 0b1000_0000 {
            continue; // continuation byte; keep looking for its lead
        }
        let need = if b & 0b1110_0000 == 0b1100_0000 {
            2
        } else if b & 0b1111_0000 == 0b1110_0000 {
            3
        } else if b & 0b1111_1000 == 0b1111_0000 {
            4
        } else {
            1
        };
        return if need > back {
            &bytes[..len - back]
        } else {
            bytes
        };
    }
    bytes
}

/// `bytes` without leading UTF-8 continuation bytes (at most 3), so a tail cut out of
/// the middle of a text starts on a character boundary.
pub(crate) fn utf8_tail(bytes: &[u8]) -> &[u8] {
    let skip = bytes
        .iter()
        .take(3)
        .take_while(|b| *b & 0b1100_0000 == 0b1000_0000)
        .count();
    &bytes[skip..]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> ToolContext {
        ToolContext {
            cwd: std::env::temp_dir(),
            cancel: CancellationToken::new(),
            limits: ToolLimits::default(),
            process_records: None,
        }
    }

    #[test]
    fn definitions_are_complete_and_ordered() {
        let defs = definitions();
        let names: Vec<&str> = defs.iter().map(|d| d.name).collect();
        assert_eq!(
            names,
            [
                "bash",
                "read_file",
                "write_file",
                "edit_file",
                "list_dir",
                "ask_user"
            ]
        );
        for d in &defs {
            let s = &d.input_schema;
            assert_eq!(s["type"], "object", "{}", d.name);
            assert_eq!(s["additionalProperties"], false, "{}", d.name);
            let props = s["properties"].as_object().map(|p| p.len()).unwrap_or(0);
            assert!(props > 0, "{}", d.name);
            for r in s["required"].as_array().into_iter().flatten() {
                let r = r.as_str().unwrap_or("");
                assert!(s["properties"].get(r).is_some(), "{}: {r}", d.name);
            }
            assert!(!d.description.is_empty());
        }
        let req = |n: &str| find(n).map(|d| d.input_schema["required"].clone());
        assert_eq!(req("bash"), Some(json!(["command"])));
        assert_eq!(req("read_file"), Some(json!(["path"])));
        assert_eq!(req("write_file"), Some(json!(["path", "content"])));
        assert_eq!(
            req("edit_file"),
            Some(json!(["path", "old_text", "new_text"]))
        );
        assert_eq!(req("list_dir"), Some(json!(["path"])));
        assert_eq!(req("ask_user"), Some(json!(["question"])));
        let ask = find("ask_user").map(|d| d.input_schema);
        assert_eq!(
            ask.map(|s| s["properties"]["choices"]["items"]["type"].clone()),
            Some(json!("string"))
        );
        assert_eq!(
            find("bash").map(|d| d.input_schema["properties"]["timeout_secs"]["type"].clone()),
            Some(json!("integer"))
        );
        let ro: Vec<bool> = defs.iter().map(|d| d.read_only).collect();
        assert_eq!(ro, [false, true, false, false, true, true]);
        assert!(find("nope").is_none());
    }

    #[test]
    fn limits_default() {
        let l = ToolLimits::default();
        assert_eq!(l.output_limit_bytes, 32 * 1024);
        assert_eq!(l.bash_default_timeout, Duration::from_secs(120));
        assert_eq!(l.bash_max_timeout, Duration::from_secs(600));
        assert_eq!(l.read_limit_bytes, 256 * 1024);
        assert_eq!(l.list_limit, 1000);
    }

    #[tokio::test]
    async fn run_refuses_ask_user_and_unknown_tools() {
        let c = ctx();
        let out = run("ask_user", &json!({"question": "?"}), &c).await;
        assert!(out.is_error);
        assert!(out.text.contains("ask_user"), "{}", out.text);
        let out = run("frobnicate", &json!({}), &c).await;
        assert!(out.is_error);
        assert!(
            out.text.contains("unknown tool `frobnicate`"),
            "{}",
            out.text
        );
    }

    #[tokio::test]
    async fn run_refuses_when_already_cancelled() {
        let c = ctx();
        c.cancel.cancel();
        let out = run("list_dir", &json!({"path": "."}), &c).await;
        assert!(out.is_error);
        assert!(out.text.contains("cancelled"), "{}", out.text);
    }

    #[tokio::test]
    async fn invalid_arguments_are_reported() {
        let c = ctx();
        let out = run("read_file", &json!("x"), &c).await;
        assert!(
            out.is_error && out.text.contains("expected a JSON object"),
            "{}",
            out.text
        );
        let out = run("read_file", &json!({}), &c).await;
        assert!(out.is_error && out.text.contains("missing required string argument `path`"));
        let out = run("read_file", &json!({"path": 3}), &c).await;
        assert!(out.is_error && out.text.contains("`path` must be a string, got a number"));
        let out = run("read_file", &json!({"path": ""}), &c).await;
        assert!(out.is_error && out.text.contains("must not be empty"));
        let out = run("read_file", &json!({"path": "a", "x": 1}), &c).await;
        assert!(
            out.is_error && out.text.contains("unknown argument `x`"),
            "{}",
            out.text
        );
    }

    #[test]
    fn utf8_boundaries() {
        let s = "aé€😀".as_bytes(); // 1 + 2 + 3 + 4 bytes
        for cut in 0..=s.len() {
            let h = utf8_head(&s[..cut]);
            assert!(std::str::from_utf8(h).is_ok(), "head {cut}");
            assert!(cut - h.len() < 4);
            let t = utf8_tail(&s[cut..]);
            assert!(std::str::from_utf8(t).is_ok(), "tail {cut}");
        }
        assert_eq!(utf8_head(b"ab\xff"), b"ab\xff"); // invalid, not incomplete: kept
        assert_eq!(utf8_head("é".as_bytes()), "é".as_bytes());
    }
}
