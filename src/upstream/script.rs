//! What the replay engine knows about a recorded connection's script besides its steps:
//! which recorded answer belongs to which recorded request, and how the recording ended.
//!
//! Answers are paired with requests by recorded order, a queue per recorded id: the k-th
//! answer carrying id `5` answers the k-th request sent with id `5`. A buggy client that
//! sent two concurrent requests with one id was recorded faithfully, and each of its live
//! requests still gets its own answer, with its own live id.
//!
//! A recording that ends without a `$transport/close` (a crash or a kill, a torn last
//! line) or with a `$tape/truncated` entry is cut: a request whose answer is not on the
//! tape (and that the recorded client did not cancel) was cut off, not unanswered, and a
//! client message past the script's end may be one the tape lost. A connection with a
//! close is whole: what it does not hold did not happen.
//!
//! Except for the messages it lost on the way: a line over the recorder's
//! `--max-line-bytes` is kept only as a `$transport/oversize` entry (its direction, size
//! and a prefix). A lost client message ends the script there, like a cut
//! ([`Ending::LostClient`]): the live client's message can never match it, and nothing
//! recorded after it can be trusted to follow from what the live client sends. A lost
//! server message ([`Lost`]) may be any answer the tape lacks: a request sent before it
//! that the tape holds no answer to lost its answer, whole recording or not. When the
//! recorded client later answers a request the tape does not hold, the lost message was
//! that server request, and the script ends before it ([`Ending::LostRequest`]).

use std::collections::{HashMap, VecDeque};

use crate::message::{self, Kind, Message};
use crate::tape::close::{Close, CloseReason, CloseStatus};
use crate::tape::lifecycle::{Lifecycle, Oversize};
use crate::tape::{Connection, Direction, Entry, Tape};
use crate::verdict::Leftover;

/// Recorded answers paired with recorded requests, by step index: the client's requests
/// with the server's answers, and the server's requests with the client's answers.
#[derive(Debug, Default)]
pub struct Pairs {
    /// For an answer step (a response or error), the request step it answers.
    request_of: Vec<Option<usize>>,
    /// For a request step, the answer step that answers it.
    answer_of: Vec<Option<usize>>,
    /// Request steps the tape holds no answer to and the recorded client did not cancel
    /// (`notifications/cancelled`).
    unanswered: Vec<bool>,
}

impl Pairs {
    /// Pairs the steps of one connection, `(direction, message)` in script order.
    pub fn of<'a>(steps: impl Iterator<Item = (Direction, &'a Message)>) -> Pairs {
        let mut pairs = Pairs::default();
        let mut pending: HashMap<&str, VecDeque<usize>> = HashMap::new();
        let mut sent: HashMap<&str, usize> = HashMap::new();
        // Server requests and the client's answers to them: ids of their own.
        let mut asked: HashMap<&str, VecDeque<usize>> = HashMap::new();
        for (i, (dir, msg)) in steps.enumerate() {
            pairs.request_of.push(None);
            pairs.answer_of.push(None);
            pairs.unanswered.push(false);
            if dir == Direction::Send && msg.method() == Some("notifications/cancelled") {
                let named = message::raw_member(msg.text(), &["params", "requestId"]);
                if let Some(&req) = named.and_then(|id| sent.get(id)) {
                    pairs.unanswered[req] = false;
                }
            }
            let Some(id) = msg.id() else { continue };
            match (dir, msg.kind()) {
                (Direction::Send, Kind::Request) => {
                    sent.insert(id, i);
                    pending.entry(id).or_default().push_back(i);
                    pairs.unanswered[i] = true;
                }
                (Direction::Recv, Kind::Response | Kind::Error) => {
                    if let Some(req) = pending.get_mut(id).and_then(VecDeque::pop_front) {
                        pairs.request_of[i] = Some(req);
                        pairs.answer_of[req] = Some(i);
                        pairs.unanswered[req] = false;
                    }
                }
                (Direction::Recv, Kind::Request) => asked.entry(id).or_default().push_back(i),
                (Direction::Send, Kind::Response | Kind::Error) => {
                    if let Some(req) = asked.get_mut(id).and_then(VecDeque::pop_front) {
                        pairs.request_of[i] = Some(req);
                        pairs.answer_of[req] = Some(i);
                    }
                }
                _ => {}
            }
        }
        pairs
    }

    /// The request step that answer step `i` answers.
    pub fn request_of(&self, i: usize) -> Option<usize> {
        self.request_of.get(i).copied().flatten()
    }

    /// The answer step of request step `i`, if the tape holds one.
    pub fn answer_of(&self, i: usize) -> Option<usize> {
        self.answer_of.get(i).copied().flatten()
    }

    /// True for request step `i` when the tape holds no answer to it and the recorded
    /// client did not cancel it.
    pub fn unanswered(&self, i: usize) -> bool {
        self.unanswered.get(i) == Some(&true)
    }
}

