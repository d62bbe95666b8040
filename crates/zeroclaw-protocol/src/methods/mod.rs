//! Every method of the protocol as a type: its name, its params and its result. One file
//! per family, as the daemon's `methods/` has them; everything is re-exported here, so a
//! method is `methods::X` (and `zeroclaw_protocol::X`) whatever its file.
//!
//! Params structs refuse unknown members (`deny_unknown_fields`) so a misspelt member is an
//! `invalid params` error rather than silently ignored; `initialize` accepts any, so newer
//! clients can declare capabilities an older daemon does not know.

use serde::{Deserialize, Serialize};

/// Declares a method type: `method!(Type, "name", Params, Result)`.
macro_rules! method {
    ($(#[$doc:meta])* $ty:ident, $name:literal, $params:ty, $result:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub enum $ty {}
        impl $crate::Method for $ty {
            const NAME: &'static str = $name;
            type Params = $params;
            type Result = $result;
        }
    };
}

mod checkpoints;
mod client_side;
mod content;
mod lifecycle;
mod mcp;
mod mode;
mod project;
mod prompt;
mod runs;
mod sandbox;
mod session;
mod token;
mod usage;

pub use checkpoints::*;
pub use client_side::*;
pub use content::*;
pub use lifecycle::*;
pub use mcp::*;
pub use mode::*;
pub use project::*;
pub use prompt::*;
pub use runs::*;
pub use sandbox::*;
pub use session::*;
pub use token::*;
pub use usage::*;

/// Params of a method that takes none: any object (or none at all) is accepted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoParams;

impl Serialize for NoParams {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Empty {}.serialize(s)
    }
}

impl<'de> Deserialize<'de> for NoParams {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(d).map(|_| NoParams)
    }
}

/// `{}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Empty {}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn no_params_accepts_anything_and_sends_an_empty_object() {
        for v in [json!({}), json!({"x": 1}), json!([]), json!(null)] {
            assert_eq!(NoParams::deserialize(&v).unwrap(), NoParams);
        }
        assert_eq!(serde_json::to_value(NoParams).unwrap(), json!({}));
    }
}
