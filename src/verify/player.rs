//! Playing one recorded connection: verify's player, the downstream that plays the
//! client's side of the tape to any [`Link`] (a live server: a child process or an HTTP
//! session, as [`AnyLink`]), one recorded request at a time.
//!
//! Each request is sent ([`Link::send`]), then its answer awaited on [`Link::next`]
//! (with the per-call timeout) while the server's own requests are answered from the tape
//! ([`Answers`]) — over HTTP also those that come on the GET stream, which is opened
//! once the session exists — then classified ([`compare()`]). An HTTP failure of the request
//! ([`Incoming::Refused`]) is heard as the JSON-RPC error the stdio pump gives its client
//! for it, so it is classified like any error answer. Once the server is gone (it stopped
//! reading, closed its output, or refused to initialize) nothing more is sent, and every
//! later request is `not-played`. At the end the link is told the client has said
//! everything ([`Link::end_input`]), what it still gives is read and not compared (so
//! what was sent reaches the server, and a server busy writing still exits), and it is
//! closed ([`Link::close`]). A call the recorded client cancelled is cancelled at its
//! recorded point ([`cancel`]).

use std::collections::HashSet;

use serde_json::{Value, json};

use crate::error::Result;
use crate::framing;
use crate::layer::AnyLink;
use crate::layer::{Layered, Layers};
use crate::matcher::{self, comparable};
use crate::message::{self, Kind, Message, Shape};
use crate::process::Tail;
use crate::tape::close::CloseReason;
use crate::tape::{Connection, Direction, Entry, Tape};
use crate::upstream::child::ChildLink;
use crate::upstream::http::{self, HttpLink, Remote};
use crate::upstream::refusals::Refusals;
use crate::upstream::{Closed, Incoming, Link};

use super::answers::Answers;
use super::compare::{Class, Played, compare, is_error};
use super::{Options, Run, Target};

/// Verifies one recorded connection against a fresh live server at `target`.
pub async fn run_connection(
    tape: &Tape,
    conn: &Connection,
    target: &Target,
    opts: &Options,
    read_only: &HashSet<String>,
    used: &mut [bool],
) -> Result<Run> {
    let (link, mut tail) = match connect(target, opts.max_line) {
        Ok(link) => link,
        Err(problem) => {
            return Ok(Run {
                problems: vec![problem],
                broken: true,
                ..Run::default()
            });
        }
    };
    let (mut run, closed) = play(link, tape, conn, opts, read_only, used).await;
    match closed {
        Err(e) => run.problems.push(crate::error::chain(&e)),
        Ok(closed) if run.server_gone => run
            .problems
            .push(gone::said(&closed, tail.as_mut(), &opts.redactor).await),
        Ok(_) => {}
    }
    // What a healthy server wrote last reaches our stderr before the run goes on.
    if let Some(tail) = tail.as_mut() {
        tail.settle().await;
    }
    Ok(run)
}

/// Starts the live server (or opens the session) for one connection, with no layers (a
/// command's stderr passed through a [`Tail`] that keeps its last lines); the text of the
/// error chain when it cannot be.
fn connect(target: &Target, max_line: usize) -> Result<(AnyLink, Option<Tail>), String> {
    match target {
        Target::Command(argv) => ChildLink::spawn_tailed(argv, max_line)
            .map(|(link, tail)| {
                (
                    AnyLink::Child(Layered::new(link, Layers::new())),
                    Some(tail),
                )
            })
            .map_err(|e| crate::error::chain(&e)),
        Target::Url(url, headers) => Remote::new(url, headers.clone())
            .map(|remote| {
                // The GET stream too: a server asks some of its requests there (roots).
                let link = HttpLink::new(remote).listening();
                (
                    AnyLink::Http(Layered::new(Refusals(link), Layers::new())),
                    None,
                )
            })
            .map_err(|e| crate::error::chain(&e)),
    }
}

