//! Lifecycle entries read as typed values: what a `$…` notification on a tape says.
//!
//! Writers put these on tapes (`$transport/start`, `$transport/close`, `$tape/truncated`,
//! …) through a [`LifecycleKind`], and readers read one here, once: nobody compares a
//! `$…` method as a string. Unknown events are kept as [`LifecycleKind::Other`], never
//! refused or dropped (a newer mcptape or mcporter may write more). What a close entry
//! says (reason, exit status) is read and written in [`crate::tape::close`].

use crate::tape::close::Close;
use crate::tape::{Direction, Entry};

/// The method of a lifecycle entry: the `$…` events mcptape knows, and any other.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LifecycleKind {
    /// `$transport/start`: a connection opens.
    Start,
    /// `$transport/close`: the connection ended.
    Close,
    /// `$transport/invalid`: a line that was not a JSON-RPC message, its text kept.
    Invalid,
    /// `$transport/oversize`: a line over `--max-line-bytes`, its length and a prefix.
    Oversize,
    /// `$tape/truncated`: the tape reached its size limit; nothing after it was recorded.
    Truncated,
    /// `$http/session`: the server gave or changed the session id.
    HttpSession,
    /// `$http/status`: an HTTP answer other than 200/202.
    HttpStatus,
    /// `$http/error`: the server could not be reached, a stream was cut, an answer too big.
    HttpError,
    /// `$http/stream`: an SSE stream opened or closed.
    HttpStream,
    /// `$http/resume`: an SSE stream is resumed with `Last-Event-ID`.
    HttpResume,
    /// `$http/cancelled`: a client of the HTTP front closed its stream mid-answer.
    HttpCancelled,
    /// `$fault`: an injected fault ([`crate::tape::fault`]).
    Fault,
    /// `$policy/decision`: what the policy gate decided on a call ([`crate::tape::policy`]).
    PolicyDecision,
    /// `$commit`: the commitment to a `tools/call` result ([`crate::tape::commit`]).
    Commit,
    /// `$note`: text a person or a hook added to the tape (`mcptape note`, `record
    /// --note`). It belongs to no connection and is never sent to anyone.
    Note,
    /// Any other method (a newer writer's events), kept as written.
    Other(String),
}

/// Every known kind, for reading a method back: [`LifecycleKind::as_str`] is the one
/// spelling of each.
const KNOWN: [LifecycleKind; 15] = [
    LifecycleKind::Start,
    LifecycleKind::Close,
    LifecycleKind::Invalid,
    LifecycleKind::Oversize,
    LifecycleKind::Truncated,
    LifecycleKind::HttpSession,
    LifecycleKind::HttpStatus,
    LifecycleKind::HttpError,
    LifecycleKind::HttpStream,
    LifecycleKind::HttpResume,
    LifecycleKind::HttpCancelled,
    LifecycleKind::Fault,
    LifecycleKind::PolicyDecision,
    LifecycleKind::Commit,
    LifecycleKind::Note,
];

impl LifecycleKind {
    /// The method written on the tape.
    pub fn as_str(&self) -> &str {
        match self {
            LifecycleKind::Start => "$transport/start",
            LifecycleKind::Close => "$transport/close",
            LifecycleKind::Invalid => "$transport/invalid",
            LifecycleKind::Oversize => "$transport/oversize",
            LifecycleKind::Truncated => "$tape/truncated",
            LifecycleKind::HttpSession => "$http/session",
            LifecycleKind::HttpStatus => "$http/status",
            LifecycleKind::HttpError => "$http/error",
            LifecycleKind::HttpStream => "$http/stream",
            LifecycleKind::HttpResume => "$http/resume",
            LifecycleKind::HttpCancelled => "$http/cancelled",
            LifecycleKind::Fault => "$fault",
            LifecycleKind::PolicyDecision => "$policy/decision",
            LifecycleKind::Commit => "$commit",
            LifecycleKind::Note => "$note",
            LifecycleKind::Other(method) => method,
        }
    }

