//! The recording tap: sees every line that passes and appends it to a tape.
//!
//! The live path calls [`TapHandle`] methods *after* a line is forwarded; they never
//! block (they push onto a channel to the writer), so recording never changes or drops
//! live traffic. What that channel holds is budgeted: each line takes its length from
//! [`MAX_QUEUED_BYTES`] ([`TapHandle::try_reserve`]), and a caller whose line did not fit
//! waits for [`TapHandle::room`] before its next one (the tap layer,
//! [`crate::record::layer`], and the byte relay do), so recording delays live traffic
//! only while the writer is that far behind. A thread of its own turns each event into
//! tape lines and appends them. A failing disk
//! is reported once on stderr and in [`TapOutcome`]; the live session goes on, and the
//! tape keeps every entry written before the failure (no later entry is appended after a
//! torn one).
//!
//! What becomes an entry: a JSON object line is a message; each element of a JSON array
//! line (a JSON-RPC batch) is a message tagged `_meta.batch`; any other non-blank line is
//! a `$transport/invalid` lifecycle entry keeping its text; a line longer than the framing
//! maximum is a `$transport/oversize` entry with its length and a prefix. The first three
//! are [`line`]'s.

use std::sync::{Arc, mpsc};

use std::thread::JoinHandle;
use std::time::SystemTime;
use tokio::sync::Semaphore;

use bytes::Bytes;
use serde_json::json;

use crate::commit::layer::RESULT_PARAM;
use crate::error::TapeError;
use crate::message::{Kind, Message};
use crate::record::commits::{self, Held, Written};
use crate::record::results::{self, Requests};
use crate::redact::Redactor;
use crate::tape::TapeWriter;
use crate::tape::close::Close;
use crate::tape::commit::{Body, Digest};
use crate::tape::format::{self, Direction, Meta};
use crate::tape::lifecycle::{Lifecycle, LifecycleKind, Oversize, Truncated};
use crate::tape::stream::Stream;

enum Event {
    Line {
        dir: Direction,
        ts: SystemTime,
        bytes: Bytes,
        /// Bytes of the queue budget this line holds (given back once written).
        budget: usize,
        /// The HTTP stream a server message came on, when not its request's own.
        stream: Option<Stream>,
    },
    Lifecycle {
        ts: SystemTime,
        kind: LifecycleKind,
        params: serde_json::Value,
    },
    /// `--redact-results`: the tape drops result bodies ([`crate::record::results`]).
    DropResults,
    Finish,
}

/// What the tap did, known when it finishes.
#[derive(Debug)]
pub struct TapOutcome {
    /// Entries written.
    pub entries: usize,
    /// The first write error, after which nothing more was written.
    pub error: Option<TapeError>,
}

/// A running tap for one connection.
pub struct Tap {
    handle: TapHandle,
    thread: JoinHandle<TapOutcome>,
    /// The tape, for the error when the thread dies.
    path: std::path::PathBuf,
}

/// The cheap, clonable sending side of a [`Tap`], used on the live path.
#[derive(Clone)]
pub struct TapHandle {
    tx: mpsc::Sender<Event>,
    budget: Arc<Semaphore>,
}

/// The most bytes of forwarded lines that may wait for the tape writer. Recording never
/// delays live traffic below this; past it (a disk, or redaction, much slower than the
/// traffic) the live path waits, so that memory stays flat however long the session.
pub const MAX_QUEUED_BYTES: usize = 64 * 1024 * 1024;

/// A fresh connection id: random hex, then `-1` (one connection per proxy process); see
/// [`crate::ids::conn_id`].
pub fn new_conn_id() -> Result<String, TapeError> {
    Ok(crate::ids::conn_id()?)
}

impl Tap {
    /// Starts the writer thread on an open tape; every entry goes through `redactor`.
    pub fn start(writer: TapeWriter, server: String, conn: String, redactor: Redactor) -> Tap {
        let path = writer.path().to_path_buf();
        let (tx, rx) = mpsc::channel();
        let budget = Arc::new(Semaphore::new(MAX_QUEUED_BYTES));
        let give_back = Arc::clone(&budget);
        let thread = std::thread::Builder::new()
            .name("mcptape-tap".into())
            .spawn(move || {
                write_loop(
                    writer,
                    Entries {
                        server,
                        conn,
                        redactor,
                        budget: give_back,
                    },
                    rx,
                )
            })
            .expect("the OS can start one thread");
        Tap {
            handle: TapHandle { tx, budget },
            thread,
            path,
        }
    }

