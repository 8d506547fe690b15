//! The replay engine: one recorded connection played as a script, with no server.
//!
//! A send entry is a message the client must send: the client's requests and
//! notifications are matched ([`crate::matcher`]) in their recorded order among
//! themselves (with `unordered`, any of the current burst). A recv entry is given to the
//! client as soon as what causes it has happened ([`causes`]): the recorded order of
//! independent messages is timing, not causality. The client's answer to a server
//! request (sampling, elicitation, roots, ping) is taken whenever it comes after that
//! request was given, and never demanded before the client's next request.
//!
//! A server request the tape holds no answer to (in a whole recording) is given no
//! earlier than its recorded delay after its cause, or never with `skip_unanswered`; the
//! client's answer to it is then unrecorded: a note, not a divergence.
//!
//! Listing requests (`tools/list`, `prompts/list`, `resources/list`,
//! `resources/templates/list`) are idempotent reads that clients repeat as their timing
//! dictates, and are matched out of order. The Python SDK (2.x) `ClientSession.call_tool`
//! validates each result against the tool's output schema and, when the tool is not in
//! its schema cache yet, calls `list_tools()` first; concurrent calls whose answers arrive
//! before the first listing's answer each miss the cache and each send a `tools/list`, so
//! how many listings a run sends depends on how its answers bunch up. A recorded repeat
//! of a listing is therefore optional, and a live repeat the tape lacks gets the recorded
//! answer to the same listing again, noted.
//!
//! Rewrites going out, nothing else: a response gets the live request's `id`; a progress
//! notification gets the live request's `progressToken`; an `initialize` result gets the
//! protocol version the client asked for when this server answered that version
//! somewhere in the tape (for an imported connection's synthesized answer, when it is
//! a version mcptape knows; that handshake's `initialize` matches any `initialize`, also
//! with `--strict-initialize`: [`crate::tape::source`]). The client's own `ping` is answered at once and recorded client
//! pings are not required. A recorded `server/discover` probe (2026-07-28 clients) is
//! optional; a live probe against a tape without one gets the server's recorded answer to
//! a probe elsewhere in the tape, or method-not-found, so the client falls back to
//! `initialize` as the spec says.
//!
//! The first mismatch answers the client with a JSON-RPC error [`DIVERGED_CODE`] naming
//! what came and what the tape expected, and stops the script: every later request gets
//! the same error. So does the end of a cut recording ([`crate::upstream::script`]): a request whose answer
//! the tape lost, or a message past the end, gets that error, and the verdict says where
//! the tape ends.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, SystemTime};

use crate::matcher::{self, Matcher};
use crate::message::{self, Kind, Message};
use crate::tape::{Connection, Direction, Tape};
use crate::upstream::script::{Ending, Lost, Pairs};
use crate::verdict::{Leftover, Mismatch, Verdict};

mod accepts;
pub mod any;
mod causes;
mod diverge;
mod ends;
mod facts;
mod link;
mod release;
pub mod stateless;
mod steps;
mod streams;

pub use facts::{ServerFacts, error_line, summary};
pub use link::ReplayLink;
pub use steps::STREAM_CLOSED;
use steps::Step;

/// The JSON-RPC error code of a replay divergence (server-defined range).
pub const DIVERGED_CODE: i64 = -32090;
/// JSON-RPC "parse error".
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC "method not found".
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
/// Client notifications that may come unrecorded without failing the replay: they ask
/// nothing of the server, and their timing varies from run to run.
const ADVISORY: &[&str] = &[
    "notifications/cancelled",
    "notifications/roots/list_changed",
    "notifications/progress",
];
/// Longest message summary in errors and verdicts.
const SUMMARY_CHARS: usize = 240;

/// How a connection is replayed.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Normalization and comparison.
    pub matcher: Matcher,
    /// How client messages are matched: in recorded order, any pending one of the
    /// current burst (`unordered`), or any recorded exchange (`any`).
    pub matching: crate::cli::MatchMode,
    /// With `any`: recorded requests never used fail the verdict (else they are notes).
    pub fail_on_unused: bool,
    /// Never give a server request the tape holds no answer to.
    pub skip_unanswered: bool,
}

