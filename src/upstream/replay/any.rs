//! `--match any`: the replay as a mock. A live request gets the answer of the first
//! unused recorded exchange of its server that matches it ([`Matcher`]: `_meta` left
//! out, `--ignore`, `[REDACTED]` matches anything, `initialize` on its method), wherever
//! it is in the tape; once every matching exchange is used, the last one used is given
//! again. An exchange is a client request with what the server sent for it ([`script`]):
//! progress for its token, logging and server requests recorded before its answer, then
//! the answer. Going out, a message gets the live id and progress token, and an
//! `initialize` result the asked protocol version when this server spoke it.
//!
//! Which connection answers: first the client's own ones (claimed in the report
//! directory, so that several clients of one `mcptape replay` each get their own), then
//! unclaimed ones (claimed as they are used), then those other clients claimed (shared,
//! never claimed twice). A handshake is answered without claiming anything: it does not
//! tell connections apart.
//!
//! A ping is answered at once; the client's notifications and its answers to server
//! requests are taken whenever they come. A `server/discover` probe (2026-07-28
//! clients) is optional, as in strict replay: one the tape holds no exchange for gets
//! the server's recorded answer to a probe elsewhere in the tape, else method-not-found
//! (the client falls back to `initialize`), noted in the verdict.
//!
//! A request that matches nothing gets [`DIVERGED_CODE`] naming the closest recorded
//! request ([`closest`]: the same method and tool, else the same method; when the tape
//! holds no request of its method, it says so instead), and the verdict records it with
//! a diff against that request (it fails: `DIVERGED`), but the replay goes on. The
//! recorded requests of the client's connections it never sent are listed as unused,
//! failing the verdict only with `--fail-on-unused` (then as leftovers).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::matcher::{self, Matcher};
use crate::message::{self, Kind, Message};
use crate::report;
use crate::tape::ServerTape;
use crate::upstream::replay::{
    DIVERGED_CODE, METHOD_NOT_FOUND, Options, Out, ServerFacts, error_line, summary,
};
use crate::verdict::{Leftover, Mismatch, Verdict};

mod closest;
mod script;

pub use closest::{closest, mismatch, no_such_method};
use script::{Conn, Exchange, TOKEN};

/// JSON-RPC "parse error".
const PARSE_ERROR: i64 = -32700;

/// Who holds a recorded connection, as this client knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Claim {
    /// Nobody yet.
    Open,
    /// This client.
    Mine,
    /// Another client of the run.
    Taken,
}

/// Every recorded exchange of one server, served to one live client.
#[derive(Debug)]
pub struct AnyReplay {
    server: String,
    matcher: Matcher,
    fail_on_unused: bool,
    report: Option<PathBuf>,
    conns: Vec<Conn>,
    claims: Vec<Claim>,
    /// Connections this client was answered from (a handshake aside).
    served: Vec<bool>,
    list: Vec<Exchange>,
    /// The last exchange used, for a request whose matches are all used.
    last: Option<usize>,
    /// Protocol versions this server answered anywhere in the tape.
    versions: HashSet<String>,
    /// This server's recorded answer to a `server/discover` probe, if any.
    discover_answer: Option<Message>,
    /// Notes for the verdict (an unrecorded probe answered).
    notes: Vec<String>,
    /// Handshake methods the client sent (their recorded twins are not unused).
    shook: HashSet<String>,
    /// The connection the first handshake was answered from.
    shook_from: Option<usize>,
    matched: usize,
    answered: usize,
    missed: Vec<Mismatch>,
    problems: Vec<String>,
    tape_end: Option<String>,
}

impl AnyReplay {
    /// The exchanges of `tape`'s server (whose `facts` are given), for one client whose
    /// proxy shares `report` with the other proxies of its run, if any.
    pub fn new(
        tape: &ServerTape,
        report: Option<&Path>,
        opts: &Options,
        facts: &ServerFacts,
    ) -> AnyReplay {
        let (conns, list) = script::of(tape);
        let claims = conns
            .iter()
            .map(|c| match report {
                Some(dir) if report::is_claimed(dir, &tape.server, &c.id) => Claim::Taken,
                _ => Claim::Open,
            })
            .collect();
        AnyReplay {
            server: tape.server.clone(),
            matcher: opts.matcher.clone(),
            fail_on_unused: opts.fail_on_unused,
            report: report.map(Path::to_path_buf),
            served: vec![false; conns.len()],
            conns,
            claims,
            list,
            last: None,
            versions: facts.versions.clone(),
            discover_answer: facts.discover_answer.clone(),
            notes: Vec::new(),
            shook: HashSet::new(),
            shook_from: None,
            matched: 0,
            answered: 0,
            missed: Vec::new(),
            problems: Vec::new(),
            tape_end: None,
        }
    }

