//! The output kept: the head and tail of each stream within the limit, and the share of
//! the limit each stream gets.

use std::collections::VecDeque;

use super::super::text::{utf8_head, utf8_tail};

/// Keeps the first `head_cap` and the last `tail_cap` bytes of a stream, counting all.
pub(super) struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    head_cap: usize,
    tail_cap: usize,
    pub(super) total: usize,
}

impl Capture {
    pub(super) fn new(head_cap: usize, tail_cap: usize) -> Self {
        Self {
            head: Vec::new(),
            tail: VecDeque::new(),
            head_cap,
            tail_cap,
            total: 0,
        }
    }

    pub(super) fn push(&mut self, data: &[u8]) {
        self.total = self.total.saturating_add(data.len());
        let n = (self.head_cap - self.head.len()).min(data.len());
        self.head.extend_from_slice(&data[..n]);
        let rest = &data[n..];
        if rest.len() >= self.tail_cap {
            self.tail.clear();
            self.tail.extend(&rest[rest.len() - self.tail_cap..]);
        } else {
            let overflow = (self.tail.len() + rest.len()).saturating_sub(self.tail_cap);
            self.tail.drain(..overflow);
            self.tail.extend(rest);
        }
    }

    /// Every byte pushed, while nothing has been dropped (`total` ≤ head_cap + tail_cap).
    pub(super) fn whole(&self) -> Vec<u8> {
        let mut all = self.head.clone();
        all.extend(self.tail.iter());
        all
    }

    /// The stream as text, cut to at most `budget` bytes (head and tail, half each) with
    /// a marker saying how many bytes were left out. `budget` ≤ head_cap + tail_cap.
    pub(super) fn render(&self, budget: usize) -> String {
        let keep_head = budget / 2;
        let keep_tail = budget - keep_head;
        if self.total <= self.head_cap + self.tail_cap {
            // Nothing was dropped while reading: head + tail is the whole stream.
            let all: Vec<u8> = self.head.iter().chain(self.tail.iter()).copied().collect();
            if all.len() <= budget {
                return String::from_utf8_lossy(&all).into_owned();
            }
            return Self::join(&all[..keep_head], &all[all.len() - keep_tail..], self.total);
        }
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let keep_head = keep_head.min(self.head.len());
        let keep_tail = keep_tail.min(tail.len());
        Self::join(
            &self.head[..keep_head],
            &tail[tail.len() - keep_tail..],
            self.total,
        )
    }

    fn join(head: &[u8], tail: &[u8], total: usize) -> String {
        let head = utf8_head(head);
        let tail = utf8_tail(tail);
        let cut = total - head.len() - tail.len();
        format!(
            "{}\n[... {cut} bytes cut ...]\n{}",
            String::from_utf8_lossy(head),
            String::from_utf8_lossy(tail)
        )
    }
}

/// Shares `limit` bytes between stdout (`a` bytes) and stderr (`b` bytes): a stream
/// smaller than half keeps everything and leaves the rest to the other one.
pub(super) fn split_budget(limit: usize, a: usize, b: usize) -> (usize, usize) {
    if a.saturating_add(b) <= limit {
        return (a, b);
    }
    let half = limit / 2;
    if a <= half {
        (a, limit - a)
    } else if b <= limit - half {
        (limit - b, b)
    } else {
        (half, limit - half)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_split() {
        assert_eq!(split_budget(1000, 10, 20), (10, 20));
        assert_eq!(split_budget(1000, 10, 5000), (10, 990));
        assert_eq!(split_budget(1000, 5000, 10), (990, 10));
        assert_eq!(split_budget(1000, 5000, 5000), (500, 500));
        assert_eq!(split_budget(1001, 5000, 5000), (500, 501));
        assert_eq!(split_budget(0, 1, 0), (0, 0));
    }

    #[test]
    fn capture_keeps_head_and_tail() {
        let mut c = Capture::new(3, 3);
        for chunk in [&b"ab"[..], b"cdefg", b"h", b"ijklmnop"] {
            c.push(chunk);
        }
        assert_eq!(c.total, 16);
        assert_eq!(c.render(6), "abc\n[... 10 bytes cut ...]\nnop");
        assert_eq!(c.render(2), "a\n[... 14 bytes cut ...]\np");
        let mut c = Capture::new(3, 3);
        c.push(b"abcde");
        assert_eq!(c.render(6), "abcde");
        assert_eq!(c.render(2), "a\n[... 3 bytes cut ...]\ne");
    }
}
