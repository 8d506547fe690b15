//! Lifecycle entries read as typed values: what a `$…` notification on a tape says.
//!
//! Writers put these on tapes (`$transport/start`, `$transport/close`, `$tape/truncated`,
//! …); readers do not compare their methods, close reasons or exit statuses as strings:
//! they read a [`Lifecycle`] here, once. Unknown events and reasons are kept, never
//! refused (a newer mcptape or mcporter may write more), and a close status no process
//! can have (`"exitCode": 256`, `-1`, `1.5`, `"0"`, a signal out of range, both a code and
//! a signal) is [`CloseStatus::Invalid`]: a failure, never a success.

use serde_json::Value;

use crate::tape::{Direction, Entry};

/// The method of the entry that opens a connection.
pub const START: &str = "$transport/start";
/// The method of the entry that ends a connection.
pub const CLOSE: &str = "$transport/close";
/// The method of the entry written when a tape reached its size limit.
pub const TRUNCATED: &str = "$tape/truncated";

/// One lifecycle entry, typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lifecycle {
    /// `$transport/start`: a connection opens.
    Start,
    /// `$transport/close`: the connection ended, for this reason, with this status.
    Close(Close),
    /// `$tape/truncated`: the tape reached its size limit; nothing after it was recorded.
    Truncated,
    /// Any other `$…` event (`$transport/invalid`, `$note`, `$http/…`).
    Other,
}

impl Lifecycle {
    /// The typed event of a lifecycle entry; `None` for a message.
    pub fn of(entry: &Entry) -> Option<Lifecycle> {
        if entry.meta.dir != Direction::Lifecycle {
            return None;
        }
        Some(match entry.message.method() {
            Some(START) => Lifecycle::Start,
            Some(CLOSE) => Lifecycle::Close(Close::from_params(&entry.message.value()["params"])),
            Some(TRUNCATED) => Lifecycle::Truncated,
            _ => Lifecycle::Other,
        })
    }
}

/// Why a connection ended, as the recorder saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CloseReason {
    /// The server ended the connection itself (it exited or crashed).
    ServerExited,
    /// The client closed the server's stdin (the MCP way to end a stdio session).
    ClientClosedStdin,
    /// The client stopped reading the server's output.
    ClientStoppedReading,
    /// An HTTP session ended.
    SessionEnded,
    /// Anything else (a signal's name, `call`'s `client done`, a newer writer's words).
    Other(String),
}

impl CloseReason {
    /// The words written in `params.reason`.
    pub fn as_str(&self) -> &str {
        match self {
            CloseReason::ServerExited => "server exited",
            CloseReason::ClientClosedStdin => "client closed stdin",
            CloseReason::ClientStoppedReading => "client stopped reading",
            CloseReason::SessionEnded => "session ended",
            CloseReason::Other(words) => words,
        }
    }

    /// Reads `params.reason`.
    pub fn parse(words: &str) -> CloseReason {
        [
            CloseReason::ServerExited,
            CloseReason::ClientClosedStdin,
            CloseReason::ClientStoppedReading,
            CloseReason::SessionEnded,
        ]
        .into_iter()
        .find(|r| r.as_str() == words)
        .unwrap_or_else(|| CloseReason::Other(words.to_owned()))
    }
}

/// The exit status a close entry records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CloseStatus {
    /// None recorded (an HTTP session, mcporter's tapes).
    Unknown,
    /// The process exited with this code.
    Exited(u8),
    /// The process was killed by this signal (1–127).
    Signaled(u8),
    /// A status no process can have, as recorded: a failure.
    Invalid(String),
}

impl CloseStatus {
    /// Reads `params.exitCode` and `params.signal` (a `null` counts as absent).
    pub fn from_params(params: &Value) -> CloseStatus {
        let get = |key| params.get(key).filter(|v| !v.is_null());
        match (get("exitCode"), get("signal")) {
            (None, None) => CloseStatus::Unknown,
            (Some(code), None) => match code.as_u64().and_then(|c| u8::try_from(c).ok()) {
                Some(c) => CloseStatus::Exited(c),
                None => CloseStatus::Invalid(format!("exitCode {code}")),
            },
            (None, Some(sig)) => match sig.as_u64().filter(|s| (1..=127).contains(s)) {
                Some(s) => CloseStatus::Signaled(s as u8),
                None => CloseStatus::Invalid(format!("signal {sig}")),
            },
            (Some(code), Some(sig)) => {
                CloseStatus::Invalid(format!("both exitCode {code} and signal {sig}"))
            }
        }
    }

    /// The exit status a wrapper passes on: the code, 128+N for signal N, and 1 (a
    /// failure) when the status is unknown or invalid.
    pub fn exit_code(&self) -> u8 {
        match self {
            CloseStatus::Exited(code) => *code,
            CloseStatus::Signaled(sig) => 128 + sig,
            CloseStatus::Unknown | CloseStatus::Invalid(_) => 1,
        }
    }
}

/// The params of a `$transport/close` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Close {
    /// `params.reason`, when there is one (a failed start records `error` instead).
    pub reason: Option<CloseReason>,
    /// `params.exitCode` / `params.signal`.
    pub status: CloseStatus,
}

impl Close {
    /// Reads a close entry's `params`.
    pub fn from_params(params: &Value) -> Close {
        Close {
            reason: params["reason"].as_str().map(CloseReason::parse),
            status: CloseStatus::from_params(params),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn statuses_are_typed_and_out_of_range_ones_fail() {
        let status = |p: Value| CloseStatus::from_params(&p);
        assert_eq!(status(json!({"exitCode": 0})), CloseStatus::Exited(0));
        assert_eq!(status(json!({"exitCode": 255})).exit_code(), 255);
        assert_eq!(status(json!({"signal": 9})).exit_code(), 137);
        assert_eq!(status(json!({"exitCode": null})), CloseStatus::Unknown);
        for bad in [
            json!({"exitCode": 256}),
            json!({"exitCode": -1}),
            json!({"exitCode": 1.5}),
            json!({"exitCode": "0"}),
            json!({"signal": 0}),
            json!({"signal": 128}),
            json!({"exitCode": 0, "signal": 9}),
        ] {
            let s = status(bad.clone());
            assert!(matches!(s, CloseStatus::Invalid(_)), "{bad}: {s:?}");
            assert_eq!(s.exit_code(), 1, "{bad}");
        }
    }

    #[test]
    fn reasons_are_read_once() {
        let close = Close::from_params(&json!({"exitCode": 3, "reason": "server exited"}));
        assert_eq!(close.reason, Some(CloseReason::ServerExited));
        assert_eq!(close.status, CloseStatus::Exited(3));
        for r in ["client closed stdin", "session ended", "SIGTERM"] {
            assert_eq!(CloseReason::parse(r).as_str(), r);
        }
        assert_eq!(
            CloseReason::parse("Server Exited"),
            CloseReason::Other("Server Exited".into())
        );
        assert_eq!(Close::from_params(&json!({"error": "x"})).reason, None);
    }
}
