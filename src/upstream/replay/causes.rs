//! The order replay enforces, modelled once per connection: for each recv step, the
//! steps that cause it. A recv step is given to the client once its causes have
//! happened (send steps matched, recv steps given), never because an unrelated step was
//! recorded before it: the recorded order of independent messages is an accident of
//! timing.
//!
//! - An answer is caused by its request; by the client's cancel of that request when the
//!   answer was recorded after the cancel (a `-32800 Request cancelled` must not reach the
//!   client before it cancels); and by the client's answers to server requests recorded
//!   between the request and the answer (a sampling request the call waited on).
//! - A notification tied to a request (its progress token) is caused by that request.
//! - The server messages tied to one request keep their recorded order among themselves:
//!   each is also caused by the previous one (progress before its answer).
//! - Anything else the server sent (its own requests, unsolicited notifications) is caused
//!   by the latest client message recorded before it, conservatively what it was sent in
//!   response to. Optional client messages (a probe, a repeated listing) are passed over:
//!   the live client may never send them.
//!
//! A server request the tape holds no answer to in a whole recording is held: given no
//! earlier than its recorded delay after its cause ([`Causes::hold`]), because a client
//! that was recorded leaving before it came may be leaving again.

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use super::steps::Step;
use crate::message::{self, Kind};
use crate::tape::Direction;
use crate::upstream::script::Pairs;

/// The causes of every step of one connection, and which recv steps are ready.
#[derive(Debug, Default)]
pub(super) struct Causes {
    /// For each step, the recv steps it is a cause of.
    dependents: Vec<Vec<usize>>,
    /// For each recv step, how many of its causes have not happened yet.
    waiting: Vec<usize>,
    /// Recv steps whose causes have all happened, not given yet, in step order.
    ready: BTreeSet<usize>,
    /// For a held server request: its recorded delay after its cause.
    hold: Vec<Option<Duration>>,
}

impl Causes {
    /// The causes of `steps`, paired by `pairs`; `whole` when the recording of the
    /// connection is whole (what it does not hold did not happen).
    pub(super) fn of(steps: &[Step], pairs: &Pairs, whole: bool) -> Causes {
        let n = steps.len();
        let mut causes = Causes {
            dependents: vec![Vec::new(); n],
            waiting: vec![0; n],
            ready: BTreeSet::new(),
            hold: vec![None; n],
        };
        // Progress token (raw JSON) → the latest client request that issued it.
        let mut token_of: HashMap<&str, usize> = HashMap::new();
        // Client request step → its recorded cancel step.
        let mut cancel_of: HashMap<usize, usize> = HashMap::new();
        // Client request step → the latest server message tied to it.
        let mut last_tied: HashMap<usize, usize> = HashMap::new();
        // Recorded id → the latest client request sent with it.
        let mut sent: HashMap<&str, usize> = HashMap::new();
        let mut last_client: Option<usize> = None;
        // The client's answers to server requests so far: (step, the request it answers).
        let mut client_answers: Vec<(usize, usize)> = Vec::new();
        for (i, s) in steps.iter().enumerate() {
            let msg = &s.message;
            if s.dir == Direction::Send {
                if msg.kind() == Kind::Request {
                    if let Some(id) = msg.id() {
                        sent.insert(id, i);
                    }
                    let path = ["params", "_meta", "progressToken"];
                    if let Some(t) = message::raw_member(msg.text(), &path) {
                        token_of.insert(t, i);
                    }
                }
                if msg.method() == Some("notifications/cancelled")
                    && let Some(&req) = message::raw_member(msg.text(), &["params", "requestId"])
                        .and_then(|id| sent.get(id))
                {
                    cancel_of.insert(req, i);
                }
                if !s.optional {
                    last_client = Some(i);
                }
                if let Some(asked) = pairs.request_of(i) {
                    client_answers.push((i, asked));
                }
                continue;
            }
            let mut after = Vec::new();
            match tied(s, i, pairs, &token_of) {
                Some(req) => {
                    after.push(req);
                    let previous = last_tied.insert(req, i);
                    after.extend(previous);
                    after.extend(cancel_of.get(&req).copied());
                    // The client's answers to server requests asked since this request
                    // (since the previous tied message: it waits for those before).
                    let since = previous.unwrap_or(req);
                    let from = client_answers.partition_point(|&(j, _)| j <= since);
                    after.extend(
                        client_answers[from..]
                            .iter()
                            .filter(|&&(_, asked)| asked > req)
                            .map(|&(j, _)| j),
                    );
                }
                None => {
                    after.extend(last_client);
                    if whole && msg.kind() == Kind::Request && pairs.answer_of(i).is_none() {
                        let gap = match (last_client.and_then(|c| steps[c].ts), s.ts) {
                            (Some(a), Some(b)) => b.duration_since(a).unwrap_or_default(),
                            _ => Duration::ZERO,
                        };
                        causes.hold[i] = Some(gap);
                    }
                }
            }
            after.sort_unstable();
            after.dedup();
            causes.waiting[i] = after.len();
            for c in after {
                causes.dependents[c].push(i);
            }
            if causes.waiting[i] == 0 {
                causes.ready.insert(i);
            }
        }
        causes
    }

    /// Step `i` has happened (matched, given, or passed over): its dependents may be ready.
    pub(super) fn happened(&mut self, i: usize) {
        let Some(deps) = self.dependents.get_mut(i) else {
            return;
        };
        for d in std::mem::take(deps) {
            self.waiting[d] = self.waiting[d].saturating_sub(1);
            if self.waiting[d] == 0 {
                self.ready.insert(d);
            }
        }
    }

    /// The first ready recv step, taken out of the ready set.
    pub(super) fn next_ready(&mut self) -> Option<usize> {
        self.ready.pop_first()
    }

    /// For a server request the tape holds no answer to: how long after its cause it was
    /// recorded, the least time to hold it.
    pub(super) fn hold(&self, i: usize) -> Option<Duration> {
        self.hold.get(i).copied().flatten()
    }
}

/// The client request recv step `i` belongs to: the request an answer answers, or the
/// request that issued a notification's progress token.
fn tied(step: &Step, i: usize, pairs: &Pairs, token_of: &HashMap<&str, usize>) -> Option<usize> {
    let msg = &step.message;
    match msg.kind() {
        Kind::Response | Kind::Error => pairs.request_of(i),
        Kind::Notification if msg.method() == Some("notifications/progress") => {
            message::raw_member(msg.text(), &["params", "progressToken"])
                .and_then(|t| token_of.get(t).copied())
        }
        _ => None,
    }
}