/// A line for the client, and how long after the previous step it was recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Out {
    /// The recorded gap before this message (for `--pace`).
    pub delay: Duration,
    /// Not part of the script (a ping's answer, a parse error): sent at once, even ahead
    /// of paced messages.
    pub immediate: bool,
    /// The bytes to write, `\n` included.
    pub line: Vec<u8>,
    /// The HTTP stream it goes back on, when not its request's own ([`streams`]).
    pub stream: Option<crate::tape::stream::Stream>,
    /// Held: to be given no earlier than this long after now (a server request the tape
    /// holds no answer to, at its recorded delay after its cause).
    pub hold: Option<Duration>,
}

/// One recorded connection being replayed.
#[derive(Debug)]
pub struct Replay {
    steps: Vec<Step>,
    pos: usize,
    /// Which recorded answer answers which recorded request.
    pairs: Pairs,
    /// What causes each recv step, and which are ready.
    causes: causes::Causes,
    /// Recorded ids of server requests given that the tape holds no answer to.
    unasked: HashSet<String>,
    /// Matched request step → the live request's id (raw JSON).
    live: HashMap<usize, String>,
    /// Recorded progress token (raw JSON) → live token (raw JSON).
    tokens: HashMap<String, String>,
    /// Protocol versions this server answered anywhere in the tape.
    versions: HashSet<String>,
    /// The version the live client asked for in `initialize`.
    asked_version: Option<String>,
    /// The step of the matched `initialize` request.
    init_step: Option<usize>,
    /// This server's recorded answer to a `server/discover` probe, if any.
    discover_answer: Option<Message>,
    /// Progress tokens the recorded client issued (raw JSON).
    recorded_tokens: HashSet<String>,
    /// Live ids of matched requests not answered yet, in order.
    awaiting: Vec<String>,
    /// The client's recorded answers to server requests already given to it, not yet
    /// matched: taken whenever they come (their order against independent client
    /// messages is recorded timing, not causality).
    owed: Vec<usize>,
    /// How the recording of the connection ended.
    ending: Ending,
    /// The server messages the recording lost (too long to record).
    lost: Lost,
    last_ts: Option<SystemTime>,
    /// An entry of the connection was imported from an agent's transcript
    /// (`_meta.source`): its client messages never sent are notes, not leftovers.
    imported: bool,
    diverged: Option<String>,
    verdict: Verdict,
    opts: Options,
}

impl Replay {
    /// Prepares the replay of `conn`, one of `tape`'s connections; `facts` are its
    /// server's, gathered once for all its connections.
    pub fn new(tape: &Tape, conn: &Connection, facts: &ServerFacts, opts: Options) -> Replay {
        let ending = Ending::of(tape, conn);
        let mut script = ending.script();
        let steps = steps::of(tape, conn, &mut script);
        let ServerFacts {
            versions,
            discover_answer,
        } = facts.clone();
        let recorded_tokens = steps::recorded_tokens(&steps);
        let notes = ending.note().into_iter().collect();
        let pairs = Pairs::of(steps.iter().map(|s| (s.dir, &s.message)));
        Replay {
            causes: causes::Causes::of(&steps, &pairs, !ending.is_cut()),
            unasked: HashSet::new(),
            pairs,
            steps,
            pos: 0,
            live: HashMap::new(),
            tokens: HashMap::new(),
            versions,
            asked_version: None,
            init_step: None,
            discover_answer,
            recorded_tokens,
            awaiting: Vec::new(),
            owed: Vec::new(),
            lost: Lost::of(tape, conn, &ending),
            ending,
            last_ts: None,
            imported: conn
                .entries
                .iter()
                .any(|&i| tape.entries[i].meta.source.is_some()),
            diverged: None,
            verdict: Verdict {
                server: conn.server.clone(),
                conn: Some(conn.id.clone()),
                first_line: conn.entries.first().map(|&i| tape.entries[i].line),
                notes,
                ..Verdict::default()
            },
            opts,
        }
    }

