//! Failed-authentication slow-down: 10 failures from one address within 60 s, and that
//! address is answered 429 for 60 s on requests without valid credentials (valid ones are
//! never slowed).
//!
//! Bounded: at most [`MAX_ADDRESSES`] addresses are tracked. Overflow rule: when full,
//! entries whose window has passed are dropped first; if none has, the new address is not
//! tracked (its failures go uncounted until room frees up) rather than evicting one that is
//! being slowed.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub const FAILURES: u32 = 10;
pub const WINDOW: Duration = Duration::from_secs(60);
pub const BLOCK: Duration = Duration::from_secs(60);
const MAX_ADDRESSES: usize = 10_000;

#[derive(Debug, Clone, Copy)]
struct Entry {
    window_start: Instant,
    failures: u32,
    blocked_until: Option<Instant>,
}

#[derive(Debug, Default)]
pub struct Limiter {
    entries: Mutex<HashMap<IpAddr, Entry>>,
}

impl Limiter {
    /// Seconds to wait, if `ip` is being slowed now.
    pub fn blocked(&self, ip: IpAddr) -> Option<u64> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let until = entries.get(&ip)?.blocked_until?;
        let left = until.checked_duration_since(Instant::now())?;
        Some(left.as_secs().max(1))
    }

    /// Counts a failure; returns the wait if this one started a block.
    pub fn failed(&self, ip: IpAddr) -> Option<u64> {
        let now = Instant::now();
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if !entries.contains_key(&ip) && entries.len() >= MAX_ADDRESSES {
            entries.retain(|_, e| {
                now.duration_since(e.window_start) < WINDOW
                    || e.blocked_until.is_some_and(|until| until > now)
            });
            if entries.len() >= MAX_ADDRESSES {
                return None;
            }
        }
        let entry = entries.entry(ip).or_insert(Entry {
            window_start: now,
            failures: 0,
            blocked_until: None,
        });
        if now.duration_since(entry.window_start) >= WINDOW {
            entry.window_start = now;
            entry.failures = 0;
        }
        entry.failures += 1;
        if entry.failures >= FAILURES {
            entry.blocked_until = Some(now + BLOCK);
            entry.failures = 0;
            entry.window_start = now;
            return Some(BLOCK.as_secs());
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ten_failures_block_the_address_and_no_other() {
        let limiter = Limiter::default();
        let a: IpAddr = [127, 0, 0, 2].into();
        let b: IpAddr = [127, 0, 0, 3].into();
        for _ in 0..FAILURES - 1 {
            assert_eq!(limiter.failed(a), None);
        }
        assert_eq!(limiter.blocked(a), None);
        assert_eq!(limiter.failed(a), Some(60));
        assert!(limiter.blocked(a).is_some());
        assert_eq!(limiter.blocked(b), None);
    }
}
