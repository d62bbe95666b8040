//! Test support for zeroclaw: a scripted **fake LLM provider**.
//!
//! [`FakeProvider`] is a real HTTP/1.1 server on `127.0.0.1` (random port by
//! default), hand-written on [`tokio::net::TcpListener`]. Integration tests start
//! it, queue scripted [`Reply`]s, point the daemon's provider config at
//! [`FakeProvider::base_url`] (`http://127.0.0.1:PORT/v1`) and afterwards inspect
//! what the daemon sent with [`FakeProvider::requests`].
//!
//! It speaks both streaming wire formats faithfully:
//!
//! * OpenAI-compatible Chat Completions (`data: {json}` lines and a final
//!   `data: [DONE]`) — see [`openai`];
//! * the Anthropic Messages API (`event: …` / `data: …` pairs) — see
//!   [`anthropic`].
//!
//! Every SSE event a builder produces is its own [`Step::Send`], written as its
//! own HTTP chunk and flushed (with `TCP_NODELAY`), so the client sees real
//! incremental delivery. Failure modes are first-class steps: [`Step::Stall`]
//! (stop sending, keep the socket open), [`Step::Reset`] (abortive close with a
//! TCP RST), [`Step::Delay`] and [`Step::WaitFor`] (pace the stream from the
//! test via a [`Gate`]).
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use zeroclaw_testkit::{FakeProvider, openai};
//!
//! let fake = FakeProvider::start().await?;
//! fake.push(openai::text(&["Hel", "lo"]));
//! fake.push(
//!     openai::Builder::new()
//!         .tool_call(0, "call_1", "bash", r#"{"command":"echo hi"}"#, 3)
//!         .build(),
//! );
//! // ... configure the daemon with fake.base_url() and drive it ...
//! let first = fake.next_request().await;
//! assert_eq!(first.path, "/v1/chat/completions");
//! # Ok(()) }
//! ```
//!
//! # Matching requests to replies
//!
//! Requests are answered strictly FIFO from the queue filled by
//! [`FakeProvider::push`], whatever their method or path. With nothing queued
//! the answer is `500` with the JSON body
//! `{"error":{"message":"fake provider: no scripted reply left",…}}`.
//! Fixed answers for side requests (e.g. `GET /v1/models`) can be installed with
//! [`FakeProvider::route`]; those do not consume the queue. Every request is
//! recorded before it is answered.
//!
//! # Response framing
//!
//! Streaming replies use `Transfer-Encoding: chunked`, which is what real
//! provider front-ends (OpenAI, Anthropic, Ollama, vLLM behind most proxies)
//! send and what reqwest/hyper decode natively. A chunked body also has an
//! explicit end (the `0\r\n\r\n` terminator), so a client can tell a clean end
//! of stream from a [`Step::Reset`] or from an early close. A reply whose
//! headers contain `content-length` (such as the ones built by
//! [`Reply::status`]) is instead written raw, exactly as the steps give it, like
//! real servers send small JSON error bodies. Every reply carries
//! `connection: close`; one request is served per connection.
//!
//! # The `fake-provider` binary
//!
//! `fake-provider [--port N] [--verbose] SCRIPT.json` serves a JSON script of
//! replies (format: [`script`]) for hand-driven transcripts. It prints
//! `listening on http://127.0.0.1:PORT/v1` to stdout, logs each request to
//! stderr and serves until killed.

#![warn(missing_docs)]

pub mod anthropic;
mod error_replies;
mod gate;
mod http;
pub mod openai;
mod provider;
mod recorded;
mod reply;
pub mod script;
mod sse;
pub mod stream;

pub use error_replies::NO_REPLY_LEFT;
pub use gate::Gate;
pub use provider::{FakeProvider, HANG_GUARD};
pub use recorded::Recorded;
pub use reply::{Reply, Step};
pub use sse::split_evenly;

/// A real 1×1 PNG, for the tests of images in prompts.
pub const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0,
    0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

#[cfg(test)]
mod tests;
