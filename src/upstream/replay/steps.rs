//! The steps of one recorded connection's script: its messages in tape order, less what
//! replay answers live (client pings and their answers), with a recorded discovery probe
//! and its answer marked optional, and so is a repeated listing ([`LISTINGS`]) with its
//! answer: a client that caches listings asks again as often as its timing makes it miss
//! the cache (see [`crate::upstream::replay`]).

use std::collections::HashSet;
use std::time::SystemTime;

use crate::message::{self, Kind, Message};
use crate::tape::{Connection, Direction, Tape};
use crate::upstream::script::Script;

#[derive(Debug)]
pub(super) struct Step {
    pub(super) line: usize,
    pub(super) dir: Direction,
    pub(super) message: Message,
    pub(super) ts: Option<SystemTime>,
    pub(super) done: bool,
    /// A recorded `server/discover` probe or its answer: skipped if the client does not probe.
    pub(super) optional: bool,
    /// The message as the matcher compares it, computed once.
    pub(super) normalized: std::sync::OnceLock<serde_json::Value>,
    /// The HTTP stream a server message goes back on ([`super::streams`]).
    pub(super) stream: Option<crate::tape::stream::Stream>,
    /// Made up by an importer (`_meta.source.synthesized`): the handshake of an imported
    /// connection, which matches any `initialize` ([`crate::tape::source`]).
    pub(super) synthesized: bool,
}

fn ts_of(entry: &crate::tape::Entry) -> Option<SystemTime> {
    humantime::parse_rfc3339(entry.meta.ts.as_deref()?).ok()
}

/// The steps of `conn` that `script` keeps.
pub(super) fn of(tape: &Tape, conn: &Connection, script: &mut Script) -> Vec<Step> {
    let mut steps: Vec<Step> = conn
        .entries
        .iter()
        .map(|&i| &tape.entries[i])
        .filter(|e| script.keeps(e))
        .scan(HashSet::new(), |answered, e| {
            if e.meta.dir == Direction::Recv
                && matches!(e.message.kind(), Kind::Response | Kind::Error)
                && let Some(id) = e.message.id()
            {
                answered.insert(id.to_owned());
            }
            Some((e, as_step(e, answered)))
        })
        .filter_map(|(e, step)| Some((e, step?)))
        .map(|(e, (dir, message))| Step {
            line: e.line,
            dir,
            message,
            ts: ts_of(e),
            done: false,
            optional: false,
            normalized: std::sync::OnceLock::new(),
            stream: e.meta.stream,
            synthesized: e.meta.synthesized(),
        })
        .collect();
    drop_pings(&mut steps);
    mark_probes(&mut steps);
    super::streams::mark(&mut steps);
    mark_repeats(&mut steps);
    steps
}

/// What a tape entry is to the script: a message as recorded, or — for a client of the
/// HTTP front that closed a request's stream (`$http/cancelled` naming the request) — the
/// cancel that was (the stateless revision cancels so), which the live client makes by
/// closing its stream too ([`cancel_by_stream`]), unless the request was answered before
/// it (`answered`, the ids answered so far). Other lifecycle entries are none.
fn as_step(e: &crate::tape::Entry, answered: &HashSet<String>) -> Option<(Direction, Message)> {
    if e.meta.dir != Direction::Lifecycle {
        return Some((e.meta.dir, e.message.clone()));
    }
    match crate::tape::lifecycle::Lifecycle::of(e)? {
        // A stream closed after its answer came cancelled nothing.
        crate::tape::lifecycle::Lifecycle::HttpCancelled {
            request_id: Some(id),
            ..
        } if !answered.iter().any(|a| message::same_id(a, &id)) => {
            Some((Direction::Send, cancel_by_stream(&id)))
        }
        _ => None,
    }
}

/// Why the HTTP front says a request was cancelled: its client closed the stream.
pub const STREAM_CLOSED: &str = "the client closed its stream";

/// The cancel of request `id` (raw JSON) by closing its stream, as the script holds it.
pub(super) fn cancel_by_stream(id: &str) -> Message {
    Message::new(
        format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{{\"requestId\":{id},\"reason\":\"{STREAM_CLOSED}\"}}}}"
        )
        .into_bytes(),
    )
}

/// Listing requests: idempotent reads a client may repeat, or send fewer of, without
/// changing what it is owed.
pub(super) const LISTINGS: &[&str] = &[
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
];

/// True for a client's listing request.
pub(super) fn is_listing(dir: Direction, msg: &Message) -> bool {
    dir == Direction::Send
        && msg.kind() == Kind::Request
        && msg.method().is_some_and(|m| LISTINGS.contains(&m))
}

/// A listing request that repeats an earlier one (same method, same cursor) is optional,
/// with its answer.
fn mark_repeats(steps: &mut [Step]) {
    let mut seen: HashSet<(String, Option<String>)> = HashSet::new();
    let mut repeats: HashSet<String> = HashSet::new();
    for s in steps.iter_mut() {
        if is_listing(s.dir, &s.message) {
            let cursor = message::raw_member(s.message.text(), &["params", "cursor"]);
            let key = (
                s.message.method().unwrap_or_default().to_owned(),
                cursor.map(str::to_owned),
            );
            if !seen.insert(key) {
                s.optional = true;
                repeats.extend(s.message.id().map(str::to_owned));
            }
        } else if s.dir == Direction::Recv
            && matches!(s.message.kind(), Kind::Response | Kind::Error)
            && s.message.id().is_some_and(|i| repeats.remove(i))
        {
            s.optional = true;
        }
    }
}

/// Client pings (and their answers) are answered live, never required.
fn drop_pings(steps: &mut Vec<Step>) {
    let pings: HashSet<String> = steps
        .iter()
        .filter(|s| s.dir == Direction::Send && s.message.kind() == Kind::Request)
        .filter(|s| s.message.method() == Some("ping"))
        .filter_map(|s| s.message.id().map(str::to_owned))
        .collect();
    steps.retain(|s| {
        let answer = matches!(s.message.kind(), Kind::Response | Kind::Error);
        let ping = s.message.method() == Some("ping") && s.dir == Direction::Send;
        let ping_answer =
            answer && s.dir == Direction::Recv && s.message.id().is_some_and(|i| pings.contains(i));
        !(ping || ping_answer)
    });
}

/// A recorded discovery probe is optional, with its answer.
fn mark_probes(steps: &mut [Step]) {
    let probes: HashSet<String> = steps
        .iter()
        .filter(|s| s.dir == Direction::Send && s.message.method() == Some("server/discover"))
        .filter_map(|s| s.message.id().map(str::to_owned))
        .collect();
    for s in steps.iter_mut() {
        let is_probe = s.dir == Direction::Send && s.message.method() == Some("server/discover");
        let is_answer = s.dir == Direction::Recv
            && matches!(s.message.kind(), Kind::Response | Kind::Error)
            && s.message.id().is_some_and(|i| probes.contains(i));
        s.optional = is_probe || is_answer;
    }
}

/// The progress tokens the recorded client issued (raw JSON).
pub(super) fn recorded_tokens(steps: &[Step]) -> HashSet<String> {
    steps
        .iter()
        .filter(|s| s.dir == Direction::Send)
        // Most requests carry no token: a byte search spares parsing them.
        .filter(|s| memchr::memmem::find(s.message.raw(), b"progressToken").is_some())
        .filter(|s| s.message.kind() == Kind::Request)
        .filter_map(|s| {
            message::raw_member(s.message.text(), &["params", "_meta", "progressToken"])
        })
        .map(str::to_owned)
        .collect()
}