/// Plays the client's side of `conn` through `link` (the live server's [`AnyLink`], or
/// any other upstream): what was found, and how the link ended.
pub(super) async fn play<L: Link>(
    link: L,
    tape: &Tape,
    conn: &Connection,
    opts: &Options,
    read_only: &HashSet<String>,
    used: &mut [bool],
) -> (Run, Result<Closed>) {
    let entries: Vec<&Entry> = conn
        .entries
        .iter()
        .map(|&i| &tape.entries[i])
        // Of the lifecycle, only a closed stream's cancel (`$http/cancelled`) is played,
        // and an injected fault (`$fault`) and a policy decision (`$policy/decision`)
        // read ([`super::faulted`], [`super::gated`]).
        .filter(|e| {
            e.meta.dir != Direction::Lifecycle
                || cancel::by_stream(e).is_some()
                || super::faulted::is_fault(e)
                || super::gated::is_decision(e)
        })
        .collect();
    let mut player = Player {
        link,
        answers: Answers::new(&entries),
        opts,
        read_only,
        run: Run::default(),
        gone: None,
        cancelled: HashSet::new(),
        played_cancels: HashSet::new(),
        refused: refused::by_request(tape, conn),
        learned: HashSet::new(),
        imported: false,
    };
    for (i, entry) in entries.iter().enumerate() {
        // Only the client's side is played; the server's side is what is compared.
        if entry.meta.dir != Direction::Send {
            continue;
        }
        match entry.message.kind() {
            Kind::Request => {
                player.request(conn, entry, &entries[i + 1..], used).await;
                opts.progress.inc(1);
            }
            Kind::Notification if player.played_cancels.contains(&entry.line) => {}
            Kind::Notification if player.gone.is_none() => {
                // A notification the server cannot take shows as its end, in `next`.
                let _ = player.link.send(entry.message.clone()).await;
                if imported::is_made_up_initialized(entry) {
                    player.learn_tools(entry.line).await;
                }
            }
            // The client's answers to server requests are given when the server asks.
            _ => {}
        }
    }
    player.finish().await
}

/// One connection being played: the live server's link, what the tape answers for the
/// client, and what was found so far.
struct Player<'a, L> {
    link: L,
    answers: Answers,
    opts: &'a Options,
    read_only: &'a HashSet<String>,
    run: Run,
    /// Why nothing more is played, once the server is gone.
    gone: Option<String>,
    /// Ids of the requests cancelled: a late answer to one is dropped.
    cancelled: HashSet<String>,
    /// Tape lines of the recorded cancels already sent.
    played_cancels: HashSet<usize>,
    /// The status each request was refused with, where the tape holds a refusal
    /// (`$http/status`) for it, by the request's tape line.
    refused: std::collections::HashMap<usize, u16>,
    /// For an imported connection: the tools the live server's `tools/list` marks
    /// read-only ([`imported`]).
    learned: HashSet<String>,
    /// True once this connection's handshake is known to be made up.
    imported: bool,
}