/// How the recording of a connection ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// A `$transport/close`: the recording is whole.
    Closed(Close),
    /// A `$tape/truncated` entry at this tape line: the tape reached its size limit.
    Truncated(usize),
    /// No close: the recording stops after this tape line (a crash, a kill, a torn line).
    Cut(usize),
    /// A client message at this tape line was too long to record (`$transport/oversize`):
    /// the script ends before it.
    LostClient(usize, Oversize),
    /// A server message at this tape line was too long to record, and the recorded
    /// client then answered a request the tape does not hold: it was a server request
    /// (sampling, elicitation, roots), and the script ends before it.
    LostRequest(usize, Oversize),
}

impl Ending {
    /// How `conn`, one of `tape`'s connections, ended.
    pub fn of(tape: &Tape, conn: &Connection) -> Ending {
        let mut last = 0;
        // The server's requests not answered yet, by id; the latest server message lost.
        let mut asked: HashMap<&str, usize> = HashMap::new();
        let mut lost = None;
        for e in conn.entries.iter().map(|&i| &tape.entries[i]) {
            last = e.line;
            match Lifecycle::of(e) {
                Some(Lifecycle::Close(close)) => return Ending::Closed(close),
                Some(Lifecycle::Truncated(_)) => return Ending::Truncated(e.line),
                Some(Lifecycle::Oversize(o)) if o.by_client() => {
                    return Ending::LostClient(e.line, o);
                }
                Some(Lifecycle::Oversize(o)) => lost = Some((e.line, o)),
                // An injected `disconnect`: the server went away here, as recorded.
                Some(Lifecycle::Fault(f))
                    if f.effect == crate::tape::fault::FaultEffect::Disconnect =>
                {
                    return Ending::Closed(Close::new(
                        CloseReason::ServerExited,
                        CloseStatus::Unknown,
                    ));
                }
                _ => {}
            }
            let (Some(id), kind) = (e.message.id(), e.message.kind()) else {
                continue;
            };
            match (e.meta.dir, kind) {
                (Direction::Recv, Kind::Request) => *asked.entry(id).or_default() += 1,
                (Direction::Send, Kind::Response | Kind::Error) => match asked.get_mut(id) {
                    Some(n) if *n > 0 => *n -= 1,
                    _ => {
                        if let Some((at, o)) = lost {
                            return Ending::LostRequest(at, o);
                        }
                    }
                },
                _ => {}
            }
        }
        Ending::Cut(last)
    }

    /// What is worth a note in the verdict: a recorded close status no process can have.
    pub fn note(&self) -> Option<String> {
        match self {
            Ending::Closed(Close {
                status: CloseStatus::Invalid(what),
                ..
            }) => Some(format!(
                "the recorded close status ({what}) is no process's exit status: replayed as a failure, exit status 1"
            )),
            _ => None,
        }
    }

    /// True when tape line `line` comes before a lost client message (or there is none).
    #[cfg(test)]
    pub fn keeps(&self, line: usize) -> bool {
        self.lost_client_at().is_none_or(|at| line < at)
    }

    fn lost_client_at(&self) -> Option<usize> {
        match self {
            Ending::LostClient(at, _) | Ending::LostRequest(at, _) => Some(*at),
            _ => None,
        }
    }

    /// Which entries are the script, one at a time in tape order: all of them; past a
    /// lost client message, only the server's answers to requests the client sent before
    /// it (they were on their way: a client that sends a request and at once a message
    /// too long to record still gets its answer).
    ///
    /// Past a lost server request the script simply ends: what the server answered after
    /// the client's answer to it may depend on that answer, which the live client never
    /// gives.
    pub fn script(&self) -> Script {
        Script {
            cut: self.lost_client_at(),
            answers_owed: matches!(self, Ending::LostClient(..)),
            open: HashMap::new(),
        }
    }

    /// The lost client message as a leftover, for a client that hung up before sending
    /// anything where it was: the recorded client sent it, the live one did not.
    pub fn leftover(&self) -> Option<Leftover> {
        match self {
            Ending::LostClient(line, o) => Some(Leftover {
                line: *line,
                summary: format!(
                    "a client message too long to record (`$transport/oversize`, {})",
                    o.size()
                ),
            }),
            Ending::LostRequest(line, o) => Some(Leftover {
                line: *line,
                summary: format!(
                    "the client's answer to a server request too long to record (`$transport/oversize`, {})",
                    o.size()
                ),
            }),
            _ => None,
        }
    }