    fn fits(
        &self,
        e: &Exchange,
        live: &Message,
        norm: &std::sync::OnceLock<serde_json::Value>,
    ) -> bool {
        if e.synthesized
            && e.request.method() == Some("initialize")
            && live.method() == Some("initialize")
        {
            return true;
        }
        let m = &self.matcher;
        m.decides(&e.request, live).unwrap_or_else(|| {
            let recorded = e.normalized.get_or_init(|| m.normalize(&e.request));
            matcher::equal(recorded, norm.get_or_init(|| m.normalize(live)))
        })
    }

    /// True when the live message would be answered from the tape: a request some
    /// recorded exchange matches (or a ping); any notification or answer.
    pub fn accepts(&self, live: &Message) -> bool {
        if !live.is_object() {
            return false;
        }
        if live.kind() != Kind::Request || live.method() == Some("ping") {
            return true;
        }
        let norm = std::sync::OnceLock::new();
        self.list.iter().any(|e| self.fits(e, live, &norm))
    }

    /// The exchange that answers `live`, claiming its connection when it is open.
    fn pick(&mut self, live: &Message) -> Option<usize> {
        let norm = std::sync::OnceLock::new();
        let fitting: Vec<usize> = (0..self.list.len())
            .filter(|&i| self.fits(&self.list[i], live, &norm))
            .collect();
        let unused = |claim: Claim, me: &AnyReplay| {
            fitting
                .iter()
                .copied()
                .filter(|&i| !me.list[i].used && me.claims[me.list[i].conn] == claim)
                .collect::<Vec<usize>>()
        };
        if let Some(&i) = unused(Claim::Mine, self).first() {
            return Some(i);
        }
        for i in unused(Claim::Open, self) {
            if self.list[i].is_handshake() || self.claim(self.list[i].conn) {
                return Some(i);
            }
        }
        if let Some(&i) = unused(Claim::Taken, self).first() {
            return Some(i);
        }
        self.last
            .filter(|l| fitting.contains(l))
            .or_else(|| fitting.iter().rev().copied().find(|&i| self.list[i].used))
    }

    /// Claims connection `c` for this client; false when another client has it.
    fn claim(&mut self, c: usize) -> bool {
        let claimed = match &self.report {
            None => Ok(true),
            Some(dir) => report::try_claim(dir, &self.server, &self.conns[c].id),
        };
        let ok = claimed.unwrap_or_else(|problem| {
            self.problems.push(problem);
            false
        });
        self.claims[c] = if ok { Claim::Mine } else { Claim::Taken };
        ok
    }

