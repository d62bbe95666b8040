//! What the streaming builders share: the calls every stream has (its id and model, raw
//! bytes, pauses, gates, stalls and resets) and the walk that turns a builder's items into
//! [`Step`]s. A wire format says only what differs: its own ops, and how it writes them
//! as SSE events ([`Format`]). [`crate::openai::Builder`] and
//! [`crate::anthropic::Builder`] are this [`Builder`] for their format.

use std::fmt;
use std::time::Duration;

use crate::{Gate, Reply, Step};

/// One wire format's side of a [`Builder`]: its own ops, the settings its builder methods
/// set, and how a stream of them is written as SSE events, each its own [`Step::Send`].
pub trait Format: Clone + fmt::Debug + Default {
    /// An event-producing call of this format's builder (a text delta, a tool call, …).
    type Op: Clone + fmt::Debug;
    /// The `id` a stream reports unless [`Builder::id`] is used.
    const DEFAULT_ID: &'static str;
    /// The `model` a stream reports unless [`Builder::model`] is used.
    const DEFAULT_MODEL: &'static str;

    /// Writes the events before the first item; `items` is the whole stream, for the
    /// formats that announce totals up front.
    fn start(&mut self, head: &Head, items: &[Item<Self::Op>], out: &mut Vec<Step>);

    /// Writes one op's events; `false` when the stream ends with it.
    fn op(&mut self, head: &Head, op: Self::Op, out: &mut Vec<Step>) -> bool;

    /// Writes the events after the last item, unless the stream was cut short.
    fn end(self, head: &Head, out: &mut Vec<Step>);
}

/// What a stream says about itself in its events.
#[derive(Clone, Debug)]
pub struct Head {
    /// The completion's or message's id.
    pub id: String,
    /// The model that "answers".
    pub model: String,
}

/// One entry of a stream, in call order.
#[derive(Clone, Debug)]
pub enum Item<O> {
    /// A call of the format's own.
    Op(O),
    /// A raw step, sent as given.
    Step(Step),
}

/// Builds a streaming [`Reply`] in format `F`, in call order; see the format's module for
/// what it sends around the items.
#[derive(Clone, Debug)]
pub struct Builder<F: Format> {
    pub(crate) head: Head,
    pub(crate) items: Vec<Item<F::Op>>,
    /// The settings of `F`'s own builder methods.
    pub(crate) format: F,
}

impl<F: Format> Default for Builder<F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F: Format> Builder<F> {
    /// An empty stream.
    pub fn new() -> Self {
        Builder {
            head: Head {
                id: F::DEFAULT_ID.to_owned(),
                model: F::DEFAULT_MODEL.to_owned(),
            },
            items: Vec::new(),
            format: F::default(),
        }
    }

    /// Sets the model the stream reports (every OpenAI chunk's `model`, Anthropic's
    /// `message.model`).
    pub fn model(mut self, model: &str) -> Self {
        self.head.model = model.to_owned();
        self
    }

    /// Sets the id the stream reports (every OpenAI chunk's `id`, Anthropic's
    /// `message.id`).
    pub fn id(mut self, id: &str) -> Self {
        self.head.id = id.to_owned();
        self
    }

    /// An arbitrary line sent as its own event (`line` + `"\n\n"`), e.g. a
    /// malformed `data: {not json`.
    pub fn raw_line(self, line: &str) -> Self {
        self.raw(format!("{line}\n\n"))
    }

    /// Arbitrary bytes sent exactly as given, as one send.
    pub fn raw(self, bytes: impl Into<Vec<u8>>) -> Self {
        self.step(Step::Send(bytes.into()))
    }

    /// Sleep before the next event.
    pub fn pause(self, pause: Duration) -> Self {
        self.step(Step::Delay(pause))
    }

    /// Wait until the test opens `gate` before the next event.
    pub fn wait_for(self, gate: &Gate) -> Self {
        self.step(Step::WaitFor(gate.clone()))
    }

    /// Stop after what was added so far and hang, keeping the socket open.
    /// Nothing after this is sent (no closing events: OpenAI's finish, usage
    /// and `[DONE]`; Anthropic's open block stays open).
    pub fn stall(self) -> Self {
        self.step(Step::Stall)
    }

    /// Reset the connection after what was added so far. Nothing after this
    /// is sent.
    pub fn reset(self) -> Self {
        self.step(Step::Reset)
    }

    /// Any raw [`Step`].
    pub fn step(mut self, step: Step) -> Self {
        self.items.push(Item::Step(step));
        self
    }

    /// Adds one of the format's own ops.
    pub(crate) fn op(mut self, op: F::Op) -> Self {
        self.items.push(Item::Op(op));
        self
    }

    /// The finished reply: `200`, `text/event-stream`, one send per event.
    pub fn build(self) -> Reply {
        let Builder {
            head,
            items,
            mut format,
        } = self;
        let mut out = Vec::new();
        format.start(&head, &items, &mut out);
        for item in items {
            match item {
                Item::Op(op) => {
                    if !format.op(&head, op, &mut out) {
                        return Reply::sse(out);
                    }
                }
                Item::Step(step @ (Step::Stall | Step::Reset)) => {
                    out.push(step);
                    return Reply::sse(out);
                }
                Item::Step(step) => out.push(step),
            }
        }
        format.end(&head, &mut out);
        Reply::sse(out)
    }
}