    /// A handle for the live path.
    pub fn handle(&self) -> TapHandle {
        self.handle.clone()
    }

    /// Writes everything queued so far, syncs the tape and stops the thread. A thread
    /// that panicked gives [`TapeError::WriterPanicked`] (said once on stderr): never a
    /// clean recording.
    #[must_use = "a recording's result must reach the exit status"]
    pub fn finish(self) -> TapOutcome {
        let _ = self.handle.tx.send(Event::Finish);
        self.thread.join().unwrap_or_else(|panic| {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "no message".to_owned());
            let error = TapeError::WriterPanicked {
                path: self.path,
                message,
            };
            crate::outcome::problem(&error.to_string());
            TapOutcome {
                entries: 0,
                error: Some(error),
            }
        })
    }
}

impl TapHandle {
    /// Records one forwarded line (with or without its `\n`).
    pub fn line(&self, dir: Direction, bytes: Bytes) {
        self.send_line(dir, bytes, 0, None);
    }

    /// Reserves `n` bytes of the queue budget if they are free now; false if the writer
    /// is that far behind.
    pub fn try_reserve(&self, n: usize) -> bool {
        let n = n.min(MAX_QUEUED_BYTES) as u32;
        match self.budget.try_acquire_many(n) {
            Ok(permit) => {
                permit.forget();
                true
            }
            Err(_) => false,
        }
    }

    /// Waits until `n` bytes of the queue budget are free, without taking them: how the
    /// live path slows to the writer's pace once it is behind.
    pub fn room(&self, n: usize) -> impl std::future::Future<Output = ()> + Send + 'static {
        let budget = Arc::clone(&self.budget);
        let n = n.min(MAX_QUEUED_BYTES) as u32;
        async move {
            drop(budget.acquire_many_owned(n).await);
        }
    }

    /// Gives back reserved bytes that will not be queued.
    fn release(&self, n: usize) {
        self.budget.add_permits(n.min(MAX_QUEUED_BYTES));
    }

    /// [`TapHandle::line`] for a line that holds `budget` reserved bytes.
    pub fn line_reserved(&self, dir: Direction, bytes: Bytes, budget: usize) {
        self.send_line(dir, bytes, budget, None);
    }

    /// [`TapHandle::line_reserved`] for a server message that came on `stream` (its
    /// entry's `_meta.stream`).
    pub fn line_on(&self, stream: Option<Stream>, bytes: Bytes, budget: usize) {
        self.send_line(Direction::Recv, bytes, budget, stream);
    }

    fn send_line(&self, dir: Direction, bytes: Bytes, budget: usize, stream: Option<Stream>) {
        let sent = self.tx.send(Event::Line {
            dir,
            ts: SystemTime::now(),
            bytes,
            budget,
            stream,
        });
        // The writer is gone: nobody will give the budget back but us.
        if sent.is_err() {
            self.release(budget);
        }
    }

    /// Records a forwarded line that was longer than the framing maximum.
    pub fn oversize(&self, dir: Direction, len: usize, prefix: &[u8]) {
        self.record(&Lifecycle::Oversize(Oversize {
            dir: Some(dir),
            bytes: Some(len as u64),
            prefix: Some(String::from_utf8_lossy(prefix).into_owned()),
        }));
    }

    /// Records a typed lifecycle event.
    pub fn record(&self, event: &Lifecycle) {
        let (kind, params) = event.event();
        self.lifecycle(kind, params);
    }

    /// Records a lifecycle event (`$transport/start`, `$http/status`, …).
    pub fn lifecycle(&self, kind: LifecycleKind, params: serde_json::Value) {
        let _ = self.tx.send(Event::Lifecycle {
            ts: SystemTime::now(),
            kind,
            params,
        });
    }

    /// From now on (sent before the first line), the tape drops result bodies
    /// (`--redact-results`, [`crate::record::results`]).
    pub fn drop_results(&self) {
        let _ = self.tx.send(Event::DropResults);
    }

    /// Records the end of the connection: the one writer of `$transport/close`.
    pub fn close(&self, close: &Close) {
        self.lifecycle(LifecycleKind::Close, close.params());
    }
}

/// What every entry of this tap shares.
struct Entries {
    server: String,
    conn: String,
    redactor: Redactor,
    budget: Arc<Semaphore>,
}