    /// One line from the client; what to send back.
    pub fn on_client(&mut self, text: &[u8]) -> Vec<Out> {
        if text.trim_ascii().is_empty() {
            return Vec::new();
        }
        let live = Message::new(text.to_vec());
        if !live.is_object() {
            let shown = String::from_utf8_lossy(&text[..text.len().min(80)]).into_owned();
            self.problems.push(format!(
                "the client sent a line that is not a JSON-RPC message: {shown}"
            ));
            let why = format!("Parse error: not a JSON-RPC message: {shown}");
            return vec![now(error_line("null", PARSE_ERROR, &why))];
        }
        let Some(id) = live.id().filter(|_| live.kind() == Kind::Request) else {
            // A notification or an answer to a server request: nothing is owed for it.
            return Vec::new();
        };
        let id = id.to_owned();
        if live.method() == Some("ping") {
            let line = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}\n");
            return vec![now(line.into_bytes())];
        }
        let Some(i) = self.pick(&live) else {
            if live.method() == Some("server/discover") {
                return vec![now(self.unrecorded_probe(&id))];
            }
            return vec![now(self.miss(&live, &id))];
        };
        self.given(i, &live, &id)
    }

    /// What exchange `i` gives the live request (`id`).
    fn given(&mut self, i: usize, live: &Message, id: &str) -> Vec<Out> {
        self.matched += 1;
        self.last = Some(i);
        if let Some(m) = live.method().filter(|_| self.list[i].is_handshake()) {
            self.shook.insert(m.to_owned());
        }
        let token = message::raw_member(live.text(), &TOKEN).map(str::to_owned);
        let asked = (live.method() == Some("initialize"))
            .then(|| message::raw_member(live.text(), &["params", "protocolVersion"]))
            .flatten()
            .filter(|v| self.versions.contains(*v) || self.list[i].synthesized)
            .map(str::to_owned);
        let e = &mut self.list[i];
        e.used = true;
        if e.is_handshake() {
            // It tells no connection apart: the connection is not served by it alone.
            self.shook_from.get_or_insert(e.conn);
        } else {
            self.served[e.conn] = true;
        }
        let mut out: Vec<Out> = e
            .given
            .iter()
            .map(|g| Out {
                delay: g.delay,
                immediate: false,
                line: rewrite(&g.message, id, token.as_deref(), asked.as_deref()),
                stream: None,
                hold: None,
            })
            .collect();
        self.answered += out.len();
        if !e.answered {
            let end = format!(
                "it holds no answer to {} (tape line {})",
                summary(&e.request),
                e.line
            );
            let text = format!(
                "mcptape replay of server `{}` connection `{}`: the tape ends here: {end}",
                self.server, self.conns[e.conn].id
            );
            self.tape_end.get_or_insert(end);
            out.push(now(error_line(id, DIVERGED_CODE, &text)));
        }
        out
    }

    /// A `server/discover` probe (2026-07-28 clients) no exchange matches: optional, as
    /// in strict replay. It gets the server's recorded answer to a probe elsewhere in
    /// the tape, or method-not-found (so the client falls back to `initialize`), noted.
    fn unrecorded_probe(&mut self, id: &str) -> Vec<u8> {
        let (line, how) = match &self.discover_answer {
            Some(answer) => match message::replace_member(answer.text(), &["id"], id) {
                Some(text) => (
                    format!("{text}\n").into_bytes(),
                    "with the answer the server gave one elsewhere in the tape",
                ),
                None => (
                    error_line(id, METHOD_NOT_FOUND, "Method not found"),
                    "with method-not-found",
                ),
            },
            None => (
                error_line(id, METHOD_NOT_FOUND, "Method not found"),
                "with method-not-found",
            ),
        };
        self.notes.push(format!(
            "the client sent a `server/discover` the tape holds no exchange for: answered {how}"
        ));
        line
    }

    /// A request no exchange matches: its divergence kept, its error line.
    fn miss(&mut self, live: &Message, id: &str) -> Vec<u8> {
        let got = summary(live);
        let found = closest(live, self.list.iter().map(|e| (e.line, &e.request)));
        let why = match found {
            Some((line, recorded)) => format!(
                "mcptape replay of server `{}`: no recorded request matches {got}; the closest is {} (tape line {line})",
                self.server,
                summary(recorded)
            ),
            None => no_such_method(&self.server, live, "request"),
        };
        self.missed.push(mismatch(&self.matcher, found, live));
        error_line(id, DIVERGED_CODE, &why)
    }

    /// The verdict, once the client has hung up: its first connection, the others it was
    /// served from, its misses, and the unused requests of the connections it claimed.
    pub fn finish(self) -> Verdict {
        let served: Vec<usize> = (0..self.conns.len()).filter(|&c| self.served[c]).collect();
        let mine = |c: usize| self.claims[c] == Claim::Mine;
        let first = served
            .iter()
            .copied()
            .find(|&c| mine(c))
            .or(served.first().copied())
            .or(self.shook_from);
        let unused: Vec<Leftover> = self
            .list
            .iter()
            .filter(|e| mine(e.conn) && !e.used)
            .filter(|e| {
                !e.request
                    .method()
                    .is_some_and(|m| e.is_handshake() && self.shook.contains(m))
            })
            .map(|e| Leftover {
                line: e.line,
                summary: summary(&e.request),
            })
            .collect();
        let mut missed = self.missed.into_iter();
        let mut problems = self.problems;
        let mismatch = missed.next();
        problems.extend(missed.map(|m| {
            let at = m
                .line
                .map(|l| format!(" (closest: tape line {l})"))
                .unwrap_or_default();
            format!("also diverged: no recorded request matches {}{at}", m.got)
        }));
        let (leftovers, unused) = if self.fail_on_unused {
            (unused, Vec::new())
        } else {
            (Vec::new(), unused)
        };
        Verdict {
            server: self.server,
            conn: first.map(|c| self.conns[c].id.clone()),
            matched: self.matched,
            answered: self.answered,
            mismatch,
            leftovers,
            problems,
            first_line: first.and_then(|c| self.conns[c].first_line),
            tape_end: self.tape_end,
            also: served
                .iter()
                .filter(|&&c| Some(c) != first)
                .map(|&c| self.conns[c].id.clone())
                .collect(),
            unused,
            notes: self.notes,
            ..Verdict::default()
        }
    }
}

/// A line sent at once, outside any exchange.
fn now(line: Vec<u8>) -> Out {
    Out {
        delay: Duration::ZERO,
        immediate: true,
        line,
        stream: None,
        hold: None,
    }
}

/// A recorded message for the live request `id` with progress token `token`; an
/// `initialize` result speaking `asked`.
fn rewrite(recorded: &Message, id: &str, token: Option<&str>, asked: Option<&str>) -> Vec<u8> {
    let text = recorded.text();
    let mut text = match recorded.kind() {
        Kind::Response | Kind::Error => recorded.with_id(id).unwrap_or_else(|| text.to_owned()),
        _ => match token {
            Some(live) if recorded.method() == Some("notifications/progress") => {
                message::replace_member(text, &["params", "progressToken"], live)
                    .unwrap_or_else(|| text.to_owned())
            }
            _ => text.to_owned(),
        },
    };
    let version = ["result", "protocolVersion"];
    if let Some(asked) = asked
        && recorded.kind() == Kind::Response
        && message::raw_member(&text, &["result", "serverInfo"]).is_some()
        && message::raw_member(&text, &version).is_some()
    {
        text = message::replace_member(&text, &version, asked).unwrap_or(text);
    }
    text.push('\n');
    text.into_bytes()
}

#[cfg(test)]
#[path = "any_tests.rs"]
mod tests;
