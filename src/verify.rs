//! Verify: play the client's side of a recorded connection against a live server and
//! classify every answer.
//!
//! For one recorded connection: start the server, send each recorded client message in
//! order (requests wait for their answer, with a per-call timeout), answer the server's
//! own requests (sampling, elicitation, roots, ping) with the client answers the tape
//! recorded for the same method, and stop the server the MCP way. Each recorded request
//! is then `same`, `changed` (every differing path), `new-error`, `gone-error`,
//! `skipped` (a tool that may write, without `--allow-writes`) or `not-played` (the
//! server was gone). `initialize` is the handshake: played, not classified.
//!
//! Comparison: `result._meta` is left out unless `--match-meta` (MCP metadata), JSON
//! carried in strings is parsed in place, the ignore globs are removed from both sides,
//! a recorded `"[REDACTED]"` (or `[REDACTED]` span) matches anything.
//! A JSON-RPC error and a tool result with `isError: true` are both errors; two errors
//! compare by code, then by message.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio_util::codec::FramedRead;

use crate::error::Result;
use crate::framing::{self, Frame, LineCodec};
use crate::matcher::{self, Difference, Glob, comparable};
use crate::message::{self, Kind, Message, Shape};
use crate::process;
use crate::tape::{Connection, Direction, Entry, Tape};
use crate::upstream::http::{self, HttpLink, Remote};
use crate::upstream::{Incoming, Link as _};

/// Default time a call may take before it counts as unanswered.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// How a recorded call came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// The same answer, ignores applied.
    Same,
    /// A different answer.
    Changed,
    /// Answered before, an error now.
    NewError,
    /// An error before, answered now.
    GoneError,
    /// Not played on purpose.
    Skipped,
    /// Not played because the server was gone.
    NotPlayed,
}

impl Class {
    /// The word used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Same => "same",
            Class::Changed => "changed",
            Class::NewError => "new-error",
            Class::GoneError => "gone-error",
            Class::Skipped => "skipped",
            Class::NotPlayed => "not-played",
        }
    }

    /// True for the classes that fail a verify run.
    pub fn is_difference(self) -> bool {
        matches!(self, Class::Changed | Class::NewError | Class::GoneError)
    }
}

/// One recorded request, played (or not) against the live server.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Outcome {
    /// The server's name.
    pub server: String,
    /// The recorded connection.
    pub conn: String,
    /// The tape line of the request.
    pub line: usize,
    /// Its method.
    pub method: String,
    /// For `tools/call`, the tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// How it came out.
    pub class: Class,
    /// Why it was skipped or not played, or what went wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Where the answers differ.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub differences: Vec<Difference>,
    /// The tape line of the recorded answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer_line: Option<usize>,
    /// The live answer, exactly as the server wrote it (for `--update`).
    #[serde(skip)]
    pub live: Option<String>,
}

impl Outcome {
    /// `tools/call echo` or `prompts/get`, for reports.
    pub fn title(&self) -> String {
        match &self.tool {
            Some(t) => format!("{} {t}", self.method),
            None => self.method.clone(),
        }
    }
}

/// What verifying one connection found.
#[derive(Debug, Default)]
pub struct Run {
    /// One per recorded request (the handshake aside).
    pub outcomes: Vec<Outcome>,
    /// What kept the run from being complete (a crash, an unanswerable server request…).
    pub problems: Vec<String>,
    /// The server could not be started or went away: the run is incomplete (exit 3).
    pub broken: bool,
}

/// How to verify.
#[derive(Debug, Clone)]
pub struct Options {
    /// Paths left out of the comparison.
    pub ignore: Vec<Glob>,
    /// Play tool calls that may write.
    pub allow_writes: bool,
    /// Per-call timeout.
    pub timeout: Duration,
    /// Framing limit for the server's lines.
    pub max_line: usize,
    /// Compare `result._meta` too (`--match-meta`); left out by default.
    pub match_meta: bool,
}

/// The tools the tape's recorded `tools/list` answers mark `readOnlyHint: true`.
pub fn read_only_tools(tape: &Tape, server: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    for e in tape
        .entries
        .iter()
        .filter(|e| e.meta.server == server && e.meta.dir == Direction::Recv)
    {
        let v = e.message.value();
        for tool in v["result"]["tools"].as_array().into_iter().flatten() {
            if tool["annotations"]["readOnlyHint"] == Value::Bool(true)
                && let Some(name) = tool["name"].as_str()
            {
                out.insert(name.to_owned());
            }
        }
    }
    out
}