    /// What the server said before the client said anything (usually nothing).
    pub fn start(&mut self) -> Vec<Out> {
        self.advance()
    }

    /// Takes one line from the client (its text, without line terminator) and returns
    /// what to send back.
    pub fn on_client(&mut self, text: &[u8]) -> Vec<Out> {
        if text.trim_ascii().is_empty() {
            return Vec::new();
        }
        let msg = Message::new(text.to_vec());
        if let Some(out) = self.outside_script(&msg) {
            return out;
        }
        let live_id = msg.id().unwrap_or("null").to_owned();
        if let Some(out) = self.unrecorded_answer(&msg) {
            return out;
        }
        let msg = self.as_recorded(msg);
        let probing = msg.kind() == Kind::Request && msg.method() == Some("server/discover");
        let candidates = self.candidates();
        if !probing {
            self.skip_optional(&candidates);
        }
        let candidates = self.candidates();
        let live_norm = std::sync::OnceLock::new();
        if let Some(&c) = candidates
            .iter()
            .find(|&&c| self.step_matches(c, &msg, &live_norm))
        {
            return self.matched(c, &msg);
        }
        if let Some(out) = self.listing(&msg, &live_id) {
            return out;
        }
        if msg.kind() == Kind::Notification && msg.method().is_some_and(|m| ADVISORY.contains(&m)) {
            // Advisory: the server needs no answer and the script does not depend on it.
            self.verdict
                .notes
                .push(format!("the client sent an unrecorded {}", summary(&msg)));
            return Vec::new();
        }
        if probing {
            // The tape's client did not probe here: answer as this server did elsewhere.
            let line = match &self.discover_answer {
                Some(answer) => {
                    let text = message::replace_member(answer.text(), &["id"], &live_id)
                        .unwrap_or_default();
                    format!("{text}\n").into_bytes()
                }
                None => error_line(&live_id, METHOD_NOT_FOUND, "Method not found"),
            };
            return vec![self.now(line)];
        }
        if candidates.is_empty()
            && let Some(out) = self.past_end(&msg)
        {
            return out;
        }
        self.diverge(&msg, candidates.first().copied())
    }

    /// The answers that do not depend on the script: a line that is not a message, a
    /// ping, anything after a divergence.
    fn outside_script(&mut self, msg: &Message) -> Option<Vec<Out>> {
        let text = msg.raw();
        if !msg.is_object() {
            let shown = String::from_utf8_lossy(&text[..text.len().min(80)]).into_owned();
            self.verdict.problems.push(format!(
                "the client sent a line that is not a JSON-RPC message: {shown}"
            ));
            return Some(vec![self.now(error_line(
                "null",
                PARSE_ERROR,
                &format!("Parse error: not a JSON-RPC message: {shown}"),
            ))]);
        }
        let live_id = msg.id().unwrap_or("null");
        if msg.kind() == Kind::Request && msg.method() == Some("ping") {
            return Some(vec![self.now(
                format!("{{\"jsonrpc\":\"2.0\",\"id\":{live_id},\"result\":{{}}}}\n").into_bytes(),
            )]);
        }
        let why = self.diverged.as_ref()?;
        Some(match msg.kind() {
            Kind::Request => vec![self.now(error_line(live_id, DIVERGED_CODE, why))],
            _ => Vec::new(),
        })
    }

    /// A cancellation names a live request id: read it as the recorded one.
    fn as_recorded(&self, msg: Message) -> Message {
        match message::raw_member(msg.text(), &["params", "requestId"]) {
            Some(live) if msg.method() == Some("notifications/cancelled") => {
                match self.recorded_id(live) {
                    Some(rec) => {
                        message::replace_member(msg.text(), &["params", "requestId"], &rec)
                            .map(Message::new)
                            .unwrap_or(msg)
                    }
                    None => msg,
                }
            }
            _ => msg,
        }
    }

