//! The scheduler's pure core: given the time, whether a schedule's tick is due. No clock
//! and no sleeping here, so tests drive it with any times they like.
//!
//! Rules (docs/unattended.md): a tick fires once, for its minute; ticks missed while the
//! daemon was down (or the clock leapt forward) are not replayed, except the latest one
//! once at start-up with `catch_up`; a clock that jumps back never fires a minute again
//! (nothing fires until a minute after the last one fired comes round).

use chrono::{DateTime, TimeZone};
use croner::Cron;

#[derive(Debug, Clone)]
pub struct Ticker<Tz: TimeZone> {
    cron: Cron,
    /// Ticks at or before this have been considered.
    cursor: DateTime<Tz>,
    /// The last tick fired (or recorded skipped).
    last: Option<DateTime<Tz>>,
}

impl<Tz: TimeZone> Ticker<Tz> {
    /// A ticker at `now`; `last` is the latest tick the store has for this schedule. With
    /// `catch_up`, also the latest tick missed since `last` (to fire now), if any.
    pub fn start(
        cron: Cron,
        now: DateTime<Tz>,
        last: Option<DateTime<Tz>>,
        catch_up: bool,
    ) -> (Self, Option<DateTime<Tz>>) {
        let missed = match (&last, catch_up) {
            (Some(last), true) => cron
                .find_previous_occurrence(&now, true)
                .ok()
                .filter(|tick| tick > last),
            _ => None,
        };
        let last = match (&missed, last) {
            (Some(tick), _) => Some(tick.clone()),
            (None, last) => last,
        };
        (
            Self {
                cron,
                cursor: now,
                last,
            },
            missed,
        )
    }

    /// The tick due at `now`, if one is: the latest occurrence after the cursor and after
    /// the last tick fired (earlier ones passed over are not replayed). Moves the cursor.
    pub fn poll(&mut self, now: DateTime<Tz>) -> Option<DateTime<Tz>> {
        if now <= self.cursor {
            // The same moment, or the clock went back: nothing new.
            self.cursor = now;
            return None;
        }
        let due = self
            .cron
            .find_previous_occurrence(&now, true)
            .ok()
            .filter(|tick| {
                *tick > self.cursor && self.last.as_ref().is_none_or(|last| tick > last)
            });
        self.cursor = now;
        if let Some(tick) = &due {
            self.last = Some(tick.clone());
        }
        due
    }

    /// The next tick that can fire.
    pub fn next(&self) -> Option<DateTime<Tz>> {
        let from = match &self.last {
            Some(last) if *last > self.cursor => last.clone(),
            _ => self.cursor.clone(),
        };
        self.cron.find_next_occurrence(&from, false).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse_cron;
    use chrono::Utc;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .unwrap()
            .with_timezone(&Utc)
    }

    fn weekdays_at_8() -> Cron {
        parse_cron("0 8 * * 1-5").unwrap()
    }

    #[test]
    fn the_next_run_is_the_next_matching_minute() {
        // 2026-12-04 is a Friday: the next weekday 08:00 after Friday 09:00 is Monday.
        let (t, _) = Ticker::start(weekdays_at_8(), at("2026-12-04T09:00:00Z"), None, false);
        assert_eq!(t.next(), Some(at("2026-12-07T08:00:00Z")));
        let (t, _) = Ticker::start(weekdays_at_8(), at("2026-12-04T07:59:30Z"), None, false);
        assert_eq!(t.next(), Some(at("2026-12-04T08:00:00Z")));
    }

    #[test]
    fn a_tick_fires_once_for_its_minute() {
        let (mut t, missed) =
            Ticker::start(weekdays_at_8(), at("2026-12-04T07:59:00Z"), None, false);
        assert_eq!(missed, None);
        assert_eq!(t.poll(at("2026-12-04T07:59:59Z")), None);
        assert_eq!(
            t.poll(at("2026-12-04T08:00:00Z")),
            Some(at("2026-12-04T08:00:00Z"))
        );
        assert_eq!(t.poll(at("2026-12-04T08:00:30Z")), None);
        assert_eq!(t.poll(at("2026-12-04T08:01:00Z")), None);
        assert_eq!(t.next(), Some(at("2026-12-07T08:00:00Z")));
    }

    #[test]
    fn after_downtime_only_the_latest_missed_tick_runs_and_only_with_catch_up() {
        let last = Some(at("2026-12-01T08:00:00Z"));
        let now = at("2026-12-04T12:00:00Z");
        let (_, missed) = Ticker::start(weekdays_at_8(), now, last, false);
        assert_eq!(missed, None);
        let (mut t, missed) = Ticker::start(weekdays_at_8(), now, last, true);
        assert_eq!(missed, Some(at("2026-12-04T08:00:00Z")));
        assert_eq!(t.poll(at("2026-12-04T12:01:00Z")), None);
        // Nothing was missed since the last tick: no catch-up.
        let (_, missed) =
            Ticker::start(weekdays_at_8(), now, Some(at("2026-12-04T08:00:00Z")), true);
        assert_eq!(missed, None);
    }

    #[test]
    fn a_clock_that_jumps_back_never_runs_a_minute_twice() {
        let every_minute = parse_cron("* * * * *").unwrap();
        let (mut t, _) = Ticker::start(every_minute, at("2026-12-04T07:59:30Z"), None, false);
        assert_eq!(
            t.poll(at("2026-12-04T08:00:10Z")),
            Some(at("2026-12-04T08:00:00Z"))
        );
        assert_eq!(
            t.poll(at("2026-12-04T08:01:10Z")),
            Some(at("2026-12-04T08:01:00Z"))
        );
        // Back by an hour, then forward through the same minutes again.
        assert_eq!(t.poll(at("2026-12-04T07:01:10Z")), None);
        assert_eq!(t.poll(at("2026-12-04T07:30:00Z")), None);
        assert_eq!(t.poll(at("2026-12-04T08:00:30Z")), None);
        assert_eq!(t.poll(at("2026-12-04T08:01:59Z")), None);
        assert_eq!(
            t.poll(at("2026-12-04T08:02:00Z")),
            Some(at("2026-12-04T08:02:00Z"))
        );
    }

    #[test]
    fn a_leap_forward_runs_the_latest_tick_once_not_every_one_passed() {
        let every_minute = parse_cron("* * * * *").unwrap();
        let (mut t, _) = Ticker::start(every_minute, at("2026-12-04T08:00:30Z"), None, false);
        assert_eq!(
            t.poll(at("2026-12-04T10:00:05Z")),
            Some(at("2026-12-04T10:00:00Z"))
        );
        assert_eq!(t.poll(at("2026-12-04T10:00:50Z")), None);
    }
}