fn write_loop(mut writer: TapeWriter, entries: Entries, rx: mpsc::Receiver<Event>) -> TapOutcome {
    let server = &entries.server;
    let mut outcome = TapOutcome {
        entries: 0,
        error: None,
    };
    let mut state = State::default();
    for event in rx {
        let finish = matches!(event, Event::Finish);
        let reserved = match &event {
            Event::Line { budget, .. } => *budget,
            _ => 0,
        };
        if outcome.error.is_some() {
            entries.budget.add_permits(reserved);
            if finish {
                break;
            }
            continue;
        }
        let lines = render(event, &entries, &mut state);
        entries.budget.add_permits(reserved);
        for line in lines {
            if let Err(e) = writer.append(&line) {
                if let TapeError::Full { max, .. } = &e {
                    let cut = format::encode_event(
                        &Lifecycle::Truncated(Truncated {
                            max_bytes: Some(*max),
                        }),
                        &entries.meta(Direction::Lifecycle, SystemTime::now(), None),
                    );
                    let _ = writer.append_past_limit(&cut);
                }
                crate::outcome::problem(&format!(
                    "{e} ({}); recording of server `{server}` stopped here, the session goes on",
                    std::error::Error::source(&e)
                        .map(ToString::to_string)
                        .unwrap_or_default()
                ));
                outcome.error = Some(e);
                break;
            }
            outcome.entries += 1;
        }
        if finish {
            break;
        }
    }
    if outcome.error.is_none()
        && let Err(e) = writer.sync()
    {
        outcome.error = Some(e);
    }
    outcome
}

impl Entries {
    fn meta(&self, dir: Direction, ts: SystemTime, batch: Option<u64>) -> Meta {
        Meta {
            dir,
            server: self.server.clone(),
            ts: Some(format::timestamp(ts)),
            conn: Some(self.conn.clone()),
            batch,
            stream: None,
            source: None,
        }
    }

    /// The tape line of one message: redacted, then `_meta` appended.
    fn line(&self, message: &[u8], meta: &Meta) -> Vec<u8> {
        match std::str::from_utf8(message) {
            Ok(text) => format::encode(self.redactor.message(text.trim_ascii()).as_bytes(), meta),
            Err(_) => format::encode(message, meta),
        }
    }

    /// The tape lines of a server message, and of the `$commit` before it when one waits
    /// for it ([`crate::record::commits`]); under `--redact-results`, without a body the
    /// tape may not keep ([`crate::record::results`]).
    fn answer(
        &self,
        message: &[u8],
        meta: &Meta,
        state: &mut State,
        in_batch: bool,
    ) -> Vec<Vec<u8>> {
        let Ok(text) = std::str::from_utf8(message) else {
            return vec![self.line(message, meta)];
        };
        let sent = text.trim_ascii();
        if state.held.is_empty() && !state.drop_results {
            return vec![self.line(sent.as_bytes(), meta)];
        }
        let msg = Message::new(Bytes::copy_from_slice(sent.as_bytes()));
        let Some(waiting) = state.held.answered_by(&msg) else {
            let drops = match state.drop_results {
                false => None,
                true => {
                    let drops = state.requests.drops(&msg);
                    match in_batch && crate::message::raw_member(sent, &["result"]).is_some() {
                        true => Some(results::IN_BATCH),
                        false => drops,
                    }
                }
            };
            return match drops {
                Some(reason) => {
                    let kept = results::without_result(sent, reason);
                    vec![self.line(kept.as_bytes(), meta)]
                }
                None => vec![self.line(sent.as_bytes(), meta)],
            };
        };
        if state.drop_results {
            // The commitment is this answer's: the request waits no longer.
            let _ = state.requests.drops(&msg);
        }
        let mut entry = waiting.entry;
        let kept = commits::answer_text(&entry, sent);
        let written = self.redactor.message(&kept);
        entry.body = commits::body(&entry, sent, &written);
        if entry.body == Body::Redacted && entry.digest.sha256().is_some() {
            entry.digest = Digest::None(commits::SECRET_REASON.to_owned());
        }
        vec![
            self.lifecycle(&LifecycleKind::Commit, &entry.params(), waiting.ts),
            format::encode(written.as_bytes(), meta),
        ]
    }

    /// The lines of `$commit` entries to write now.
    fn commits(&self, written: Vec<Written>) -> Vec<Vec<u8>> {
        written
            .into_iter()
            .map(|(ts, entry)| self.lifecycle(&LifecycleKind::Commit, &entry.params(), ts))
            .collect()
    }

    /// True when secret redaction changes a JSON text.
    fn holds_secret(&self, text: &str) -> bool {
        self.redactor.message(text) != text
    }