    /// The verdict, once the client has hung up.
    pub fn finish(mut self) -> Verdict {
        if self.verdict.mismatch.is_none() && self.verdict.tape_end.is_none() {
            let unsent: Vec<Leftover> = self
                .steps
                .iter()
                .filter(|s| s.dir == Direction::Send && !s.done && !s.optional)
                .map(|s| Leftover {
                    line: s.line,
                    summary: summary(&s.message),
                })
                .collect();
            if self.imported {
                // An agent's log, not a script the client is bound to follow whole: what
                // it did not ask for is listed, not failed.
                self.verdict.notes.extend(
                    unsent.iter().map(|l| {
                        format!("imported, not sent (tape line {}): {}", l.line, l.summary)
                    }),
                );
            } else {
                self.verdict.leftovers = unsent;
            }
            self.verdict.leftovers.extend(self.ending.leftover());
        }
        self.verdict
    }

    /// The send steps the next client message may match: the next one, after any
    /// optional probes; with `unordered`, the whole burst (the requests the client sent
    /// before any of their answers came back).
    fn candidates(&self) -> Vec<usize> {
        let mut out = Vec::new();
        let mut ids = HashSet::new();
        let mut answered = false;
        for i in (self.pos..self.steps.len()).filter(|&i| !self.steps[i].done) {
            let s = &self.steps[i];
            if s.dir == Direction::Send && self.pairs.request_of(i).is_some() {
                // The client's answer to a server request: taken once owed.
                continue;
            }
            if s.optional {
                if s.dir == Direction::Send {
                    out.push(i);
                }
                continue;
            }
            match s.dir {
                Direction::Send if answered => break,
                Direction::Send => {
                    out.push(i);
                    if self.opts.matching == crate::cli::MatchMode::Strict {
                        break;
                    }
                    if let Some(id) = s.message.id().filter(|_| s.message.kind() == Kind::Request) {
                        ids.insert(id.to_owned());
                    }
                }
                // A recv step never holds up the client's next message.
                _ if self.opts.matching == crate::cli::MatchMode::Strict => {}
                _ => {
                    let answer = matches!(s.message.kind(), Kind::Response | Kind::Error);
                    answered |= answer && s.message.id().is_some_and(|id| ids.contains(id));
                }
            }
        }
        for &a in &self.owed {
            if !self.steps[a].done && !out.contains(&a) {
                out.push(a);
            }
        }
        out
    }

    /// The client did not probe: drop recorded probes (and their answers) at the front.
    fn skip_optional(&mut self, candidates: &[usize]) {
        for &c in candidates {
            let probe = self.steps[c].message.method() == Some("server/discover");
            if !self.steps[c].optional || !probe {
                continue;
            }
            self.happened(c);
            let id = self.steps[c].message.id().map(str::to_owned);
            let answers: Vec<usize> = (c..self.steps.len())
                .filter(|&j| {
                    let s = &self.steps[j];
                    s.dir == Direction::Recv
                        && s.optional
                        && s.message.id().map(str::to_owned) == id
                })
                .collect();
            for j in answers {
                self.happened(j);
            }
        }
    }

    fn consume(&mut self, i: usize, live: &Message) {
        self.owed.retain(|&a| a != i);
        self.happened(i);
        let step = &self.steps[i];
        self.verdict.matched += 1;
        if let Some(ts) = step.ts {
            self.last_ts = Some(ts);
        }
        let recorded = &step.message;
        if recorded.kind() != Kind::Request {
            return;
        }
        if let (Some(_), Some(now)) = (recorded.id(), live.id()) {
            self.live.insert(i, now.to_owned());
            self.awaiting.push(now.to_owned());
        }
        let token = ["params", "_meta", "progressToken"];
        if let (Some(rec), Some(now)) = (
            message::raw_member(recorded.text(), &token),
            message::raw_member(live.text(), &token),
        ) {
            self.tokens.insert(rec.to_owned(), now.to_owned());
        }
        if recorded.method() == Some("initialize") {
            self.init_step = Some(i);
            self.asked_version =
                message::raw_member(live.text(), &["params", "protocolVersion"]).map(str::to_owned);
        }
    }