    /// True when the tape may lack what happened next.
    pub fn is_cut(&self) -> bool {
        !matches!(self, Ending::Closed(_))
    }

    /// The recorded server's exit status, when the server ended the connection itself.
    pub fn server_exit(&self) -> Option<u8> {
        match self {
            Ending::Closed(Close {
                reason: Some(CloseReason::ServerExited),
                status,
            }) => Some(status.exit_code()),
            _ => None,
        }
    }

    /// Why the tape has no more, for people.
    pub fn why(&self) -> String {
        match self {
            Ending::Closed(_) => "the recording ends with the connection's close".into(),
            Ending::Truncated(line) => format!(
                "the recording stopped at tape line {line} (`$tape/truncated`: the tape reached its size limit)"
            ),
            Ending::Cut(line) => format!(
                "the recording was cut after tape line {line} (no `$transport/close`: a crash, a kill or a torn last line)"
            ),
            Ending::LostClient(line, o) => format!(
                "the tape lost the client's message at tape line {line} (`$transport/oversize`: {}, over the recorder's `--max-line-bytes`)",
                o.size()
            ),
            Ending::LostRequest(line, o) => format!(
                "the tape lost the server's message at tape line {line} (`$transport/oversize`: {}, over the recorder's `--max-line-bytes`), a request the recorded client answered",
                o.size()
            ),
        }
    }
}

/// The server messages a connection's recording lost: lines kept only as
/// `$transport/oversize` entries, by tape line.
#[derive(Debug, Default)]
pub struct Lost(Vec<(usize, Oversize)>);

impl Lost {
    /// The server messages `conn`, one of `tape`'s connections, lost, but for the one
    /// its `ending` knows was a server request.
    pub fn of(tape: &Tape, conn: &Connection, ending: &Ending) -> Lost {
        let request = match ending {
            Ending::LostRequest(at, _) => Some(*at),
            _ => None,
        };
        let entries = conn.entries.iter().map(|&i| &tape.entries[i]);
        let lost = entries.filter_map(|e| match Lifecycle::of(e) {
            Some(Lifecycle::Oversize(o)) if o.by_server() && request != Some(e.line) => {
                Some((e.line, o))
            }
            _ => None,
        });
        Lost(lost.collect())
    }

    /// Why a request recorded at tape line `line`, with no answer on the tape, lost its
    /// answer: the first server message lost after it, which may be that answer.
    pub fn answer_to(&self, line: usize) -> Option<String> {
        let (at, o) = self.0.iter().find(|(at, _)| *at > line)?;
        Some(format!(
            "the tape lost the server's message at tape line {at} (`$transport/oversize`: {}, over the recorder's `--max-line-bytes`), which may be that answer",
            o.size()
        ))
    }
}

/// The filter [`Ending::script`] gives.
#[derive(Debug)]
pub struct Script {
    cut: Option<usize>,
    /// Past the cut, the answers to client requests sent before it are kept.
    answers_owed: bool,
    /// Client requests before the cut not answered yet, by id.
    open: HashMap<String, usize>,
}

