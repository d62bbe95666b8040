//! Sandbox policies for the commands zeroclaw's tools start, and their enforcement.
//!
//! A [`Policy`] says what a session's commands may do: a [`Mode`] (`read-only`,
//! `workspace-write`, `full`), the network on or off, the working directory, more writable
//! directories, and the paths to hide (the daemon's data dir, config dir and socket).
//!
//! - [`Support::probe`] finds, once, what the kernel offers: on Linux Landlock (ABI 3 or
//!   later), seccomp, and whether a user+mount namespace can hide paths; elsewhere it is
//!   unavailable. [`Support::mechanism`] names it for `status`.
//! - [`Policy::prepare`] makes, in the parent, everything one command needs: a
//!   [`Prepared`], which [`Prepared::install`]s itself on a `std::process::Command` (for
//!   tokio, `cmd.as_std_mut()`) as a `pre_exec` hook that only makes system calls. Nothing
//!   is ever applied to the calling process.
//! - [`Policy::check_read`] / [`Policy::check_write`] (or a [`Checker`] for many paths) are
//!   the same rules in-process, for the file tools, with the same [`Refusal`] texts.
//! - [`Prepared::explain`] reads a failed command's output for the sandbox's refusals.
//! - [`service_sockets`] lists local services' sockets that would run commands outside the
//!   sandbox (the session bus, tmux, docker, ...): hide them too.
//!
//! No async, no daemon types. The rules and the mechanism are in `docs/sandbox.md`.

mod check;
mod error;
mod explain;
mod mode;
mod plan;
mod policy;
mod prepared;
mod probe;
mod refusal;
mod services;
mod support;

#[cfg(target_os = "linux")]
mod linux;

pub use check::Checker;
pub use error::Error;
pub use mode::{Mode, UnknownMode};
pub use policy::Policy;
pub use prepared::Prepared;
pub use refusal::{DEVICES, Refusal};
pub use services::service_sockets;
pub use support::{NOT_IMPLEMENTED, Support};

#[cfg(test)]
mod tests {
    /// Part B holds a `Prepared` across `.await`s in a tokio task, and shares `Support`.
    #[test]
    fn the_public_types_can_cross_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<crate::Prepared>();
        send_sync::<crate::Support>();
        send_sync::<crate::Policy>();
        send_sync::<crate::Checker>();
        send_sync::<crate::Refusal>();
        send_sync::<crate::Error>();
    }
}