/// True when an answer is an error: a JSON-RPC error or a tool's `isError: true`.
fn is_error(v: &Value) -> bool {
    v.get("error").is_some() || v["result"]["isError"] == Value::Bool(true)
}

/// Compares a recorded answer with a live one; marks the globs that removed something.
pub fn compare(
    recorded: &Value,
    live: &Value,
    ignore: &[Glob],
    used: &mut [bool],
) -> (Class, Vec<Difference>) {
    let prepare = |v: &Value, used: &mut [bool]| {
        let mut doc = json!({});
        for member in ["result", "error"] {
            if let Some(x) = v.get(member) {
                doc[member] = x.clone();
            }
        }
        matcher::expand_json_text(&mut doc);
        for (glob, hit) in ignore.iter().zip(used.iter_mut()) {
            *hit |= glob.remove(&mut doc);
        }
        doc
    };
    let (old, new) = (prepare(recorded, used), prepare(live, used));
    let (was, is) = (is_error(recorded), is_error(live));
    let diffs = match (&old.get("error"), &new.get("error")) {
        // Two JSON-RPC errors: by code, then by message.
        (Some(a), Some(b)) if a["code"] != b["code"] => matcher::differences(
            &json!({"code": a["code"]}),
            &json!({"code": b["code"]}),
            "error",
        ),
        (Some(a), Some(b)) => matcher::differences(
            &json!({"message": a["message"]}),
            &json!({"message": b["message"]}),
            "error",
        ),
        _ => matcher::differences(&old, &new, ""),
    };
    let class = match (was, is) {
        (false, true) => Class::NewError,
        (true, false) => Class::GoneError,
        _ if diffs.is_empty() => Class::Same,
        _ => Class::Changed,
    };
    (class, diffs)
}

/// The recorded client answers to server requests, by method, in order.
struct Answers {
    by_method: HashMap<String, Vec<Message>>,
}

impl Answers {
    fn new(entries: &[&Entry]) -> Answers {
        let mut by_method: HashMap<String, Vec<Message>> = HashMap::new();
        for (i, e) in entries.iter().enumerate() {
            if e.meta.dir != Direction::Recv || e.message.kind() != Kind::Request {
                continue;
            }
            let (Some(method), Some(id)) = (e.message.method(), e.message.id()) else {
                continue;
            };
            let answer = entries[i + 1..].iter().find(|a| {
                a.meta.dir == Direction::Send
                    && matches!(a.message.kind(), Kind::Response | Kind::Error)
                    && a.message.id() == Some(id)
            });
            if let Some(a) = answer {
                by_method
                    .entry(method.to_owned())
                    .or_default()
                    .push(a.message.clone());
            }
        }
        for list in by_method.values_mut() {
            list.reverse();
        }
        Answers { by_method }
    }

    /// The next recorded answer to a request of this method, with the live id.
    fn take(&mut self, method: &str, live_id: &str) -> Option<String> {
        let answer = self.by_method.get_mut(method)?.pop()?;
        message::replace_member(answer.text(), &["id"], live_id)
    }
}

/// Where the live server is.
#[derive(Debug, Clone)]
pub enum Target {
    /// A command to start fresh for each connection.
    Command(Vec<String>),
    /// A Streamable HTTP server, with headers for every request.
    Url(String, Vec<(String, String)>),
}

/// The live server's side of the conversation: lines to it, messages from it.
// One per verified connection: the size difference between the variants costs nothing.
#[allow(clippy::large_enum_variant)]
enum Wire {
    Child {
        server: process::Server,
        stdin: Option<tokio::process::ChildStdin>,
        stdout: FramedRead<tokio::process::ChildStdout, LineCodec>,
    },
    Http(Box<HttpLink>),
}

impl Wire {
    /// Sends one message; false when the server can no longer take it.
    async fn send(&mut self, text: &str) -> bool {
        match self {
            Wire::Child { stdin, .. } => match stdin.as_mut() {
                Some(pipe) => pipe.write_all(format!("{text}\n").as_bytes()).await.is_ok(),
                None => false,
            },
            // A request is its own POST, whose answer streams in while others wait;
            // notifications and answers go in order.
            Wire::Http(link) => link
                .send(Message::new(Bytes::copy_from_slice(text.as_bytes())))
                .await
                .is_ok(),
        }
    }