    /// The exit status to end with when the recorded server ended the connection itself
    /// and the script has got there.
    pub fn server_gone(&self) -> Option<u8> {
        let done = self.steps.iter().all(|s| s.done || s.optional);
        self.ending
            .server_exit()
            .filter(|_| done && self.diverged.is_none())
    }

    /// The recorded message of step `i` with the live id, progress token or protocol version.
    fn rewrite(&self, i: usize, msg: &Message) -> Vec<u8> {
        let mut text = match self.live_id(i).and_then(|live| msg.with_id(live)) {
            Some(t) => t,
            None => msg.text().to_owned(),
        };
        if msg.kind() == Kind::Notification && msg.method() == Some("notifications/progress") {
            let path = ["params", "progressToken"];
            if let Some(live) = message::raw_member(&text, &path).and_then(|t| self.tokens.get(t)) {
                text = message::replace_member(&text, &path, live).unwrap_or(text);
            }
        }
        if msg.kind() == Kind::Response
            && self.init_step.is_some()
            && self.pairs.request_of(i) == self.init_step
            && let Some(asked) = &self.asked_version
        {
            let path = ["result", "protocolVersion"];
            let is_init = message::raw_member(&text, &["result", "serverInfo"]).is_some();
            // A made-up answer speaks any version mcptape knows; a recorded one those
            // the server spoke.
            let spoken = if self.steps[i].synthesized {
                crate::tape::source::is_known_version(asked)
            } else {
                self.versions.contains(asked)
            };
            if is_init && spoken && message::raw_member(&text, &path).is_some() {
                text = message::replace_member(&text, &path, asked).unwrap_or(text);
            }
        }
        text.push('\n');
        text.into_bytes()
    }

    fn now(&self, line: Vec<u8>) -> Out {
        Out {
            delay: Duration::ZERO,
            immediate: true,
            line,
            stream: None,
            hold: None,
        }
    }

    /// True when the client's `live` message is what step `i` expects; normalized forms
    /// are computed at most once (the step's for the whole replay, the live one's per
    /// message).
    fn step_matches(
        &self,
        i: usize,
        live: &Message,
        live_norm: &std::sync::OnceLock<serde_json::Value>,
    ) -> bool {
        let step = &self.steps[i];
        // A made-up handshake holds nothing to compare: any `initialize` is it, strict
        // or not.
        if step.synthesized
            && step.message.kind() == live.kind()
            && step.message.method() == Some("initialize")
            && live.method() == Some("initialize")
        {
            return true;
        }
        let m = &self.opts.matcher;
        m.decides(&step.message, live).unwrap_or_else(|| {
            let recorded = step.normalized.get_or_init(|| m.normalize(&step.message));
            matcher::equal(recorded, live_norm.get_or_init(|| m.normalize(live)))
        })
    }

    /// The live id of the request that answer step `i` answers, once matched.
    fn live_id(&self, i: usize) -> Option<&String> {
        self.pairs.request_of(i).and_then(|r| self.live.get(&r))
    }

    /// The recorded id of the latest matched request the client sent with `live` id.
    fn recorded_id(&self, live: &str) -> Option<String> {
        let (&step, _) = self.live.iter().filter(|(_, l)| *l == live).max()?;
        self.steps[step].message.id().map(str::to_owned)
    }

    /// True once the replay has diverged or reached the end of a cut recording.
    pub fn diverged(&self) -> bool {
        self.diverged.is_some()
    }
}

#[cfg(test)]
mod imported_tests;
#[cfg(test)]
mod tests;

#[cfg(test)]
mod causal_tests;
