//! A `tools/call` result as the model reads it: text contents joined by newlines;
//! `structuredContent` as JSON when there is no text; images, audio and resources as
//! `[image: type]`, `[audio: type]`, `[resource: uri]`; MCP `isError` is the result's.

use crate::tools::ToolOutput;
use serde_json::Value;

/// `result`: a `CallToolResult` as JSON.
pub fn to_output(result: &Value) -> ToolOutput {
    let mut parts: Vec<String> = Vec::new();
    let mut has_text = false;
    for block in result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let field = |name: &str| block.get(name).and_then(Value::as_str).unwrap_or("?");
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                has_text = true;
                parts.push(field("text").to_owned());
            }
            Some("image") => parts.push(format!("[image: {}]", field("mimeType"))),
            Some("audio") => parts.push(format!("[audio: {}]", field("mimeType"))),
            Some("resource") => {
                let uri = block
                    .get("resource")
                    .and_then(|r| r.get("uri"))
                    .and_then(Value::as_str)
                    .unwrap_or("?");
                parts.push(format!("[resource: {uri}]"));
            }
            Some("resource_link") => parts.push(format!("[resource: {}]", field("uri"))),
            other => parts.push(format!("[{}]", other.unwrap_or("content"))),
        }
    }
    if !has_text && let Some(structured) = result.get("structuredContent") {
        parts.insert(0, structured.to_string());
    }
    ToolOutput {
        text: parts.join("\n"),
        is_error: result
            .get("isError")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn contents_become_one_text() {
        let out = to_output(&json!({
            "content": [
                {"type": "text", "text": "one"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "text", "text": "two"},
                {"type": "resource", "resource": {"uri": "file:///a", "text": "x"}}
            ],
            "isError": true
        }));
        assert_eq!(
            out,
            ToolOutput::error("one\n[image: image/png]\ntwo\n[resource: file:///a]")
        );
        let out = to_output(&json!({"content": [], "structuredContent": {"n": 1}}));
        assert_eq!(out, ToolOutput::ok("{\"n\":1}"));
    }
}
