//! The HTTP front's upstream session endings: the `DELETE` each ended session sends its
//! remote server, run off the request path and awaited before the front exits.
//!
//! Ending a session (a client's `DELETE`, idle expiry, shutdown) must not wait for the
//! upstream, so each `DELETE` runs as a task of its own; but a task left running when the
//! front returns is dropped with the runtime, and the upstream session would outlive us.
//! So the tasks are kept here, and [`Endings::finish`] waits for them, at most
//! [`END_GRACE`] in all (each `DELETE` is also bounded by
//! [`crate::upstream::http::DRAIN_GRACE`]), or until a second stop signal. Finished
//! tasks are reaped as new ones come, so a long-running front holds only the pending ones.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::task::JoinSet;

use crate::process::Signals;
use crate::upstream::http::Remote;

/// How long the front waits at shutdown, in all, for its upstream `DELETE`s.
pub const END_GRACE: Duration = Duration::from_secs(5);

/// The upstream `DELETE`s under way.
#[derive(Default)]
pub struct Endings {
    tasks: Mutex<JoinSet<()>>,
}

/// What [`Endings::finish`] saw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Finished {
    /// `DELETE`s that completed (answered, failed or timed out on their own).
    pub done: usize,
    /// `DELETE`s still under way when the grace ran out or a signal came.
    pub abandoned: usize,
}

impl Endings {
    /// Starts ending `remote`'s upstream session (a `DELETE`, when it has one). Must be
    /// called inside the runtime.
    pub fn end(&self, remote: Arc<Remote>) {
        if let Ok(mut tasks) = self.tasks.lock() {
            while tasks.try_join_next().is_some() {}
            tasks.spawn(async move { remote.end().await });
        }
    }

    /// Waits for the `DELETE`s under way, at most `grace`, or until `signals` delivers
    /// one more stop signal; says on stderr how many were left.
    pub async fn finish(&self, grace: Duration, signals: &mut Signals) -> Finished {
        let mut tasks = match self.tasks.lock() {
            Ok(mut t) => std::mem::take(&mut *t),
            Err(_) => return Finished::default(),
        };
        let mut done = 0;
        let all = async {
            while tasks.join_next().await.is_some() {
                done += 1;
            }
        };
        tokio::select! {
            _ = tokio::time::timeout(grace, all) => {}
            _ = signals.recv() => {}
        }
        let abandoned = tasks.len();
        if abandoned > 0 {
            crate::term::eprintln_escaped!(
                "mcptape: warning: {abandoned} upstream session(s) not deleted within {} s of the stop signal",
                grace.as_secs()
            );
        }
        Finished { done, abandoned }
    }
}
