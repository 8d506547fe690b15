//! Replay of sessionless (2026-07-28) requests: each is matched on its own.
//!
//! A stateless request has no connection state to claim, so it is not given a recorded
//! connection ([`crate::upstream::pick`]); it is matched against every **exchange** of
//! the server the tape holds: a client request of a connection recorded without an
//! `initialize` (one exchange per connection when the HTTP front recorded it, a sequence
//! of them when the stdio front did), with its recorded answer and the server messages
//! tied to it — progress for its token, and, in a connection that holds that exchange
//! alone, whatever else was recorded before the answer (its stream's messages).
//!
//! The live request gets the first unused exchange whose request matches (the replay's
//! [`Matcher`], `_meta` ignored), else the last used one that matches again; its
//! recorded messages go out with the live id and progress token. A multi-round-trip
//! retry carries the `requestState` the replay gave, so it matches as recorded. No match
//! is a divergence: the client gets [`DIVERGED_CODE`] naming the closest recorded
//! request, and the verdicts ([`Exchanges::verdicts`]) say so. Each recorded connection
//! any exchange was used from has a verdict; its exchanges never used are leftovers.
//!
//! An exchange the server refused (a recorded `$http/status`) is answered with that
//! refusal ([`Reply::Refused`]: the front answers the same status, stdio a JSON-RPC
//! error); one its client cancelled (`$http/cancelled`) gets nothing, as recorded; one
//! whose outcome a cut recording lost gets the tape-end divergence error, and its
//! connection's verdict fails ([`outcome`]). A live `server/discover` no exchange
//! matches is no divergence: it gets the server's recorded answer to one elsewhere in
//! the tape (a session's, too), or its recorded refusal of one, else method-not-found,
//! so that its client falls back — a note in the verdicts.
//!
//! [`StatelessLink`] is the [`Link`] of one such request: what the front's session task
//! drives, like any other link. It never ends the exchanges' state: they are shared by
//! every sessionless request of the front.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use crate::error::{HttpError, LinkError, Result};
use crate::matcher::{self, Matcher};
use crate::message::{self, Kind, Message};
use crate::tape::close::CloseReason;
use crate::tape::{Direction, ServerTape};
use crate::upstream::replay::{DIVERGED_CODE, Options, any, error_line, summary};
use crate::upstream::script::Ending;
use crate::upstream::{Closed, Incoming, Link};
use crate::verdict::{Leftover, Mismatch, Verdict};

mod outcome;

use outcome::{Outcome, Probe};

/// The JSON-RPC code of a method the server does not have.
const METHOD_NOT_FOUND: i64 = -32601;

/// Where a request names its progress token.
const TOKEN: [&str; 3] = ["params", "_meta", "progressToken"];

/// One recorded stateless request and what came back for it.
#[derive(Debug)]
struct Exchange {
    /// Index of its recorded connection in [`Exchanges::conns`].
    conn: usize,
    line: usize,
    request: Message,
    /// What went to the client for it, in recorded order, the answer last.
    given: Vec<Message>,
    /// How it ended: answered, refused, cancelled, or lost.
    outcome: Outcome,
    used: bool,
    /// The request as the matcher compares it, computed once: a request that matches no
    /// exchange is compared with every one, under the front's lock.
    normalized: std::sync::OnceLock<serde_json::Value>,
}

/// What a live request is given, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// A line for the client (no newline).
    Line(Vec<u8>),
    /// The recorded refusal: the HTTP status and body the server answered.
    Refused {
        /// The status code.
        status: u16,
        /// The answer's body.
        body: String,
    },
}

/// A recorded connection exchanges come from.
#[derive(Debug)]
struct Conn {
    id: String,
    first_line: usize,
    used: bool,
    /// Where its recording ended before an exchange used had its outcome.
    tape_end: Option<String>,
}

