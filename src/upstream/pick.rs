//! Which recorded connection a live client gets.
//!
//! A tape may hold several connections of one server (an agent that restarts it, two
//! `mcptape call`s, concurrent clients). Every unclaimed one is a candidate: the client's
//! handshake is played to all of them, and its first other message decides — the first
//! candidate, in tape order, whose script accepts it is claimed (a claim file in the
//! report directory, so that concurrent proxies of one `mcptape replay` run never serve
//! the same connection). When none accepts it, the first is claimed and its divergence
//! reported. Without a report directory (a standalone `--replay`) nothing is shared.

use std::path::{Path, PathBuf};

use crate::message::{self, Kind, Message, Shape};
use crate::report;
use crate::tape::{Connection, Tape};
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
    server: String,
    report: Option<PathBuf>,
    candidates: Vec<(Connection, Replay)>,
    chosen: Option<(Connection, Replay)>,
    problem: Option<String>,
}

impl Picker {
    /// The candidates for `server` in `tape`.
    pub fn new(tape: &Tape, server: &str, report: Option<&Path>, opts: &Options) -> Picker {
        let mut picker = Picker {
            server: server.to_owned(),
            report: report.map(Path::to_path_buf),
            candidates: Vec::new(),
            chosen: None,
            problem: None,
        };
        let conns = match report::connections_of(tape, server) {
            Ok(c) => c,
            Err(problem) => {
                picker.problem = Some(problem);
                return picker;
            }
        };
        let total = conns.len();
        let facts = ServerFacts::of(tape, &conns);
        picker.candidates = conns
            .into_iter()
            .filter(|c| report.is_none_or(|dir| !report::is_claimed(dir, server, c)))
            .map(|c| {
                let engine = Replay::new(tape, &c, &facts, opts.clone());
                (c, engine)
            })
            .collect();
        if picker.candidates.is_empty() {
            picker.problem = Some(format!(
                "all {total} recorded connection{} of server `{server}` in `{}` are already used",
                if total == 1 { "" } else { "s" },
                tape.path.display()
            ));
        } else if picker.candidates.len() == 1 {
            picker.choose(0);
        }
        picker
    }

    /// The problem that leaves this client without a connection, if any.
    pub fn problem(&self) -> Option<&str> {
        self.problem.as_deref()
    }

    fn choose(&mut self, i: usize) -> bool {
        let (conn, _) = &self.candidates[i];
        let claimed = match &self.report {
            None => Ok(true),
            Some(dir) => report::try_claim(dir, &self.server, conn),
        };
        match claimed {
            Ok(true) => {
                self.chosen = Some(self.candidates.swap_remove(i));
                self.candidates.clear();
                true
            }
            Ok(false) => false,
            Err(problem) => {
                self.problem = Some(problem);
                false
            }
        }
    }

    /// What the server said before the client said anything.
    pub fn start(&mut self) -> Vec<Out> {
        match (&mut self.chosen, self.candidates.first_mut()) {
            (Some((_, engine)), _) => engine.start(),
            (None, Some(_)) => {
                let mut outs: Vec<Vec<Out>> =
                    self.candidates.iter_mut().map(|(_, e)| e.start()).collect();
                outs.swap_remove(0)
            }
            (None, None) => Vec::new(),
        }
    }

    /// One line from the client; what to send back.
    pub fn on_client(&mut self, text: &[u8]) -> Vec<Out> {
        if let Some((_, engine)) = &mut self.chosen {
            return engine.on_client(text);
        }
        if let Some(problem) = &self.problem {
            return refuse(text, problem);
        }
        let outs: Vec<Vec<Out>> = self
            .candidates
            .iter_mut()
            .map(|(_, e)| e.on_client(text))
            .collect();
        let decisive = message::shape(text) == Shape::Object && {
            let msg = Message::new(text.to_vec());
            msg.kind() != Kind::Response && !msg.method().is_some_and(|m| HANDSHAKE.contains(&m))
        };
        if !decisive {
            return outs.into_iter().next().unwrap_or_default();
        }
        let mut order: Vec<usize> = (0..self.candidates.len())
            .filter(|&i| !self.candidates[i].1.diverged())
            .collect();
        order.extend((0..self.candidates.len()).filter(|&i| self.candidates[i].1.diverged()));
        let mut outs = outs;
        for i in order {
            if self.choose(i) {
                return std::mem::take(&mut outs[i]);
            }
            if self.problem.is_some() {
                break;
            }
        }
        let problem = self.problem.get_or_insert_with(|| {
            format!(
                "every recorded connection of server `{}` was taken by another client of this run",
                self.server
            )
        });
        refuse(text, problem)
    }

    /// The exit status to end with when the recorded server ended the connection.
    pub fn server_gone(&self) -> Option<u8> {
        self.chosen.as_ref().and_then(|(_, e)| e.server_gone())
    }

    /// The verdict, once the client has hung up. A client that never got past the
    /// handshake is held to the first candidate.
    pub fn finish(mut self) -> Verdict {
        if self.chosen.is_none() && self.problem.is_none() && !self.candidates.is_empty() {
            self.choose(0);
        }
        match (self.chosen, self.problem) {
            (Some((_, engine)), _) => engine.finish(),
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
        }],
        _ => Vec::new(),
    }
}