impl<L: Link> Player<'_, L> {
    /// Plays one recorded request (`rest` is what the tape holds after it), waits for its
    /// answer and classifies it; `initialize` is played, not classified.
    async fn request(
        &mut self,
        conn: &Connection,
        entry: &Entry,
        rest: &[&Entry],
        used: &mut [bool],
    ) {
        let msg = &entry.message;
        let recorded = recorded_answer(msg, rest);
        let mut played = to_play(conn, entry, recorded);
        let recorded_msg = recorded.map(|e| &e.message);
        if let Some(why) = &self.gone {
            played.class = Class::NotPlayed;
            played.reason = Some(why.clone());
            self.done(played, msg, recorded_msg, None);
            return;
        }
        if let Some(why) = super::gated::not_played(entry, rest) {
            played.class = Class::Skipped;
            played.reason = Some(why);
            self.done(played, msg, recorded_msg, None);
            return;
        }
        if let Some(why) = played.tool.as_deref().and_then(|t| self.skip(t)) {
            played.class = Class::Skipped;
            played.reason = Some(why);
            self.done(played, msg, recorded_msg, None);
            return;
        }
        // An imported connection's handshake was made up: mcptape plays its own.
        let sent = if imported::is_made_up_initialize(entry) {
            self.imported = true;
            imported::own_initialize(msg)
        } else {
            self.opts.chains.to_send(msg)
        };
        if self.link.send(sent).await.is_err() {
            self.gone = Some(format!(
                "not played: the server stopped reading before tape line {}",
                entry.line
            ));
            played.class = Class::NotPlayed;
            played.reason = self.gone.clone();
            // A server that is gone broke the run, whether it went before it read or
            // before it answered (which of the two depends on timing).
            self.run.broken = true;
            self.run.server_gone = true;
            self.done(played, msg, recorded_msg, None);
            return;
        }
        let want = msg.id().unwrap_or("null").to_owned();
        let live = match cancel::recorded(entry, rest) {
            Some(c) => match self.until_cancel(&mut played, entry.line, &want, &c).await {
                Some(live) => live,
                None => return self.run.outcomes.push(played),
            },
            None => tokio::time::timeout(self.opts.timeout, self.answer(entry.line, &want)).await,
        };
        let initialize = played.method == "initialize";
        let mut answered = None;
        match live {
            Ok(Some(live)) if initialize => self.initialized(&live),
            Ok(Some(live)) => {
                match (recorded, self.refused.get(&entry.line)) {
                    (None, Some(&status)) => refused::classify(&mut played, status, &live),
                    _ => self.classify(&mut played, recorded, &live, used),
                }
                answered = Some(live);
            }
            Ok(None) => {
                played.class = Class::NewError;
                played.reason = Some("the server exited instead of answering".into());
                self.gone = Some(format!(
                    "not played: the server closed its output at tape line {}",
                    entry.line
                ));
                self.run.broken = true;
                self.run.server_gone = true;
            }
            Err(_) => {
                played.class = Class::NewError;
                played.reason = Some(format!(
                    "no answer within {}s (--timeout)",
                    self.opts.timeout.as_secs_f64()
                ));
            }
        }
        if answered.is_some() {
            super::faulted::skip(&mut played, entry, rest);
        }
        if !initialize {
            self.done(played, msg, recorded_msg, answered.as_ref());
        }
    }

    /// Reports a request played (with its recorded and live answers): now, or with the
    /// rest of its multi-round-trip chain ([`mrtr::Chains::round`]).
    fn done(
        &mut self,
        played: Played,
        msg: &Message,
        recorded: Option<&Message>,
        live: Option<&Message>,
    ) {
        if let Some(played) = self.opts.chains.round(played, msg, recorded, live) {
            self.run.outcomes.push(played);
        }
    }

    /// Why a call of `tool` is not played: it may write, and `--allow-writes` is off.
    fn skip(&self, tool: &str) -> Option<String> {
        if self.opts.allow_writes || self.read_only.contains(tool) || self.learned.contains(tool) {
            return None;
        }
        Some(if self.imported {
            format!(
                "tool `{tool}` may write: the live server's tools/list does not mark it readOnlyHint: true (an imported tape holds no tools/list); --allow-writes plays it"
            )
        } else if self.read_only.is_empty() {
            format!(
                "tool `{tool}` may write: the tape holds no tools/list of this server marking any tool readOnlyHint: true; --allow-writes plays it"
            )
        } else {
            format!(
                "tool `{tool}` may write (the recorded tools/list does not mark it readOnlyHint: true); --allow-writes plays it"
            )
        })
    }

    /// The live answer with id `want` to the request of tape line `line`, answering the
    /// server's own requests meanwhile; `None` when the server is gone.
    async fn answer(&mut self, line: usize, want: &str) -> Option<Message> {
        loop {
            let live = match self.link.next().await? {
                Incoming::Message(msg) => msg,
                Incoming::Refused { request, error } => match refusal(&request, &error) {
                    Some(answer) => answer,
                    // A notification's failure is no answer of anyone's.
                    None => continue,
                },
                Incoming::Event(_) => continue,
            };
            let Some(live) = self.message(live) else {
                continue;
            };
            match live.kind() {
                Kind::Response | Kind::Error if live.id() == Some(want) => return Some(live),
                Kind::Response | Kind::Error
                    if live.id().is_some_and(|id| self.cancelled.contains(id)) => {}
                Kind::Response | Kind::Error => self.run.problems.push(format!(
                    "the server answered id {} while tape line {line} waited for id {want}",
                    live.id().unwrap_or("null"),
                )),
                Kind::Request => self.reply(&live, line).await,
                _ => {}
            }
        }
    }

    /// A server line as a message: `None` for a blank line, and for one that is not a
    /// JSON object (a problem of the run's, naming its start).
    fn message(&mut self, live: Message) -> Option<Message> {
        let text = framing::content(live.raw());
        if text.trim_ascii().is_empty() {
            return None;
        }
        if message::shape(text) != Shape::Object {
            self.run.problems.push(format!(
                "the server wrote a line that is not a JSON-RPC message: {}",
                String::from_utf8_lossy(&text[..text.len().min(80)])
            ));
            return None;
        }
        let end = text.len();
        Some(if end == live.raw().len() {
            live
        } else {
            Message::new(live.bytes().slice(..end))
        })
    }

    /// Answers a request of the server's, asked during tape line `line`: with the tape's
    /// answer, an empty result for `ping`, or an error naming what the tape lacks.
    async fn reply(&mut self, request: &Message, line: usize) {
        let id = request.id().unwrap_or("null");
        let m = request.method().unwrap_or("?");
        let reply = match (m, self.answers.take(m, id)) {
            (_, Some(recorded)) => recorded,
            ("ping", None) => format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}"),
            (_, None) => {
                self.run.problems.push(format!(
                    "the server asked {m} during tape line {line}, and the tape holds no client answer to it"
                ));
                json!({"jsonrpc": "2.0", "id": serde_json::from_str::<Value>(id).unwrap_or(Value::Null),
                    "error": {"code": -32601, "message": format!("mcptape verify: the tape holds no answer to {m}")}})
                .to_string()
            }
        };
        // A server that cannot take it shows as its end, in `next`.
        let _ = self.link.send(Message::new(reply)).await;
    }

    /// Asks the live server for its tools (after an imported connection's handshake,
    /// tape line `line`): those marked read-only may be played.
    async fn learn_tools(&mut self, line: usize) {
        let mut cursor = None;
        for _ in 0..imported::MAX_PAGES {
            if self
                .link
                .send(imported::tools_list(cursor.as_ref()))
                .await
                .is_err()
            {
                return;
            }
            let asked = tokio::time::timeout(
                self.opts.timeout,
                self.answer(line, imported::TOOLS_LIST_ID),
            );
            let Ok(Some(answer)) = asked.await else {
                self.run.problems.push(format!(
                    "the server did not answer verify's tools/list after the handshake of tape line {line}: every tool call counts as one that may write"
                ));
                return;
            };
            cursor = imported::read_only_of(&answer, &mut self.learned);
            if cursor.is_none() {
                return;
            }
        }
    }

    /// The handshake's answer: an error ends the play of this connection.
    fn initialized(&mut self, live: &Message) {
        if is_error(&live.value()) {
            let why = format!(
                "not played: the server refused to initialize: {}",
                live.value()["error"]
            );
            // Said once, as the connection's problem, when it finishes.
            self.gone = Some(why);
            self.run.broken = true;
        }
    }

    /// Classifies a live answer against the recorded one, if the tape holds it.
    fn classify(
        &self,
        played: &mut Played,
        recorded: Option<&Entry>,
        live: &Message,
        used: &mut [bool],
    ) {
        played.live = Some(live.text().to_owned());
        let Some(recorded) = recorded else {
            // A cut tape, or an answer too long to record ($transport/oversize): nothing
            // to compare with, which is not a change of the server's.
            played.class = Class::Skipped;
            played.reason = Some("played, not compared: the tape holds no recorded answer".into());
            return;
        };
        let match_meta = self.opts.match_meta;
        let recorded_entry = recorded;
        let recorded_msg = &recorded.message;
        let mut recorded = matcher::without_result_meta(comparable(recorded_msg), match_meta);
        let mut live = matcher::without_result_meta(comparable(live), match_meta);
        mrtr::without_state(recorded_msg, &mut recorded, &mut live);
        imported::without_unknown(recorded_entry, &mut recorded, &mut live);
        let (class, diffs) = compare(&recorded, &live, &self.opts.ignore, used);
        played.class = class;
        played.differences = diffs;
    }

    /// Ends the play: the reason it ended early, if it did, is a problem of the run; the
    /// link hears the client is done, what it still gives is read (not compared), and it
    /// is closed.
    async fn finish(mut self) -> (Run, Result<Closed>) {
        if let Some(why) = self.gone.take() {
            self.run.problems.push(why);
        }
        self.link.end_input().await;
        while self.link.next().await.is_some() {}
        let closed = self.link.close(CloseReason::ClientClosedStdin).await;
        (self.run, closed)
    }
}

