//! How a recorded stateless exchange ended ([`Outcome`]), and the recorded probe answer
//! a live `server/discover` gets when the tape holds no exchange for it ([`Probe`]).
//!
//! An exchange is answered (its answer is the last message given), refused (the
//! `$http/status` recorded after the request, before any later client request: a
//! 2025-era server's `400` to a sessionless probe), cancelled (`$http/cancelled` naming
//! its request, or, in a connection of that exchange alone, naming none: its client
//! closed the stream, nothing is owed), or lost (none of these, in a recording that
//! ends without them: the tape-end divergence).

use crate::message::Kind;
use crate::message::Message;
use crate::tape::lifecycle::Lifecycle;
use crate::tape::{Direction, Entry};
use crate::upstream::script::Ending;

/// How one recorded exchange ended.
#[derive(Debug, Clone)]
pub(super) enum Outcome {
    /// Its answer was recorded.
    Answered,
    /// The server refused it with this HTTP status and body.
    Refused {
        /// The status code.
        status: u16,
        /// The answer's body, as text.
        body: String,
    },
    /// Its client closed the stream first: nothing is owed.
    Cancelled,
    /// The tape lacks its outcome: why, for people.
    Lost(String),
}

/// The outcome of the request at `at` in `entries` (one connection's), which `answered`
/// or not; `alone` when the connection holds that request alone; `ending` how the
/// connection's recording ended.
pub(super) fn outcome(
    entries: &[&Entry],
    at: usize,
    answered: bool,
    alone: bool,
    ending: &Ending,
) -> Outcome {
    if answered {
        return Outcome::Answered;
    }
    let id = entries[at].message.id();
    for e in &entries[at + 1..] {
        if !alone && e.meta.dir == Direction::Send && e.message.kind() == Kind::Request {
            break;
        }
        match Lifecycle::of(e) {
            Some(Lifecycle::HttpStatus { status, body }) => {
                return Outcome::Refused { status, body };
            }
            Some(Lifecycle::HttpCancelled { request_id, .. })
                if matches!((request_id.as_deref(), id), (Some(a), Some(b)) if crate::message::same_id(a, b))
                    || (alone && request_id.is_none()) =>
            {
                return Outcome::Cancelled;
            }
            _ => {}
        }
    }
    Outcome::Lost(if ending.is_cut() {
        ending.why()
    } else {
        "the recorded connection closed without its answer".to_owned()
    })
}

/// What the server did with a `server/discover` probe anywhere in a tape.
#[derive(Debug, Clone)]
pub(super) enum Probe {
    /// Its recorded answer (result or error).
    Answer(Message),
    /// Its recorded refusal.
    Refused {
        /// The status code.
        status: u16,
        /// The answer's body, as text.
        body: String,
    },
}

/// The first probe outcome recorded in `entries` (one connection's), if any.
pub(super) fn probe(entries: &[&Entry]) -> Option<Probe> {
    for (at, e) in entries.iter().enumerate() {
        if e.meta.dir != Direction::Send || e.message.method() != Some("server/discover") {
            continue;
        }
        let id = e.message.id();
        for later in &entries[at + 1..] {
            let m = &later.message;
            if later.meta.dir == Direction::Recv
                && matches!(m.kind(), Kind::Response | Kind::Error)
                && m.id() == id
            {
                return Some(Probe::Answer(m.clone()));
            }
            if later.meta.dir == Direction::Send && m.kind() == Kind::Request {
                break;
            }
            if let Some(Lifecycle::HttpStatus { status, body }) = Lifecycle::of(later) {
                return Some(Probe::Refused { status, body });
            }
        }
    }
    None
}