impl Script {
    /// True when `e` (the next entry of the connection, in tape order) is part of the script.
    pub fn keeps(&mut self, e: &Entry) -> bool {
        let Some(at) = self.cut else { return true };
        let answer = matches!(e.message.kind(), Kind::Response | Kind::Error);
        let id = e.message.id();
        if e.line < at {
            match (e.meta.dir, e.message.kind(), id) {
                (Direction::Send, Kind::Request, Some(id)) => {
                    *self.open.entry(id.to_owned()).or_default() += 1;
                }
                (Direction::Recv, _, Some(id)) if answer => {
                    self.open
                        .entry(id.to_owned())
                        .and_modify(|n| *n = n.saturating_sub(1));
                }
                _ => {}
            }
            return true;
        }
        match (e.meta.dir, id) {
            (Direction::Recv, Some(id)) if answer && self.answers_owed => {
                match self.open.get_mut(id) {
                    Some(n) if *n > 0 => {
                        *n -= 1;
                        true
                    }
                    _ => false,
                }
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn duplicate_ids_pair_by_recorded_order() {
        let msgs = [
            (Direction::Send, r#"{"id":5,"method":"a"}"#),
            (Direction::Send, r#"{"id":5,"method":"b"}"#),
            (Direction::Recv, r#"{"id":5,"result":"A"}"#),
            (Direction::Send, r#"{"id":6,"method":"c"}"#),
            (Direction::Recv, r#"{"id":5,"result":"B"}"#),
            (Direction::Send, r#"{"id":7,"method":"d"}"#),
            (
                Direction::Send,
                r#"{"method":"notifications/cancelled","params":{"requestId":7}}"#,
            ),
        ]
        .map(|(d, t)| (d, Message::new(t.to_owned())));
        let pairs = Pairs::of(msgs.iter().map(|(d, m)| (*d, m)));
        assert_eq!(pairs.request_of(2), Some(0));
        assert_eq!(pairs.request_of(4), Some(1));
        assert_eq!(pairs.answer_of(1), Some(4));
        assert_eq!(pairs.answer_of(3), None);
        assert!(pairs.unanswered(3), "c was never answered");
        assert!(
            !pairs.unanswered(0) && !pairs.unanswered(2),
            "answered; an answer"
        );
    }

    #[test]
    fn endings() {
        let line = |m: &str, dir: &str| {
            format!(r#"{{"jsonrpc":"2.0",{m},"_meta":{{"dir":"{dir}","server":"s","conn":"c"}}}}"#)
        };
        let ending = |lines: &[String]| {
            let t = Tape::parse(Path::new("t"), lines.join("\n").as_bytes()).expect("tape");
            Ending::of(&t, &t.connections()[0])
        };
        let call = line(r#""id":1,"method":"x""#, "send");
        assert_eq!(ending(std::slice::from_ref(&call)), Ending::Cut(1));
        let cut = ending(&[
            call.clone(),
            line(r#""method":"$tape/truncated""#, "lifecycle"),
        ]);
        assert_eq!(cut, Ending::Truncated(2));
        let gone = line(
            r#""method":"$transport/close","params":{"reason":"server exited","exitCode":256}"#,
            "lifecycle",
        );
        let fault = line(
            r#""method":"$fault","params":{"rule":"x: disconnect","index":1,"effect":"disconnect","id":1,"method":"x"}"#,
            "lifecycle",
        );
        assert!(
            !ending(&[call.clone(), fault]).is_cut(),
            "an injected disconnect ends the recording whole"
        );
        let closed = ending(&[call, gone]);
        assert!(!closed.is_cut());
        assert_eq!(closed.server_exit(), Some(1), "256 is no exit status");
    }

    #[test]
    fn lost_messages_end_the_script_or_lose_an_answer() {
        let line = |m: &str, dir: &str| {
            format!(r#"{{"jsonrpc":"2.0",{m},"_meta":{{"dir":"{dir}","server":"s","conn":"c"}}}}"#)
        };
        let lost = |dir: &str| {
            line(
                &format!(r#""method":"$transport/oversize","params":{{{dir}"bytes":9}}"#),
                "lifecycle",
            )
        };
        let close = line(
            r#""method":"$transport/close","params":{"exitCode":0}"#,
            "lifecycle",
        );
        let tape = |lines: &[String]| {
            Tape::parse(Path::new("t"), lines.join("\n").as_bytes()).expect("tape")
        };
        let call = line(r#""id":1,"method":"x""#, "send");
        let sampled = line(r#""id":0,"result":{}"#, "send");
        let asked = line(r#""id":0,"method":"sampling/createMessage""#, "recv");
        let of = |t: &Tape| Ending::of(t, &t.connections()[0]);
        let some = Oversize {
            dir: Some(Direction::Recv),
            bytes: Some(9),
            prefix: None,
        };
        // A lost server message: an answer to what came before it, not an ending.
        let t = tape(&[call.clone(), lost(r#""dir":"recv","#), close.clone()]);
        assert!(!of(&t).is_cut());
        let why = Lost::of(&t, &t.connections()[0], &of(&t)).answer_to(1);
        assert!(why.is_some_and(|w| w.contains("tape line 2")));
        assert_eq!(
            Lost::of(&t, &t.connections()[0], &of(&t)).answer_to(2),
            None
        );
        // Then a client answer to no recorded request: it was a server request.
        let t = tape(&[
            call.clone(),
            lost(r#""dir":"recv","#),
            sampled.clone(),
            close.clone(),
        ]);
        assert_eq!(of(&t), Ending::LostRequest(2, some));
        assert!(!of(&t).keeps(2) && of(&t).keeps(1));
        assert_eq!(
            Lost::of(&t, &t.connections()[0], &of(&t)).answer_to(1),
            None
        );
        // An answer to a recorded server request is no sign of anything.
        let t = tape(&[lost(r#""dir":"recv","#), asked, sampled, close.clone()]);
        assert!(!of(&t).is_cut());
        // A lost client message, or one whose side the entry does not say.
        for dir in [r#""dir":"send","#, ""] {
            let t = tape(&[call.clone(), lost(dir), close.clone()]);
            assert!(matches!(of(&t), Ending::LostClient(2, _)), "{dir}");
            assert!(of(&t).leftover().is_some_and(|l| l.line == 2));
        }
    }
}