    fn lifecycle(
        &self,
        kind: &LifecycleKind,
        params: &serde_json::Value,
        ts: SystemTime,
    ) -> Vec<u8> {
        let mut params = params.clone();
        if *kind == LifecycleKind::Start {
            if self.redactor.is_off() {
                params["redaction"] = json!("off");
            } else if let Some(argv) = params["command"].as_array() {
                let argv: Vec<String> = argv
                    .iter()
                    .filter_map(|a| a.as_str().map(String::from))
                    .collect();
                params["command"] = json!(self.redactor.argv(&argv));
            }
        }
        let message = format::lifecycle_message(kind.as_str(), &params);
        self.line(
            message.as_bytes(),
            &self.meta(Direction::Lifecycle, ts, None),
        )
    }
}

/// What the writer knows of the connection so far.
#[derive(Default)]
struct State {
    /// Batches seen.
    batches: u64,
    /// `$commit` entries waiting for their answers.
    held: Held,
    /// The client's requests waiting for their answers (tracked under `--redact-results`).
    requests: Requests,
    /// `--redact-results`.
    drop_results: bool,
}

impl State {
    /// A client message seen: the requests it opens or withdraws, and the commitments it
    /// makes stale ([`Held::superseded`]).
    fn sent(&mut self, text: &[u8]) -> Option<Written> {
        if self.held.is_empty() && !self.drop_results {
            return None;
        }
        let msg = Message::new(Bytes::copy_from_slice(text.trim_ascii()));
        if !matches!(msg.kind(), Kind::Request | Kind::Notification) {
            return None;
        }
        let key = self.requests.sent(&msg, self.drop_results)?;
        self.held.superseded(&key)
    }
}

fn render(event: Event, entries: &Entries, state: &mut State) -> Vec<Vec<u8>> {
    let drop_results = state.drop_results;
    match event {
        Event::Finish => entries.commits(state.held.drain()),
        Event::DropResults => {
            state.drop_results = true;
            Vec::new()
        }
        Event::Lifecycle {
            ts,
            kind,
            mut params,
        } => match kind {
            LifecycleKind::Commit => {
                let result = params.as_object_mut().and_then(|p| p.remove(RESULT_PARAM));
                let secret = result
                    .as_ref()
                    .and_then(serde_json::Value::as_str)
                    .is_some_and(|r| entries.holds_secret(r));
                match state.held.hold(ts, params, secret) {
                    Ok(now) => entries.commits(now),
                    Err(params) => vec![entries.lifecycle(&kind, &params, ts)],
                }
            }
            LifecycleKind::Close => {
                let mut lines = entries.commits(state.held.drain());
                lines.push(entries.lifecycle(&kind, &params, ts));
                lines
            }
            LifecycleKind::Fault => {
                let mut lines = Vec::new();
                if let Some((at, mut entry)) = state.held.fault(&params) {
                    let original = params.get("replaced").and_then(|r| r.get("result"));
                    if original.is_some_and(|r| entries.holds_secret(&r.to_string())) {
                        entry.digest = Digest::None(commits::SECRET_REASON.to_owned());
                    }
                    lines.push(entries.lifecycle(&LifecycleKind::Commit, &entry.params(), at));
                }
                let effect = params["effect"].as_str();
                if matches!(effect, Some("error" | "tool-error"))
                    && let Some(id) = params.get("id")
                {
                    // The client's answer is the fault's own: nothing of the server's.
                    state.requests.own_answer(id);
                }
                let params = match drop_results {
                    true => results::fault(params),
                    false => params,
                };
                lines.push(entries.lifecycle(&kind, &params, ts));
                lines
            }
            LifecycleKind::PolicyDecision => {
                if let Some(entry) = crate::tape::policy::PolicyEntry::read(&params)
                    && entry.resolution.answered_here()
                    && let Some(id) = params.get("id")
                {
                    // The gate answers the call itself.
                    state.requests.own_answer(id);
                }
                vec![entries.lifecycle(&kind, &params, ts)]
            }
            LifecycleKind::Oversize if drop_results => {
                let params = results::without_text(params, "prefix");
                vec![entries.lifecycle(&kind, &params, ts)]
            }
            _ => vec![entries.lifecycle(&kind, &params, ts)],
        },
        Event::Line {
            dir,
            ts,
            bytes,
            stream,
            ..
        } => line::entries(entries, state, dir, ts, &bytes, stream),
    }
}

mod line;

#[cfg(test)]
mod tests;
