//! Server-sent events over a streaming HTTP body: `data:` lines joined until a blank line.
//!
//! Small enough to write here, and it lets the reader own the two limits that matter for a
//! daemon: an idle timeout between chunks, and a cap on one event's size.

use bytes::{Bytes, BytesMut};
use futures_util::{Stream, StreamExt};
use std::pin::Pin;
use std::time::Duration;

/// Largest event accepted; a provider sending more in one event is broken or hostile.
const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub event: Option<String>,
    pub data: String,
}

#[derive(Debug)]
pub enum SseError {
    /// Nothing arrived for the idle timeout.
    Idle(Duration),
    /// The body failed (connection reset, bad chunking, ...); `error.rs` describes it with
    /// its causes (reqwest's own text is only "error decoding response body").
    Body(reqwest::Error),
    TooLarge,
}

type ByteStream = Pin<Box<dyn Stream<Item = Result<Bytes, reqwest::Error>> + Send>>;

pub struct SseReader {
    body: ByteStream,
    buf: BytesMut,
    idle: Duration,
    event: Option<String>,
    data: String,
    has_data: bool,
    done: bool,
    /// Events handed out since the last yield to the scheduler.
    since_yield: u32,
}

/// A large network read can hold thousands of buffered events, which `next` hands out
/// without awaiting anything; every this many it yields, so the connection writers on the
/// same worker drain the events the turn has queued for them instead of letting the
/// queues fill up.
const EVENTS_PER_YIELD: u32 = 64;

impl SseReader {
    pub fn new(body: ByteStream, idle: Duration) -> Self {
        Self {
            body,
            buf: BytesMut::new(),
            idle,
            event: None,
            data: String::new(),
            has_data: false,
            done: false,
            since_yield: 0,
        }
    }

    /// The next event, `Ok(None)` at the end of the body.
    #[cfg(test)]
    pub async fn next(&mut self) -> Result<Option<Event>, SseError> {
        self.next_paced(&super::Unpaced).await
    }

    /// [`Self::next`], first awaiting what `pace` asks for.
    pub async fn next_paced(&mut self, pace: &dyn super::Pace) -> Result<Option<Event>, SseError> {
        if let Some(wait) = pace.pace() {
            wait.await;
        }
        self.since_yield += 1;
        if self.since_yield >= EVENTS_PER_YIELD {
            self.since_yield = 0;
            tokio::task::yield_now().await;
        }
        loop {
            while let Some(line) = self.take_line() {
                // Checked with the fast validator first: a sane server's lines are always
                // valid UTF-8, and the lossy one costs several times more per line.
                let event = match std::str::from_utf8(&line) {
                    Ok(line) => self.on_line(line),
                    Err(_) => self.on_line(&String::from_utf8_lossy(&line)),
                };
                if let Some(event) = event {
                    return Ok(Some(event));
                }
            }
            if self.done {
                // A last event without its blank line still counts.
                return Ok(self.dispatch());
            }
            match tokio::time::timeout(self.idle, self.body.next()).await {
                Err(_) => return Err(SseError::Idle(self.idle)),
                Ok(None) => {
                    self.done = true;
                    if !self.buf.is_empty() {
                        self.buf.extend_from_slice(b"\n");
                    }
                }
                Ok(Some(Err(e))) => return Err(SseError::Body(e)),
                Ok(Some(Ok(chunk))) => {
                    if self.buf.len() + self.data.len() + chunk.len() > MAX_EVENT_BYTES {
                        return Err(SseError::TooLarge);
                    }
                    self.buf.extend_from_slice(&chunk);
                }
            }
        }
    }

    /// Hands back an event's buffer once it has been read, so the next event's data is
    /// written into it instead of a new allocation.
    pub fn recycle(&mut self, event: Event) {
        if self.data.capacity() == 0 {
            let mut data = event.data;
            data.clear();
            self.data = data;
        }
    }

    fn take_line(&mut self) -> Option<BytesMut> {
        let end = memchr::memchr(b'\n', &self.buf)?;
        let mut line = self.buf.split_to(end + 1);
        line.truncate(end);
        if line.last() == Some(&b'\r') {
            line.truncate(end - 1);
        }
        Some(line)
    }

    fn on_line(&mut self, line: &str) -> Option<Event> {
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = Some(value.to_owned()),
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<Event> {
        let event = self.event.take();
        if !self.has_data {
            return None;
        }
        self.has_data = false;
        Some(Event {
            event,
            data: std::mem::take(&mut self.data),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(chunks: &[&'static str]) -> SseReader {
        let items: Vec<Result<Bytes, reqwest::Error>> = chunks
            .iter()
            .map(|c| Ok(Bytes::from_static(c.as_bytes())))
            .collect();
        SseReader::new(
            Box::pin(futures_util::stream::iter(items)),
            Duration::from_secs(5),
        )
    }

    async fn all(mut r: SseReader) -> Vec<Event> {
        let mut out = Vec::new();
        while let Some(e) = r.next().await.unwrap() {
            out.push(e);
        }
        out
    }

    #[tokio::test]
    async fn events_split_across_chunks_and_lines_are_reassembled() {
        let events = all(reader(&[
            "da",
            "ta: {\"a\"",
            ":1}\r\n\r\n: comment\n",
            "event: ping\ndata: x\ndata: y\n\n",
            "data: last",
        ]))
        .await;
        assert_eq!(
            events,
            vec![
                Event {
                    event: None,
                    data: "{\"a\":1}".into()
                },
                Event {
                    event: Some("ping".into()),
                    data: "x\ny".into()
                },
                Event {
                    event: None,
                    data: "last".into()
                },
            ]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_silent_stream_times_out() {
        let stream = futures_util::stream::pending::<Result<Bytes, reqwest::Error>>();
        let mut r = SseReader::new(Box::pin(stream), Duration::from_secs(3));
        assert!(matches!(r.next().await, Err(SseError::Idle(_))));
    }
}
