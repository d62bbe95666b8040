//! What the fake provider answers (OpenAI wire format), and what the daemon sent it back.

use serde_json::{Value, json};
use zeroclaw_testkit::{Reply, openai};

/// One call of tool `name` (arguments split across `split` deltas), finish reason
/// `tool_calls`.
pub fn tool_call(id: &str, name: &str, args: Value, split: usize) -> Reply {
    openai::Builder::new()
        .tool_call(0, id, name, &args.to_string(), split)
        .usage(5, 2)
        .build()
}

/// One bash call.
pub fn bash_call(id: &str, command: &str, split: usize) -> Reply {
    tool_call(id, "bash", json!({ "command": command }), split)
}

/// A shell command that creates the empty file `path`: `touch` for bash, `type nul >` for
/// `cmd` (the Windows shell tool).
pub fn touch_command(path: &std::path::Path) -> String {
    if cfg!(windows) {
        format!("type nul > \"{}\"", path.display())
    } else {
        format!("touch {}", path.display())
    }
}

/// One `ask_user` call, with `choices` if given.
pub fn ask(id: &str, question: &str, choices: Option<&[&str]>) -> Reply {
    let mut args = json!({ "question": question });
    if let Some(choices) = choices {
        args["choices"] = json!(choices);
    }
    tool_call(id, "ask_user", args, 3)
}

/// The tool message for `call_id` in an OpenAI request body.
pub fn tool_message<'a>(body: &'a Value, call_id: &str) -> &'a Value {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
        .unwrap_or_else(|| panic!("no tool message for {call_id} in {body:#}"))
}

/// The `content` of the tool message for `call_id`.
pub fn tool_content(body: &Value, call_id: &str) -> String {
    tool_message(body, call_id)["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The `role` of each message in an OpenAI request body.
pub fn roles(body: &Value) -> Vec<&str> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect()
}
