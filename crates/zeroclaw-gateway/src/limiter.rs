//! Failed-authentication slow-down: the tenth wrong secret (a token, a dashboard session's
//! cookie and proof, a login code, a webhook signature) from one address within 60 s, and
//! every further one from that address for 60 s, is answered 429.
//!
//! Only a wrong secret is counted and only a wrong secret is slowed. A request that presents
//! no secret counts nothing (any web page can send those, with `<img>` tags, and must not
//! be able to lock anyone out), and a valid secret is checked first and never consults the
//! limiter, so failures from one address (a proxy, a hostile page) never refuse a valid
//! token or login code from the same address.
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
    /// Counts a wrong secret from `ip`; the seconds to wait if the address is being slowed
    /// (this failure started it, or an earlier one did and it has not run out).
    pub fn failed(&self, ip: IpAddr) -> Option<u64> {
        let now = Instant::now();
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(until) = entries.get(&ip).and_then(|e| e.blocked_until)
            && let Some(left) = until.checked_duration_since(now)
        {
            return Some(left.as_secs().max(1));
        }
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
    fn the_tenth_wrong_secret_slows_that_address_and_no_other() {
        let limiter = Limiter::default();
        let a: IpAddr = [127, 0, 0, 2].into();
        let b: IpAddr = [127, 0, 0, 3].into();
        for _ in 0..FAILURES - 1 {
            assert_eq!(limiter.failed(a), None);
        }
        assert_eq!(limiter.failed(a), Some(60));
        assert!(limiter.failed(a).is_some(), "still slowed");
        assert_eq!(limiter.failed(b), None);
    }
}