/// Every stateless exchange of one server in a tape, and what the live requests used.
#[derive(Debug)]
pub struct Exchanges {
    server: String,
    matcher: Matcher,
    conns: Vec<Conn>,
    list: Vec<Exchange>,
    /// The last exchange used, for a request that matches none unused.
    last: Option<usize>,
    /// Client messages matched, recorded messages given.
    matched: usize,
    answered: usize,
    /// The divergences, in order.
    diverged: Vec<Mismatch>,
    /// The server's recorded outcome of a `server/discover` anywhere in the tape.
    probe: Option<Probe>,
    /// What is worth knowing but no failure.
    notes: Vec<String>,
}

/// The exchanges, shared by the front's sessionless requests.
pub type Shared = Arc<Mutex<Exchanges>>;

impl Exchanges {
    /// The stateless exchanges of `tape`'s server.
    pub fn of(tape: &ServerTape, opts: &Options) -> Exchanges {
        let mut all = Exchanges {
            server: tape.server.clone(),
            matcher: opts.matcher.clone(),
            conns: Vec::new(),
            list: Vec::new(),
            last: None,
            matched: 0,
            answered: 0,
            diverged: Vec::new(),
            probe: None,
            notes: Vec::new(),
        };
        for i in 0..tape.len() {
            let (t, conn) = tape.connection(i);
            let entries: Vec<_> = conn.entries.iter().map(|&e| &t.entries[e]).collect();
            if all.probe.is_none() {
                all.probe = outcome::probe(&entries);
            }
            let sends = || entries.iter().filter(|e| e.meta.dir == Direction::Send);
            if sends().any(|e| e.message.method() == Some("initialize")) {
                continue;
            }
            let requests = sends()
                .filter(|e| e.message.kind() == Kind::Request)
                .count();
            if requests == 0 {
                continue;
            }
            let index = all.conns.len();
            all.conns.push(Conn {
                id: conn.id.clone(),
                first_line: entries.first().map_or(0, |e| e.line),
                used: false,
                tape_end: None,
            });
            let ending = Ending::of(&t, &conn);
            for (at, e) in entries.iter().enumerate() {
                if e.meta.dir != Direction::Send || e.message.kind() != Kind::Request {
                    continue;
                }
                let id = e.message.id();
                let token = message::raw_member(e.message.text(), &TOKEN);
                let mut given = Vec::new();
                let mut answered = false;
                for r in entries[at + 1..]
                    .iter()
                    .filter(|r| r.meta.dir == Direction::Recv)
                {
                    let m = &r.message;
                    if matches!(m.kind(), Kind::Response | Kind::Error) {
                        if m.id() == id {
                            given.push(m.clone());
                            answered = true;
                            break;
                        }
                        continue;
                    }
                    let progress = m.method() == Some("notifications/progress");
                    let its_token = token.is_some()
                        && message::raw_member(m.text(), &["params", "progressToken"]) == token;
                    if (progress && its_token) || (!progress && requests == 1) {
                        given.push(m.clone());
                    }
                }
                all.list.push(Exchange {
                    conn: index,
                    line: e.line,
                    request: e.message.clone(),
                    given,
                    outcome: outcome::outcome(&entries, at, answered, requests == 1, &ending),
                    used: false,
                    normalized: std::sync::OnceLock::new(),
                });
            }
        }
        all
    }

    /// True when `live` would be answered from the exchanges: a request some exchange
    /// matches, or a probe (answered anyway); a notification or an answer (owed nothing).
    pub fn accepts(&self, live: &Message) -> bool {
        if live.kind() != Kind::Request || live.method() == Some("server/discover") {
            return true;
        }
        let norm = std::sync::OnceLock::new();
        self.list.iter().any(|e| {
            self.matcher.decides(&e.request, live).unwrap_or_else(|| {
                let recorded = e
                    .normalized
                    .get_or_init(|| self.matcher.normalize(&e.request));
                matcher::equal(recorded, norm.get_or_init(|| self.matcher.normalize(live)))
            })
        })
    }