    /// The next message from the server, `None` when it is gone.
    async fn next(&mut self) -> Option<Bytes> {
        match self {
            Wire::Child { stdout, .. } => loop {
                match stdout.next().await {
                    Some(Ok(Frame::Line(b))) => return Some(b),
                    Some(Ok(Frame::Long { .. })) => continue,
                    Some(Err(_)) | None => return None,
                }
            },
            Wire::Http(link) => loop {
                match link.next().await? {
                    Incoming::Message(m) => return Some(m.bytes()),
                    Incoming::Refused { request, error } => {
                        if let Some(line) = http::error_for(&request, &error.to_string()) {
                            return Some(Bytes::from(line));
                        }
                    }
                    Incoming::Event(_) => {}
                }
            },
        }
    }

    async fn stop(self) {
        match self {
            Wire::Child {
                mut server, stdin, ..
            } => {
                drop(stdin);
                let _ = server.stop().await;
            }
            Wire::Http(link) => drop(
                link.close(crate::tape::close::CloseReason::ClientClosedStdin)
                    .await,
            ),
        }
    }
}

/// Verifies one recorded connection against a fresh `argv` server.
pub async fn run_connection(
    tape: &Tape,
    conn: &Connection,
    target: &Target,
    opts: &Options,
    read_only: &HashSet<String>,
    used: &mut [bool],
) -> Result<Run> {
    let entries: Vec<&Entry> = conn
        .entries
        .iter()
        .map(|&i| &tape.entries[i])
        .filter(|e| e.meta.dir != Direction::Lifecycle)
        .collect();
    let mut answers = Answers::new(&entries);
    let mut run = Run::default();
    let started = match target {
        Target::Command(argv) => process::spawn_server(argv, &[], None)
            .map(|mut server| Wire::Child {
                stdin: server.child.stdin.take(),
                stdout: FramedRead::new(
                    server.child.stdout.take().expect("stdout is piped"),
                    LineCodec::new(opts.max_line),
                ),
                server,
            })
            .map_err(|e| crate::error::chain(&e)),
        Target::Url(url, headers) => Remote::new(url, headers.clone())
            .map(|remote| Wire::Http(Box::new(HttpLink::new(remote))))
            .map_err(|e| crate::error::chain(&e)),
    };
    let mut wire = match started {
        Ok(w) => w,
        Err(problem) => {
            run.problems.push(problem);
            run.broken = true;
            return Ok(run);
        }
    };
    let mut gone: Option<String> = None;
    for (i, entry) in entries.iter().enumerate() {
        // Only the client's side is played; the server's side is what is compared.
        if entry.meta.dir != Direction::Send {
            continue;
        }
        let msg = &entry.message;
        let method = msg.method().unwrap_or_default().to_owned();
        match msg.kind() {
            Kind::Request => {}
            Kind::Notification => {
                if gone.is_none() {
                    wire.send(msg.text()).await;
                }
                continue;
            }
            // The client's answers to server requests are given when the server asks.
            _ => continue,
        }
        let tool = (method == "tools/call").then(|| {
            msg.value()["params"]["name"]
                .as_str()
                .unwrap_or("?")
                .to_owned()
        });
        let recorded_answer = entries[i + 1..].iter().find(|a| {
            a.meta.dir == Direction::Recv
                && matches!(a.message.kind(), Kind::Response | Kind::Error)
                && a.message.id() == msg.id()
        });
        let mut outcome = Outcome {
            server: conn.server.clone(),
            conn: conn.id.clone(),
            line: entry.line,
            method: method.clone(),
            tool: tool.clone(),
            class: Class::Same,
            reason: None,
            differences: Vec::new(),
            answer_line: recorded_answer.map(|a| a.line),
            live: None,
        };
        if let Some(why) = &gone {
            outcome.class = Class::NotPlayed;
            outcome.reason = Some(why.clone());
            run.outcomes.push(outcome);
            continue;
        }
        if let Some(t) = &tool
            && !opts.allow_writes
            && !read_only.contains(t)
        {
            outcome.class = Class::Skipped;
            outcome.reason = Some(if read_only.is_empty() {
                format!(
                    "tool `{t}` may write: the tape holds no tools/list of this server marking any tool readOnlyHint: true; --allow-writes plays it"
                )
            } else {
                format!(
                    "tool `{t}` may write (the recorded tools/list does not mark it readOnlyHint: true); --allow-writes plays it"
                )
            });
            run.outcomes.push(outcome);
            continue;
        }
        if !wire.send(msg.text()).await {
            gone = Some(format!(
                "not played: the server stopped reading before tape line {}",
                entry.line
            ));
            outcome.class = Class::NotPlayed;
            outcome.reason = gone.clone();
            // A server that is gone broke the run, whether it went before it read or
            // before it answered (which of the two depends on timing).
            run.broken = true;
            run.outcomes.push(outcome);
            continue;
        }
        let want = msg.id().unwrap_or("null").to_owned();
        let live = tokio::time::timeout(opts.timeout, async {
            loop {
                let line = wire.next().await?;
                let text = framing::content(&line);
                if text.trim_ascii().is_empty() {
                    continue;
                }
                if message::shape(text) != Shape::Object {
                    run.problems.push(format!(
                        "the server wrote a line that is not a JSON-RPC message: {}",
                        String::from_utf8_lossy(&text[..text.len().min(80)])
                    ));
                    continue;
                }
                let live = Message::new(Bytes::copy_from_slice(text));
                match live.kind() {
                    Kind::Response | Kind::Error if live.id() == Some(want.as_str()) => return Some(live),
                    Kind::Response | Kind::Error => run.problems.push(format!(
                        "the server answered id {} while tape line {} waited for id {want}",
                        live.id().unwrap_or("null"),
                        entry.line
                    )),
                    Kind::Request => {
                        let id = live.id().unwrap_or("null");
                        let m = live.method().unwrap_or("?");
                        let reply = match (m, answers.take(m, id)) {
                            (_, Some(recorded)) => recorded,
                            ("ping", None) => format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}"),
                            (_, None) => {
                                run.problems.push(format!(
                                    "the server asked {m} during tape line {}, and the tape holds no client answer to it",
                                    entry.line
                                ));
                                json!({"jsonrpc": "2.0", "id": serde_json::from_str::<Value>(id).unwrap_or(Value::Null),
                                    "error": {"code": -32601, "message": format!("mcptape verify: the tape holds no answer to {m}")}})
                                .to_string()
                            }
                        };
                        wire.send(&reply).await;
                    }
                    _ => {}
                }
            }
        })
        .await;
        match live {
            Ok(Some(live)) => {
                let recorded = recorded_answer
                    .map(|a| comparable(&a.message))
                    .unwrap_or(Value::Null);
                if method == "initialize" {
                    if is_error(&live.value()) {
                        gone = Some(format!(
                            "not played: the server refused to initialize: {}",
                            live.value()["error"]
                        ));
                        run.problems.push(gone.clone().unwrap_or_default());
                        run.broken = true;
                    }
                    continue;
                }
                if recorded_answer.is_none() {
                    // A cut tape, or an answer too long to record ($transport/oversize):
                    // nothing to compare with, which is not a change of the server's.
                    outcome.class = Class::Skipped;
                    outcome.reason =
                        Some("played, not compared: the tape holds no recorded answer".into());
                    outcome.live = Some(live.text().to_owned());
                    run.outcomes.push(outcome);
                    continue;
                }
                let recorded = matcher::without_result_meta(recorded, opts.match_meta);
                let live_value = matcher::without_result_meta(comparable(&live), opts.match_meta);
                let (class, diffs) = compare(&recorded, &live_value, &opts.ignore, used);
                outcome.class = class;
                outcome.differences = diffs;
                outcome.live = Some(live.text().to_owned());
            }
            Ok(None) => {
                let why = format!(
                    "not played: the server closed its output at tape line {}",
                    entry.line
                );
                outcome.class = Class::NewError;
                outcome.reason = Some("the server exited instead of answering".into());
                gone = Some(why);
                run.broken = true;
            }
            Err(_) => {
                outcome.class = Class::NewError;
                outcome.reason = Some(format!(
                    "no answer within {}s (--timeout)",
                    opts.timeout.as_secs_f64()
                ));
            }
        }
        if method != "initialize" {
            run.outcomes.push(outcome);
        }
    }
    if let Some(why) = &gone {
        run.problems.push(why.clone());
    }
    wire.stop().await;
    Ok(run)
}

#[cfg(test)]
mod tests;
