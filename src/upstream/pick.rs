//! Which recorded connection a live client gets.
//!
//! A tape may hold several connections of one server (an agent that restarts it, two
//! `mcptape call`s, concurrent clients). The first unclaimed one, in tape order, answers
//! the client's handshake — or, when its script refuses the handshake (an `initialize`
//! handed to a connection recorded without one), the first later one whose script takes
//! it; the client's first other message decides: the first candidate
//! whose script accepts it (after the same handshake) is claimed — a claim file in the
//! report directory, so that concurrent proxies of one `mcptape replay` run never serve
//! the same connection. When none accepts it, the first is claimed and its divergence
//! reported. Candidates are built only as far as needed, so a tape of thousands of
//! connections costs one engine in the common case. Without a report directory (a
//! standalone `--replay`) nothing is shared.
//!
//! The picker holds the server's connections compactly ([`ServerTape`]) and makes a
//! candidate's entries only when it builds that candidate's engine. A connection that
//! may have lost an entry to a torn line ([`crate::tape::torn`]) fails its verdict,
//! naming the line, however its replay went.
//!
//! A stateless client whose first candidate is a sessionless exchange the HTTP front
//! recorded is served exchange by exchange instead ([`stateless`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::message::{self, Kind, Message, Shape};
use crate::report;
use crate::tape::ServerTape;
use crate::upstream::replay::any::AnyReplay;
use crate::upstream::replay::stateless::Exchanges;
use crate::upstream::replay::{DIVERGED_CODE, Options, Out, Replay, ServerFacts, error_line};
use crate::verdict::Verdict;

/// Messages that do not tell connections apart: the handshake and its like.
const HANDSHAKE: &[&str] = &[
    "initialize",
    "notifications/initialized",
    "server/discover",
    "ping",
];

/// Chooses a recorded connection for one live client, then replays it.
pub struct Picker {
    tape: Arc<ServerTape>,
    server: String,
    report: Option<PathBuf>,
    opts: Options,
    facts: ServerFacts,
    /// Unclaimed connections (indexes into the tape), in tape order, not chosen yet.
    candidates: Vec<usize>,
    /// The first candidate's engine, answering until the choice is made.
    first: Option<Replay>,
    /// What the client sent before the choice, to bring later candidates up to date.
    history: Vec<Vec<u8>>,
    chosen: Option<Replay>,
    /// The connection (index into the tape) of the chosen engine.
    chosen_conn: Option<usize>,
    problem: Option<String>,
    /// Set when a stateless client is served exchange by exchange ([`stateless`]).
    exchanges: Option<Exchanges>,
    /// Set with `--match any`: every exchange of the server, connections claimed as used.
    any: Option<AnyReplay>,
}

impl Picker {
    /// The candidates for `server` in `tape`.
    pub fn new(
        tape: Arc<ServerTape>,
        server: &str,
        report: Option<&Path>,
        opts: &Options,
    ) -> Picker {
        let mut picker = Picker {
            tape: Arc::clone(&tape),
            server: server.to_owned(),
            report: report.map(Path::to_path_buf),
            opts: opts.clone(),
            facts: ServerFacts::default(),
            candidates: Vec::new(),
            first: None,
            history: Vec::new(),
            chosen: None,
            chosen_conn: None,
            problem: None,
            exchanges: None,
            any: None,
        };
        if tape.server != server || tape.is_empty() {
            let held: Vec<&str> = tape.servers.iter().map(String::as_str).collect();
            picker.problem = Some(format!(
                "the tape `{}` holds no connection of server `{server}`; it holds: {}",
                tape.path.display(),
                if held.is_empty() {
                    "nothing".to_owned()
                } else {
                    held.join(", ")
                }
            ));
            return picker;
        }
        let total = tape.len();
        let (facts_tape, facts_conns) = tape.facts_tape();
        picker.facts = ServerFacts::of(&facts_tape, &facts_conns);
        if opts.matching == crate::cli::MatchMode::Any {
            // A mock shares connections: none is ever refused as taken.
            picker.any = Some(AnyReplay::new(&tape, report, opts, &picker.facts));
            return picker;
        }
        picker.candidates = (0..total)
            .filter(|&c| report.is_none_or(|dir| !report::is_claimed(dir, server, tape.id(c))))
            .collect();
        if picker.candidates.is_empty() {
            picker.problem = Some(format!(
                "all {total} recorded connection{} of server `{server}` in `{}` are already used",
                if total == 1 { "" } else { "s" },
                tape.path.display()
            ));
        } else if picker.candidates.len() == 1 {
            let engine = picker.engine(0);
            picker.claim(0, engine);
        } else {
            picker.first = Some(picker.engine(0));
        }
        picker
    }