    /// Reads a lifecycle entry's method; an unknown one is [`LifecycleKind::Other`].
    pub fn parse(method: &str) -> LifecycleKind {
        KNOWN
            .into_iter()
            .find(|k| k.as_str() == method)
            .unwrap_or_else(|| LifecycleKind::Other(method.to_owned()))
    }

    /// The kind of a lifecycle entry; `None` for a message (or a lifecycle entry with no
    /// `method`).
    pub fn of(entry: &Entry) -> Option<LifecycleKind> {
        (entry.meta.dir == Direction::Lifecycle)
            .then(|| entry.message.method().map(LifecycleKind::parse))
            .flatten()
    }

    /// The kind read from a lifecycle entry's raw line (valid JSON, checked by the
    /// caller), without parsing the rest of it: for the streaming readers.
    pub fn of_line(line: &[u8]) -> Option<LifecycleKind> {
        let text = std::str::from_utf8(line).ok()?;
        let raw = crate::message::raw_member(text, &["method"])?;
        let method: String = serde_json::from_str(raw).ok()?;
        Some(LifecycleKind::parse(&method))
    }

    /// A short name for people: `start`, `close`, `invalid`, `oversize` for the
    /// `$transport/…` events, the whole method for the others.
    pub fn label(&self) -> &str {
        let method = self.as_str();
        method.strip_prefix("$transport/").unwrap_or(method)
    }
}

impl std::fmt::Display for LifecycleKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One lifecycle entry, typed: what each known `$…` event says. Written and read in one
/// place, [`crate::tape::format`] ([`Lifecycle::params`], [`Lifecycle::read`]); a known
/// event whose params do not have its shape (a hand-edited or newer tape) reads as
/// [`Lifecycle::Other`], kept as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lifecycle {
    /// `$transport/start`: a connection opens.
    Start(Start),
    /// `$transport/close`: the connection ended, for this reason, with this status.
    Close(Close),
    /// `$transport/invalid`: a line that was not a JSON-RPC message, its text kept.
    Invalid(Invalid),
    /// `$tape/truncated`: the tape reached its size limit; nothing after it was recorded.
    Truncated(Truncated),
    /// `$transport/oversize`: a message too long to record; the tape lost it.
    Oversize(Oversize),
    /// `$http/session`: the server gave or changed the session id.
    HttpSession {
        /// The `Mcp-Session-Id`.
        session_id: String,
    },
    /// `$http/status`: an HTTP answer other than 200/202.
    HttpStatus {
        /// The status code.
        status: u16,
        /// The answer's body, as text.
        body: String,
    },
    /// `$http/error`: the server could not be reached, a stream was cut, an answer too big.
    HttpError {
        /// The server's URL.
        url: String,
        /// What went wrong, for people.
        error: String,
    },
    /// `$http/stream`: an SSE stream opened or closed.
    HttpStream(StreamState),
    /// `$http/resume`: an SSE stream is resumed with `Last-Event-ID`.
    HttpResume {
        /// The id of the last event received.
        last_event_id: String,
    },
    /// `$http/cancelled`: a client of the HTTP front closed its stream mid-answer.
    HttpCancelled {
        /// Why, for people.
        reason: String,
        /// The id of the request whose stream was closed (raw JSON), when known: the
        /// stateless revision's cancel of that request, which replay expects the live
        /// client to make too.
        request_id: Option<String>,
    },
    /// `$fault`: an injected fault, what it hit and what it replaced.
    Fault(crate::tape::fault::FaultEntry),
    /// `$policy/decision`: what the policy gate decided on a call, and what became of it.
    Policy(crate::tape::policy::PolicyEntry),
    /// `$commit`: the commitment to a `tools/call` result.
    Commit(crate::tape::commit::CommitEntry),
    /// `$note`: a person's or a hook's text, shown as a heading.
    Note(Note),
    /// Any other event (a newer writer's events), or a known one of another shape, kept.
    Other(LifecycleKind),
}

impl Lifecycle {
    /// The typed event of a lifecycle entry; `None` for a message.
    pub fn of(entry: &Entry) -> Option<Lifecycle> {
        let kind = LifecycleKind::of(entry)?;
        Some(Lifecycle::read(kind, &entry.message.value()["params"]))
    }
}

