//! The exchanges of a server's recorded connections, for `--match any`: each client
//! request (less pings, answered live) with what the server sent for it.
//!
//! A server message recorded between a request and its answer is tied to it when it is
//! progress for its token; any other server message (logging, a server request such as
//! sampling, elicitation or roots) is tied to the latest request still unanswered at that
//! point of the connection, and one recorded when none was is no exchange's. The client's
//! own answers and notifications belong to none: they are taken whenever they come.

use std::time::{Duration, SystemTime};

use crate::message::{self, Kind, Message};
use crate::tape::{Direction, Entry, ServerTape};

/// Where a request names its progress token.
pub(super) const TOKEN: [&str; 3] = ["params", "_meta", "progressToken"];

/// Requests that open a connection: answered from any connection without claiming it.
pub(super) const HANDSHAKE: &[&str] = &["initialize", "server/discover"];

/// A recorded connection exchanges come from.
#[derive(Debug)]
pub(super) struct Conn {
    pub(super) id: String,
    pub(super) first_line: Option<usize>,
}

/// One recorded message given for an exchange, with its recorded gap before it.
#[derive(Debug)]
pub(super) struct Given {
    pub(super) message: Message,
    pub(super) delay: Duration,
}

/// One recorded client request and what the server sent for it.
#[derive(Debug)]
pub(super) struct Exchange {
    /// Index of its connection in the engine's list.
    pub(super) conn: usize,
    /// Its tape line.
    pub(super) line: usize,
    pub(super) request: Message,
    /// What went to the client for it, in recorded order, the answer last.
    pub(super) given: Vec<Given>,
    /// The tape holds its answer.
    pub(super) answered: bool,
    /// Made up by an importer: matches any `initialize`.
    pub(super) synthesized: bool,
    pub(super) used: bool,
    /// The request as the matcher compares it, computed once.
    pub(super) normalized: std::sync::OnceLock<serde_json::Value>,
}

impl Exchange {
    /// An `initialize` or `server/discover`.
    pub(super) fn is_handshake(&self) -> bool {
        self.request
            .method()
            .is_some_and(|m| HANDSHAKE.contains(&m))
    }
}

/// A request of the connection being read that is not answered yet.
struct Pending {
    /// Its exchange, an index into the list.
    exchange: usize,
    /// Its recorded id (raw JSON).
    id: Option<String>,
    /// Its recorded progress token (raw JSON).
    token: Option<String>,
    /// When the latest message given for it (or it) was recorded.
    last: Option<SystemTime>,
}

fn ts_of(entry: &Entry) -> Option<SystemTime> {
    humantime::parse_rfc3339(entry.meta.ts.as_deref()?).ok()
}

fn gap(from: Option<SystemTime>, to: Option<SystemTime>) -> Duration {
    match (from, to) {
        (Some(a), Some(b)) => b.duration_since(a).unwrap_or_default(),
        _ => Duration::ZERO,
    }
}

/// Every connection of `tape` and every exchange in them, in tape order.
pub(super) fn of(tape: &ServerTape) -> (Vec<Conn>, Vec<Exchange>) {
    let mut conns = Vec::new();
    let mut list: Vec<Exchange> = Vec::new();
    for c in 0..tape.len() {
        let (t, conn) = tape.connection(c);
        let entries: Vec<&Entry> = conn.entries.iter().map(|&e| &t.entries[e]).collect();
        conns.push(Conn {
            id: conn.id.clone(),
            first_line: entries.first().map(|e| e.line),
        });
        let mut pending: Vec<Pending> = Vec::new();
        for e in entries {
            let m = &e.message;
            match e.meta.dir {
                Direction::Send if m.kind() == Kind::Request && m.method() != Some("ping") => {
                    pending.push(Pending {
                        exchange: list.len(),
                        id: m.id().map(str::to_owned),
                        token: message::raw_member(m.text(), &TOKEN).map(str::to_owned),
                        last: ts_of(e),
                    });
                    list.push(Exchange {
                        conn: c,
                        line: e.line,
                        request: m.clone(),
                        given: Vec::new(),
                        answered: false,
                        synthesized: e.meta.synthesized(),
                        used: false,
                        normalized: std::sync::OnceLock::new(),
                    });
                }
                Direction::Recv => {
                    let answer = matches!(m.kind(), Kind::Response | Kind::Error);
                    let token = (m.method() == Some("notifications/progress"))
                        .then(|| message::raw_member(m.text(), &["params", "progressToken"]))
                        .flatten();
                    let at = if answer {
                        pending
                            .iter()
                            .position(|p| p.id.as_deref().is_some_and(|id| Some(id) == m.id()))
                    } else {
                        token
                            .and_then(|t| {
                                pending.iter().position(|p| p.token.as_deref() == Some(t))
                            })
                            .or_else(|| pending.len().checked_sub(1))
                    };
                    let Some(at) = at else { continue };
                    let ts = ts_of(e);
                    let p = &mut pending[at];
                    let exchange = &mut list[p.exchange];
                    exchange.given.push(Given {
                        message: m.clone(),
                        delay: gap(p.last, ts),
                    });
                    p.last = ts.or(p.last);
                    if answer {
                        exchange.answered = true;
                        pending.remove(at);
                    }
                }
                _ => {}
            }
        }
    }
    (conns, list)
}