    /// What the client gets for the live message `live`: the recorded messages of the
    /// exchange it matches, rewritten for it, then its recorded refusal or the tape-end
    /// error when it has one; or the divergence error. A notification or an answer gets
    /// nothing (nothing is owed for it).
    pub fn answer(&mut self, live: &Message) -> Vec<Reply> {
        let Some(id) = live.id().filter(|_| live.kind() == Kind::Request) else {
            return Vec::new();
        };
        let live_norm = std::sync::OnceLock::new();
        let fits = |e: &Exchange| {
            let m = &self.matcher;
            m.decides(&e.request, live).unwrap_or_else(|| {
                let recorded = e.normalized.get_or_init(|| m.normalize(&e.request));
                matcher::equal(recorded, live_norm.get_or_init(|| m.normalize(live)))
            })
        };
        let unused = self.list.iter().position(|e| !e.used && fits(e));
        let again = self.last.filter(|&l| fits(&self.list[l]));
        let again = again.or_else(|| self.list.iter().rposition(|e| e.used && fits(e)));
        let Some(i) = unused.or(again) else {
            if live.method() == Some("server/discover") {
                return vec![self.probed(id)];
            }
            return vec![Reply::Line(self.diverge(live, id))];
        };
        self.matched += 1;
        self.last = Some(i);
        let exchange = &mut self.list[i];
        exchange.used = true;
        self.conns[exchange.conn].used = true;
        let token = message::raw_member(live.text(), &TOKEN);
        let mut out: Vec<Reply> = exchange
            .given
            .iter()
            .map(|m| Reply::Line(rewrite(m, id, token)))
            .collect();
        self.answered += out.len();
        match &exchange.outcome {
            Outcome::Answered | Outcome::Cancelled => {}
            Outcome::Refused { status, body } => out.push(Reply::Refused {
                status: *status,
                body: body.clone(),
            }),
            Outcome::Lost(why) => {
                let end = format!(
                    "it holds no answer to {} (tape line {}); {why}",
                    summary(&exchange.request),
                    exchange.line
                );
                let conn = &mut self.conns[exchange.conn];
                let text = format!(
                    "mcptape replay of server `{}` connection `{}`: the tape ends here: {end}",
                    self.server, conn.id
                );
                conn.tape_end.get_or_insert(end);
                let mut line = error_line(id, DIVERGED_CODE, &text);
                line.pop();
                out.push(Reply::Line(line));
            }
        }
        out
    }

    /// The answer to a live `server/discover` (request `id`) no exchange matches: the
    /// server's recorded outcome of one elsewhere in the tape, else method-not-found.
    fn probed(&mut self, id: &str) -> Reply {
        let (reply, how) = match &self.probe {
            Some(Probe::Answer(m)) => (
                Reply::Line(rewrite(m, id, None)),
                "as the server answered one elsewhere in the tape",
            ),
            Some(Probe::Refused { status, body }) => (
                Reply::Refused {
                    status: *status,
                    body: body.clone(),
                },
                "with the refusal the server gave one elsewhere in the tape",
            ),
            None => {
                let mut line = error_line(id, METHOD_NOT_FOUND, "Method not found");
                line.pop();
                (Reply::Line(line), "with method-not-found")
            }
        };
        self.notes.push(format!(
            "the client sent a `server/discover` the tape holds no stateless exchange for: answered {how}"
        ));
        reply
    }

    /// The divergence of `live` (request `id`): its verdict kept, its error given.
    fn diverge(&mut self, live: &Message, id: &str) -> Vec<u8> {
        let got = summary(live);
        let closest = self.closest(live);
        let (why, mismatch) = match closest {
            Some((line, request)) => {
                let why = format!(
                    "mcptape replay of server `{}`: no recorded stateless request matches {got}; the closest is {} (tape line {line})",
                    self.server,
                    summary(request)
                );
                (why, any::mismatch(&self.matcher, closest, live))
            }
            None => {
                let why = any::no_such_method(&self.server, live, "stateless request");
                let mismatch = Mismatch {
                    line: None,
                    expected: format!(
                        "a recorded stateless {} request",
                        live.method().unwrap_or("?")
                    ),
                    got,
                    diff: String::new(),
                    later_line: None,
                };
                (why, mismatch)
            }
        };
        self.diverged.push(mismatch);
        let mut line = error_line(id, DIVERGED_CODE, &why);
        line.pop();
        line
    }

    /// The recorded request most like `live` ([`any::closest`]), with its tape line.
    fn closest(&self, live: &Message) -> Option<(usize, &Message)> {
        any::closest(live, self.list.iter().map(|e| (e.line, &e.request)))
    }

