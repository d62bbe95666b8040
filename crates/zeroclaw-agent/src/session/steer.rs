//! `session/steer`: messages a user adds to the running turn, waiting for its next step.
//!
//! The turn takes them at each step boundary, before its next model request
//! (`turn/step.rs`). When the model gives its final answer, the turn takes them or closes
//! the queue in one step under the lock, so a message is either answered in this turn or
//! refused as [`SteerRefused::Ended`] (the client then sends a prompt): never accepted and
//! lost. Bounded: at most [`MAX_PENDING_STEERS`] wait; one more is refused
//! ([`SteerRefused::Full`]) until the turn takes them.

use zeroclaw_protocol::MAX_PENDING_STEERS;

/// Why a steer message was not queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SteerRefused {
    /// [`MAX_PENDING_STEERS`] already wait.
    Full,
    /// The turn has given its final answer and is ending.
    Ended,
}

#[derive(Debug, Default)]
pub(super) struct Steers {
    pending: Vec<String>,
    closed: bool,
}

impl Steers {
    pub(super) fn push(&mut self, text: String) -> Result<(), SteerRefused> {
        if self.closed {
            return Err(SteerRefused::Ended);
        }
        if self.pending.len() >= MAX_PENDING_STEERS {
            return Err(SteerRefused::Full);
        }
        self.pending.push(text);
        Ok(())
    }

    pub(super) fn take(&mut self) -> Vec<String> {
        std::mem::take(&mut self.pending)
    }

    pub(super) fn take_or_close(&mut self) -> Vec<String> {
        if self.pending.is_empty() {
            self.closed = true;
        }
        self.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_queue_is_bounded_and_closing_it_refuses_what_comes_after() {
        let mut steers = Steers::default();
        for i in 0..MAX_PENDING_STEERS {
            assert_eq!(steers.push(i.to_string()), Ok(()));
        }
        assert_eq!(steers.push("one more".into()), Err(SteerRefused::Full));
        assert_eq!(steers.take_or_close().len(), MAX_PENDING_STEERS);
        assert_eq!(steers.push("after a step".into()), Ok(()));
        assert_eq!(steers.take_or_close(), vec!["after a step".to_owned()]);
        assert!(steers.take_or_close().is_empty());
        assert_eq!(steers.push("too late".into()), Err(SteerRefused::Ended));
    }
}