/// What a `$transport/start` entry says: the server's command (and pid) or URL. Every
/// member is optional: mcporter's tapes and hand-written ones may give none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Start {
    /// The server's command line (credential flags redacted by the tap).
    pub command: Option<Vec<String>>,
    /// The server process's id.
    pub pid: Option<u32>,
    /// The remote server's URL.
    pub url: Option<String>,
    /// True when the HTTP front recorded it (`"front": "http"`).
    pub front: bool,
    /// True when the tape was recorded without redaction (`"redaction": "off"`).
    pub redaction_off: bool,
}

/// What a `$note` entry says: its text (its time is the entry's `_meta.ts`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// The note, as written (control characters escaped only where it is printed).
    pub text: String,
}

/// What a `$transport/invalid` entry says: a line that was not a JSON-RPC message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    /// The side that sent it; `None` when the entry names neither.
    pub dir: Option<Direction>,
    /// Its text (invalid UTF-8 replaced).
    pub text: String,
}

/// What a `$tape/truncated` entry says: the size limit the tape reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Truncated {
    /// `record --max-bytes`, when the entry gives it.
    pub max_bytes: Option<u64>,
}

/// An SSE stream's state change (`$http/stream`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamState {
    /// `"open"`.
    Open,
    /// `"closed"`.
    Closed,
}

impl StreamState {
    /// The word written on the tape.
    pub fn as_str(self) -> &'static str {
        match self {
            StreamState::Open => "open",
            StreamState::Closed => "closed",
        }
    }
}

/// What a `$transport/oversize` entry says: which way the lost message went, and its size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Oversize {
    /// `send` (a client message) or `recv` (a server message); `None` when the entry
    /// names neither (a hand-edited tape): then either side may have lost it.
    pub dir: Option<Direction>,
    /// The line's length without `\n`, when the entry gives it.
    pub bytes: Option<u64>,
    /// The line's first bytes (invalid UTF-8 replaced), when the entry gives them.
    pub prefix: Option<String>,
}

impl Oversize {
    /// True when the lost message may have been the client's.
    pub fn by_client(&self) -> bool {
        self.dir != Some(Direction::Recv)
    }

    /// True when the lost message may have been the server's.
    pub fn by_server(&self) -> bool {
        self.dir != Some(Direction::Send)
    }

    /// Its size for people: `5012 bytes`, or `its size unknown`.
    pub fn size(&self) -> String {
        match self.bytes {
            Some(n) => format!("{n} bytes"),
            None => "its size unknown".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_reads_back_as_itself_and_unknown_ones_are_kept() {
        for kind in KNOWN {
            assert_eq!(LifecycleKind::parse(kind.as_str()), kind);
        }
        for method in ["$notes", "$transport/Start", "$http/new", ""] {
            let kind = LifecycleKind::parse(method);
            assert_eq!(kind, LifecycleKind::Other(method.to_owned()));
            assert_eq!(kind.as_str(), method, "written back unchanged");
        }
        assert_eq!(LifecycleKind::Start.label(), "start");
        assert_eq!(LifecycleKind::Truncated.label(), "$tape/truncated");
    }

    #[test]
    fn the_streaming_reader_and_the_entry_reader_agree() {
        let line = |method: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"{method}","params":{{}},"_meta":{{"dir":"lifecycle","server":"s"}}}}"#
            )
        };
        for method in ["$transport/close", "$tape/truncated", "$note"] {
            let text = line(method);
            let tape = crate::tape::Tape::parse(std::path::Path::new("t.ndjson"), text.as_bytes())
                .expect("a valid line");
            let entry = &tape.entries[0];
            assert_eq!(
                LifecycleKind::of_line(text.as_bytes()),
                LifecycleKind::of(entry),
                "{method}"
            );
            assert_eq!(
                LifecycleKind::of(entry).map(|k| k.as_str().to_owned()),
                Some(method.to_owned())
            );
        }
    }
}
