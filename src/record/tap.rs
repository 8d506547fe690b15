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
//! maximum is a `$transport/oversize` entry with its length and a prefix.

use std::sync::{Arc, mpsc};

use std::thread::JoinHandle;
use std::time::SystemTime;
use tokio::sync::Semaphore;

use bytes::Bytes;
use serde_json::json;
use serde_json::value::RawValue;

use crate::error::TapeError;
use crate::framing;
use crate::message::{Shape, shape};
use crate::record::commits::{self, Held};
use crate::redact::Redactor;
use crate::tape::TapeWriter;
use crate::tape::close::Close;
use crate::tape::commit::CommitEntry;
use crate::tape::format::{self, Direction, Meta};
use crate::tape::lifecycle::{Invalid, Lifecycle, LifecycleKind, Oversize, Truncated};
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
    let mut batches = 0u64;
    let mut held = Held::default();
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
        let lines = render(event, &entries, &mut batches, &mut held);
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
    /// for it ([`crate::record::commits`]).
    fn answer(&self, message: &[u8], meta: &Meta, held: &mut Held) -> Vec<Vec<u8>> {
        let (Some(waiting), Ok(text)) = (held.answered_by(message), std::str::from_utf8(message))
        else {
            return vec![self.line(message, meta)];
        };
        let sent = text.trim_ascii();
        let kept = commits::answer_text(&waiting, sent);
        let written = self.redactor.message(&kept);
        let entry = CommitEntry {
            body: commits::body(&waiting, sent, &written),
            ..waiting.entry
        };
        vec![
            self.lifecycle(&LifecycleKind::Commit, &entry.params(), waiting.ts),
            format::encode(written.as_bytes(), meta),
        ]
    }

    /// The `$commit` entries whose answers never came, as they were told.
    fn unanswered(&self, held: &mut Held) -> Vec<Vec<u8>> {
        held.drain()
            .into_iter()
            .map(|w| self.lifecycle(&LifecycleKind::Commit, &w.entry.params(), w.ts))
            .collect()
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

fn render(event: Event, entries: &Entries, batches: &mut u64, held: &mut Held) -> Vec<Vec<u8>> {
    let invalid = |dir: Direction, ts, text: &[u8]| {
        let (kind, params) = Lifecycle::Invalid(Invalid {
            dir: Some(dir),
            text: String::from_utf8_lossy(text).into_owned(),
        })
        .event();
        entries.lifecycle(&kind, &params, ts)
    };
    match event {
        Event::Finish => entries.unanswered(held),
        Event::Lifecycle { ts, kind, params } => match kind {
            LifecycleKind::Commit => match held.hold(ts, params) {
                Ok(()) => Vec::new(),
                Err(params) => vec![entries.lifecycle(&kind, &params, ts)],
            },
            LifecycleKind::Close => {
                let mut lines = entries.unanswered(held);
                lines.push(entries.lifecycle(&kind, &params, ts));
                lines
            }
            LifecycleKind::Fault if !held.is_empty() => {
                let params = held.fault(&params).unwrap_or(params);
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
        } => {
            let meta = |batch| Meta {
                stream,
                ..entries.meta(dir, ts, batch)
            };
            let text = framing::content(&bytes);
            if text.trim_ascii().is_empty() {
                return Vec::new();
            }
            match shape(text) {
                Shape::Object if dir == Direction::Recv => entries.answer(text, &meta(None), held),
                Shape::Object => vec![entries.line(text, &meta(None))],
                Shape::Array => {
                    let elements: Vec<&RawValue> = std::str::from_utf8(text)
                        .ok()
                        .and_then(|t| serde_json::from_str(t).ok())
                        .unwrap_or_default();
                    if elements.is_empty() {
                        return vec![invalid(dir, ts, text)];
                    }
                    *batches += 1;
                    elements
                        .into_iter()
                        .flat_map(|el| match shape(el.get().as_bytes()) {
                            Shape::Object if dir == Direction::Recv => {
                                entries.answer(el.get().as_bytes(), &meta(Some(*batches)), held)
                            }
                            Shape::Object => {
                                vec![entries.line(el.get().as_bytes(), &meta(Some(*batches)))]
                            }
                            _ => vec![invalid(dir, ts, el.get().as_bytes())],
                        })
                        .collect()
                }
                Shape::Invalid => vec![invalid(dir, ts, text)],
            }
        }
    }
}

#[cfg(test)]
mod tests;
