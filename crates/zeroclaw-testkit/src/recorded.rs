//! A request as the fake provider received it, kept for the test to inspect.

use serde_json::Value;

/// One HTTP request as the fake provider received it.
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded {
    /// Request method, as sent (`"POST"`).
    pub method: String,
    /// Request target as sent, including any query string
    /// (`"/v1/chat/completions"`).
    pub path: String,
    /// Headers in the order received; names lowercased, values trimmed.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON, or [`Value::Null`] when it is empty or not
    /// JSON (then see [`Recorded::raw_body`]).
    pub body: Value,
    /// The body bytes exactly as received (after de-chunking).
    pub raw_body: Vec<u8>,
}

impl Recorded {
    /// The first header with this name (case-insensitive), if any.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}