    fn engine(&self, i: usize) -> Replay {
        let (tape, conn) = self.tape.connection(self.candidates[i]);
        Replay::new(&tape, &conn, &self.facts, self.opts.clone())
    }

    /// Whether any recorded connection of the server holds a client message `method`.
    pub fn recorded_sends(&self, method: &str) -> bool {
        self.tape.sends(method)
    }

    /// The problem that leaves this client without a connection, if any.
    pub fn problem(&self) -> Option<&str> {
        self.problem.as_deref()
    }

    /// Claims candidate `i` with its engine; false when another client has it.
    fn claim(&mut self, i: usize, engine: Replay) -> bool {
        let claimed = match &self.report {
            None => Ok(true),
            Some(dir) => report::try_claim(dir, &self.server, self.tape.id(self.candidates[i])),
        };
        match claimed {
            Ok(true) => {
                self.chosen = Some(engine);
                self.chosen_conn = Some(self.candidates[i]);
                self.candidates.clear();
                self.first = None;
                self.history.clear();
                true
            }
            Ok(false) => false,
            Err(problem) => {
                self.problem = Some(problem);
                false
            }
        }
    }

    /// True when the client message `msg` would be answered from the tape: with `any`,
    /// a request some recorded exchange matches, or any notification or answer; else one
    /// the chosen connection's script (before the choice, some candidate's) accepts now.
    pub fn accepts(&self, msg: &Message) -> bool {
        if let Some(any) = &self.any {
            return any.accepts(msg);
        }
        if let Some(engine) = &self.chosen {
            return engine.accepts(msg);
        }
        if let Some(all) = &self.exchanges {
            return all.accepts(msg);
        }
        if self.problem.is_some() {
            return false;
        }
        if self.first.as_ref().is_some_and(|e| e.accepts(msg)) {
            return true;
        }
        (1..self.candidates.len()).any(|i| {
            let mut e = self.engine(i);
            e.start();
            for earlier in &self.history {
                e.on_client(earlier);
            }
            e.accepts(msg)
        })
    }

    /// What the server said before the client said anything.
    pub fn start(&mut self) -> Vec<Out> {
        if self.any.is_some() {
            return Vec::new();
        }
        match (&mut self.chosen, &mut self.first) {
            (Some(engine), _) | (None, Some(engine)) => engine.start(),
            (None, None) => Vec::new(),
        }
    }