/// A failed request (an HTTP status, an unreachable server, a stream cut before the
/// answer) as the JSON-RPC error answering it, with the HTTP error's text: what the stdio
/// pump tells its client. `None` for a message without an id.
fn refusal(request: &Message, error: &crate::error::HttpError) -> Option<Message> {
    http::error_for(request, &error.to_string()).map(Message::new)
}

/// The recorded answer to `request` among the entries after it.
fn recorded_answer<'t>(request: &Message, rest: &[&'t Entry]) -> Option<&'t Entry> {
    rest.iter().copied().find(|a| {
        a.meta.dir == Direction::Recv
            && matches!(a.message.kind(), Kind::Response | Kind::Error)
            && a.message.id() == request.id()
    })
}

/// The report of a recorded request before it is played: `same` until found otherwise.
fn to_play(conn: &Connection, entry: &Entry, recorded: Option<&Entry>) -> Played {
    let method = entry.message.method().unwrap_or_default().to_owned();
    let tool = (method == "tools/call").then(|| {
        entry.message.value()["params"]["name"]
            .as_str()
            .unwrap_or("?")
            .to_owned()
    });
    Played {
        server: conn.server.clone(),
        conn: conn.id.clone(),
        line: entry.line,
        method,
        tool,
        class: Class::Same,
        reason: None,
        differences: Vec::new(),
        answer_line: recorded.map(|a| a.line),
        live: None,
    }
}

pub mod mrtr;

mod cancel;
mod gone;
mod imported;
mod refused;
#[cfg(test)]
mod tests;
