//! Idle HTTP sessions: when a session of the front counts as abandoned. Its close
//! reason is [`crate::tape::CloseReason::SessionIdle`].
//!
//! A session is idle while no request of it is being handled and none of its answer
//! streams is open; its idle time starts when the last of those ended. A session idle
//! for longer than `--session-idle` is ended by the front's reaper, which checks every
//! [`Reaper`] tick: the spec lets a server end a session at any time, after which it
//! answers that session's id with `404`
//! (<https://modelcontextprotocol.io/specification/2025-06-18/basic/transports#session-management>),
//! and a client then starts a new one.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::{Instant, Interval, MissedTickBehavior};

/// The shortest and longest time between two checks for idle sessions.
const TICK_BOUNDS: (Duration, Duration) = (Duration::from_millis(10), Duration::from_secs(5));

/// When a session was last busy, and whether it is busy now.
#[derive(Debug)]
pub struct Activity {
    last: Arc<Mutex<Instant>>,
}

/// Holds a session busy (a request being handled, an answer stream open); when dropped,
/// the session's idle time starts again from then.
#[derive(Debug)]
pub struct Busy(Arc<Mutex<Instant>>);

impl Activity {
    /// A session busy until now.
    pub fn new() -> Activity {
        Activity {
            last: Arc::new(Mutex::new(Instant::now())),
        }
    }

    /// Marks the session busy until the returned guard is dropped.
    pub fn hold(&self) -> Busy {
        stamp(&self.last);
        Busy(Arc::clone(&self.last))
    }

    /// True when nothing holds the session busy and it has been so for longer than
    /// `limit` at `now`.
    pub fn idle_past(&self, now: Instant, limit: Duration) -> bool {
        Arc::strong_count(&self.last) == 1
            && self
                .last
                .lock()
                .is_ok_and(|last| now.saturating_duration_since(*last) > limit)
    }
}

impl Default for Activity {
    fn default() -> Activity {
        Activity::new()
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        stamp(&self.0);
    }
}

fn stamp(last: &Mutex<Instant>) {
    if let Ok(mut last) = last.lock() {
        *last = Instant::now();
    }
}

/// The ids of the sessions idle for longer than `limit` now (said on stderr when there
/// are any), among `sessions` (each id with its [`Activity`]).
pub fn expired<'a>(
    sessions: impl IntoIterator<Item = (&'a String, &'a Activity)>,
    limit: Duration,
) -> Vec<String> {
    let now = Instant::now();
    let ids: Vec<String> = sessions
        .into_iter()
        .filter(|(_, a)| a.idle_past(now, limit))
        .map(|(id, _)| id.clone())
        .collect();
    if !ids.is_empty() {
        crate::term::eprintln_escaped!(
            "mcptape: ended {} idle session(s) (--session-idle)",
            ids.len()
        );
    }
    ids
}

/// The clock of the idle check: ticks a few times per `--session-idle`, or never.
pub struct Reaper {
    interval: Option<Interval>,
    limit: Option<Duration>,
}

impl Reaper {
    /// Checks for sessions idle longer than `limit` (`None`: never).
    pub fn new(limit: Option<Duration>) -> Reaper {
        let interval = limit.map(|l| {
            let mut i = tokio::time::interval((l / 4).clamp(TICK_BOUNDS.0, TICK_BOUNDS.1));
            i.set_missed_tick_behavior(MissedTickBehavior::Delay);
            i
        });
        Reaper { interval, limit }
    }

    /// Waits for the next check; returns the idle limit to apply then. Cancel-safe.
    pub async fn tick(&mut self) -> Duration {
        match (&mut self.interval, self.limit) {
            (Some(interval), Some(limit)) => {
                interval.tick().await;
                limit
            }
            _ => std::future::pending().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_idle_only_when_nothing_holds_it_and_time_passed() {
        let limit = Duration::from_secs(60);
        let later = |secs| Instant::now() + Duration::from_secs(secs);
        let activity = Activity::new();
        assert!(!activity.idle_past(Instant::now(), limit));
        let busy = activity.hold();
        assert!(!activity.idle_past(later(120), limit), "a stream is open");
        drop(busy);
        assert!(
            !activity.idle_past(later(30), limit),
            "idle time starts when the stream closed"
        );
        assert!(activity.idle_past(later(61), limit));
    }
}
