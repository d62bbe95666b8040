//! zeroclaw's protocol vocabulary: plain data with serde, no I/O.
//!
//! Everything a zeroclaw daemon and its clients say to each other over JSON-RPC is defined
//! here once: the protocol version, every method as a type ([`Method`]: its name, params and
//! result), the `session/update` events ([`Update`]), the decisions and stop reasons, the
//! history's message kinds and zeroclaw's error codes. The daemon, the client library, the
//! tests and `docs/protocol.md`'s lists all come from here.
//!
//! Adding a method: one type with `method!` in the file of its family under [`methods`], its
//! params/result structs beside it. Adding an event: one variant of [`Update`] and its name
//! in [`events::EVENTS`].

pub mod codes;
pub mod elicitation;
pub mod events;
pub mod history;
pub mod methods;

pub use elicitation::{ElicitationAction, ElicitationRequest, ElicitationResponse};
pub use events::{EVENTS, SessionUpdate, Update};
pub use history::{Message, MessageKind};
pub use methods::*;

/// The protocol version this build speaks (`initialize`'s `protocolVersion`).
pub const PROTOCOL_VERSION: i64 = 1;

/// One JSON-RPC method of the protocol: its name and the types of its params and result.
pub trait Method {
    const NAME: &'static str;
    type Params: serde::Serialize + serde::de::DeserializeOwned + Send + 'static;
    type Result: serde::Serialize + serde::de::DeserializeOwned + Send + 'static;
}
