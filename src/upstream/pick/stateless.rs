//! A stateless (2026-07-28) client served exchange by exchange: the stdio and `call`
//! replay of a tape the HTTP front recorded sessionless.
//!
//! The HTTP front records each sessionless request as a connection of its own, closed
//! `exchange done`. The stateless revision's server infers nothing from earlier requests
//! on the same connection, so when a live client's decisive message (its first that is
//! not handshake) is a stateless request ([`Era::of`]) and the first candidate recorded
//! without `initialize` is such a one-exchange connection, the live connection is served by [`Exchanges`] for the rest
//! of its life — what it sent before (a probe) is matched there too, as history. A
//! recorded refusal reaches a stdio client as the JSON-RPC error a live proxy gives it.
//! Its verdict is the merge of the exchanges' verdicts: it names every recorded
//! connection used ([`Verdict::also`]). A stateless session recorded through the stdio
//! front (one connection of many requests) is no such candidate: it replays as a script.

use std::time::Duration;

use super::Picker;
use crate::era::Era;
use crate::error::HttpError;
use crate::message::{Kind, Message};
use crate::tape::Direction;
use crate::tape::close::{Close, CloseReason};
use crate::upstream::http::error_for;
use crate::upstream::replay::Out;
use crate::upstream::replay::stateless::{Exchanges, Reply};
use crate::upstream::script::Ending;
use crate::verdict::Verdict;

impl Picker {
    /// For the decisive message `msg`: when it is stateless and the
    /// first candidate is an exchange the HTTP front recorded, the exchanges take over
    /// this connection; their answer to it.
    pub(super) fn by_exchange(&mut self, msg: &Message) -> Option<Vec<Out>> {
        if Era::of(msg, None) != Era::Stateless || !self.first_is_exchange() {
            return None;
        }
        let mut all = Exchanges::of(&self.tape, &self.opts);
        for earlier in std::mem::take(&mut self.history) {
            all.answer(&Message::new(earlier));
        }
        let out = replies(&mut all, msg);
        self.exchanges = Some(all);
        self.first = None;
        self.candidates.clear();
        Some(out)
    }

    /// True when the first candidate recorded without `initialize` holds one client
    /// request and was closed `exchange done`: a sessionless exchange of the HTTP front.
    /// (Connections of the other era ahead of it in the tape are passed over.)
    fn first_is_exchange(&self) -> bool {
        for &c in &self.candidates {
            let (tape, conn) = self.tape.connection(c);
            let sends: Vec<_> = conn
                .entries
                .iter()
                .map(|&e| &tape.entries[e])
                .filter(|e| e.meta.dir == Direction::Send)
                .collect();
            if sends
                .iter()
                .any(|e| e.message.method() == Some("initialize"))
            {
                continue;
            }
            let requests = sends
                .iter()
                .filter(|e| e.message.kind() == Kind::Request)
                .count();
            let done = matches!(
                Ending::of(&tape, &conn),
                Ending::Closed(Close {
                    reason: Some(CloseReason::ExchangeDone),
                    ..
                })
            );
            return done && requests == 1;
        }
        false
    }

    /// The merged verdict of the exchanges used.
    pub(super) fn exchanges_verdict(all: &Exchanges, server: &str) -> Verdict {
        let mut out = Verdict {
            server: server.to_owned(),
            ..Verdict::default()
        };
        for v in all.verdicts() {
            match (&out.conn, v.conn) {
                (None, Some(c)) => {
                    out.conn = Some(c);
                    out.first_line = v.first_line;
                }
                (Some(_), Some(c)) => out.also.push(c),
                (_, None) => {}
            }
            out.matched += v.matched;
            out.answered += v.answered;
            match (&out.mismatch, v.mismatch) {
                (None, m) => out.mismatch = m,
                (Some(_), Some(m)) => out.problems.push(format!(
                    "also diverged: {} (expected {})",
                    m.got, m.expected
                )),
                (Some(_), None) => {}
            }
            out.leftovers.extend(v.leftovers);
            out.problems.extend(v.problems);
            out.notes.extend(v.notes);
            out.tape_end = out.tape_end.or(v.tape_end);
        }
        out
    }
}

/// What the exchanges `all` give the client for `msg`, as stdio lines.
pub(super) fn replies(all: &mut Exchanges, msg: &Message) -> Vec<Out> {
    all.answer(msg)
        .into_iter()
        .filter_map(|reply| match reply {
            Reply::Line(line) => Some(line),
            Reply::Refused { status, body } => {
                let error = HttpError::Status {
                    url: "the recorded server".to_owned(),
                    status,
                    body: bytes::Bytes::from(body),
                };
                error_for(msg, &error.to_string())
            }
        })
        .map(|mut line| {
            line.push(b'\n');
            Out {
                delay: Duration::ZERO,
                immediate: false,
                line,
                stream: None,
                hold: None,
            }
        })
        .collect()
}
