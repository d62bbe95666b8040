//! The ready-made error answers real providers give (OpenAI's bodies, Ollama's), and the
//! fake provider's own when no scripted reply is left: constructors of [`Reply`], kept
//! apart because they speak the providers' formats, which build on `Reply`.

use serde_json::json;

use crate::Reply;
use crate::openai;

/// The message of the `500` answer given when no scripted reply is left.
pub const NO_REPLY_LEFT: &str = "fake provider: no scripted reply left";

impl Reply {
    /// `500` with an OpenAI-style error body.
    pub fn server_error() -> Reply {
        Reply::status(
            500,
            openai::error_body(
                "The server had an error while processing your request.",
                "server_error",
                None,
            ),
        )
    }

    /// `429` with an OpenAI-style rate-limit body and, if given, a
    /// `retry-after` header (seconds).
    pub fn rate_limited(retry_after_secs: Option<u64>) -> Reply {
        let reply = Reply::status(
            429,
            openai::error_body(
                "Rate limit reached for requests. Please try again later.",
                "requests",
                Some("rate_limit_exceeded"),
            ),
        );
        match retry_after_secs {
            Some(secs) => reply.with_header("retry-after", &secs.to_string()),
            None => reply,
        }
    }

    /// `401` with OpenAI's invalid-API-key body.
    pub fn unauthorized() -> Reply {
        Reply::status(
            401,
            openai::error_body(
                "Incorrect API key provided.",
                "invalid_request_error",
                Some("invalid_api_key"),
            ),
        )
    }

    /// OpenAI's refusal of a request longer than the model's context window (`limit` and
    /// `size` in bytes, reported as tokens at four bytes each).
    pub fn context_length_exceeded(limit: usize, size: usize) -> Reply {
        Reply::status(
            400,
            json!({"error": {
                "message": format!(
                    "This model's maximum context length is {} tokens. However, your messages resulted in {} tokens. Please reduce the length of the messages.",
                    limit / 4,
                    size / 4
                ),
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded"
            }}),
        )
    }

    /// `404` with OpenAI's unknown-model body:
    /// `{"error":{"message":"The model `x` does not exist","type":"invalid_request_error","code":"model_not_found"}}`.
    pub fn openai_model_not_found(model: &str) -> Reply {
        Reply::status(
            404,
            openai::error_body(
                &format!("The model `{model}` does not exist"),
                "invalid_request_error",
                Some("model_not_found"),
            ),
        )
    }

    /// `404` with Ollama's unknown-model body:
    /// `{"error":"model \"x\" not found, try pulling it first"}`.
    pub fn ollama_model_not_found(model: &str) -> Reply {
        Reply::status(
            404,
            json!({ "error": format!("model \"{model}\" not found, try pulling it first") }),
        )
    }

    /// The answer given when no scripted reply is left.
    pub(crate) fn no_reply_left() -> Reply {
        Reply::status(
            500,
            json!({
                "error": {
                    "message": NO_REPLY_LEFT,
                    "type": "fake_provider_error",
                    "code": "no_scripted_reply"
                }
            }),
        )
    }
}