    /// The verdicts: one per recorded connection an exchange was used from (its unused
    /// exchanges are leftovers), and one for the divergences, if any (the first its
    /// mismatch, the others its problems: a report directory keeps one verdict per
    /// connection, and divergences belong to none).
    pub fn verdicts(&self) -> Vec<Verdict> {
        let mut out: Vec<Verdict> = Vec::new();
        for (c, conn) in self.conns.iter().enumerate().filter(|(_, c)| c.used) {
            let mine = || self.list.iter().filter(move |e| e.conn == c);
            out.push(Verdict {
                server: self.server.clone(),
                conn: Some(conn.id.clone()),
                matched: mine().filter(|e| e.used).count(),
                answered: mine().filter(|e| e.used).map(|e| e.given.len()).sum(),
                leftovers: mine()
                    .filter(|e| !e.used)
                    .map(|e| Leftover {
                        line: e.line,
                        summary: summary(&e.request),
                    })
                    .collect(),
                first_line: Some(conn.first_line),
                tape_end: conn.tape_end.clone(),
                ..Verdict::default()
            });
        }
        if let Some((first, rest)) = self.diverged.split_first() {
            out.push(Verdict {
                server: self.server.clone(),
                mismatch: Some(first.clone()),
                problems: rest
                    .iter()
                    .map(|m| {
                        format!(
                            "also diverged: no recorded stateless request matches {}",
                            m.got
                        )
                    })
                    .collect(),
                ..Verdict::default()
            });
        }
        match out.first_mut() {
            Some(first) => first.notes.extend(self.notes.iter().cloned()),
            None if !self.notes.is_empty() => out.push(Verdict {
                server: self.server.clone(),
                notes: self.notes.clone(),
                ..Verdict::default()
            }),
            None => {}
        }
        out
    }
}

/// A recorded message for the live request `id` with progress token `token`.
fn rewrite(recorded: &Message, id: &str, token: Option<&str>) -> Vec<u8> {
    if matches!(recorded.kind(), Kind::Response | Kind::Error) {
        return recorded
            .with_id(id)
            .unwrap_or_else(|| recorded.text().to_owned())
            .into_bytes();
    }
    let path = ["params", "progressToken"];
    let text = recorded.text();
    match token {
        Some(live) if recorded.method() == Some("notifications/progress") => {
            message::replace_member(text, &path, live).unwrap_or_else(|| text.to_owned())
        }
        _ => text.to_owned(),
    }
    .into_bytes()
}

/// One sessionless request replayed: the shared exchanges, and what it is owed.
pub struct StatelessLink {
    shared: Shared,
    queue: VecDeque<Incoming>,
}

impl StatelessLink {
    /// A link over the front's `shared` exchanges.
    pub fn new(shared: Shared) -> StatelessLink {
        StatelessLink {
            shared,
            queue: VecDeque::new(),
        }
    }
}

impl Link for StatelessLink {
    async fn send(&mut self, msg: Message) -> Result<(), LinkError> {
        let out = match self.shared.lock() {
            Ok(mut all) => all.answer(&msg),
            Err(_) => Vec::new(),
        };
        self.queue.extend(out.into_iter().map(|reply| match reply {
            Reply::Line(line) => Incoming::Message(Message::new(line)),
            Reply::Refused { status, body } => Incoming::Refused {
                request: msg.clone(),
                error: HttpError::Status {
                    url: "the tape".to_owned(),
                    status,
                    body: bytes::Bytes::from(body),
                },
            },
        }));
        Ok(())
    }

    async fn next(&mut self) -> Option<Incoming> {
        match self.queue.pop_front() {
            Some(incoming) => Some(incoming),
            // Nothing is owed until the client says more.
            None => std::future::pending().await,
        }
    }

    async fn close(self, _reason: CloseReason) -> Result<Closed> {
        // The verdicts are the shared exchanges', taken once when the front stops.
        Ok(Closed::Remote)
    }
}

#[cfg(test)]
#[path = "stateless_tests.rs"]
mod tests;