    /// One line from the client; what to send back.
    pub fn on_client(&mut self, text: &[u8]) -> Vec<Out> {
        if let Some(any) = &mut self.any {
            return any.on_client(text);
        }
        if let Some(engine) = &mut self.chosen {
            return engine.on_client(text);
        }
        if let Some(all) = &mut self.exchanges {
            if message::shape(text) != Shape::Object {
                return Vec::new();
            }
            return stateless::replies(all, &Message::new(text.to_vec()));
        }
        if let Some(problem) = &self.problem {
            return refuse(text, problem);
        }
        let decisive = message::shape(text) == Shape::Object && {
            let msg = Message::new(text.to_vec());
            msg.kind() != Kind::Response && !msg.method().is_some_and(|m| HANDSHAKE.contains(&m))
        };
        if !decisive {
            self.history.push(text.to_vec());
            let out = self
                .first
                .as_mut()
                .map(|e| e.on_client(text))
                .unwrap_or_default();
            if self.first.as_ref().is_some_and(Replay::diverged)
                && let Some(other) = self.handshake_elsewhere()
            {
                return other;
            }
            return out;
        }
        if let Some(out) = self.by_exchange(&Message::new(text.to_vec())) {
            return out;
        }
        // The first candidate whose script accepts the message, built as needed.
        let mut fallback: Option<(usize, Replay, Vec<Out>)> = None;
        for i in 0..self.candidates.len() {
            let mut engine = match (i, self.first.take()) {
                (0, Some(first)) => first,
                _ => {
                    let mut e = self.engine(i);
                    e.start();
                    for earlier in &self.history {
                        e.on_client(earlier);
                    }
                    e
                }
            };
            let out = engine.on_client(text);
            if engine.diverged() {
                fallback.get_or_insert((i, engine, out));
                continue;
            }
            if self.claim(i, engine) {
                return out;
            }
            if self.problem.is_some() {
                break;
            }
        }
        // None accepts it: the first one answers, with its divergence.
        if self.problem.is_none()
            && let Some((i, engine, out)) = fallback
            && self.claim(i, engine)
        {
            return out;
        }
        let problem = self.problem.get_or_insert_with(|| {
            format!(
                "every recorded connection of server `{}` was taken by another client of this run",
                self.server
            )
        });
        refuse(text, problem)
    }

    /// The first candidate's script refused the handshake so far (a stateless recording
    /// handed an `initialize`, an `initialize`-era one a `server/discover`-only start):
    /// the first later candidate whose script accepts it all answers instead, and becomes
    /// the one the handshake goes to. Its answer to the last message, if one accepts.
    fn handshake_elsewhere(&mut self) -> Option<Vec<Out>> {
        for i in 1..self.candidates.len() {
            let mut engine = self.engine(i);
            engine.start();
            let mut out = Vec::new();
            for earlier in &self.history {
                out = engine.on_client(earlier);
            }
            if !engine.diverged() {
                let c = self.candidates.remove(i);
                self.candidates.insert(0, c);
                self.first = Some(engine);
                return Some(out);
            }
        }
        None
    }

    /// The exit status to end with when the recorded server ended the connection.
    pub fn server_gone(&self) -> Option<u8> {
        if self.any.is_some() {
            return None;
        }
        self.chosen.as_ref().and_then(Replay::server_gone)
    }

    /// The verdict, once the client has hung up. A client that never got past the
    /// handshake is held to the first candidate.
    pub fn finish(mut self) -> Verdict {
        if let Some(any) = self.any.take() {
            return any.finish();
        }
        if let Some(all) = &self.exchanges {
            return Picker::exchanges_verdict(all, &self.server);
        }
        if self.chosen.is_none()
            && self.problem.is_none()
            && let Some(first) = self.first.take()
        {
            self.claim(0, first);
        }
        match (self.chosen, self.problem) {
            (Some(engine), _) => {
                let mut verdict = engine.finish();
                let torn = self.chosen_conn.map(|c| self.tape.torn_lines(c));
                for line in torn.unwrap_or_default() {
                    verdict.problems.push(format!(
                        "tape line {line} is torn (a writer was cut mid-write) and may have held an entry of this connection: its replay is incomplete"
                    ));
                }
                verdict
            }
            (None, problem) => Verdict {
                server: self.server,
                problems: vec![
                    problem.unwrap_or_else(|| "no recorded connection was chosen".into()),
                ],
                ..Verdict::default()
            },
        }
    }
}

/// The answer to a client that has no connection to be served: an error per request.
fn refuse(text: &[u8], problem: &str) -> Vec<Out> {
    if message::shape(text) != Shape::Object {
        return Vec::new();
    }
    let msg = Message::new(text.to_vec());
    match (msg.kind(), msg.id()) {
        (Kind::Request, Some(id)) => vec![Out {
            delay: std::time::Duration::ZERO,
            immediate: true,
            line: error_line(id, DIVERGED_CODE, &format!("mcptape replay: {problem}")),
            stream: None,
            hold: None,
        }],
        _ => Vec::new(),
    }
}

mod stateless;

#[cfg(test)]
mod tests;
