//! What a `$transport/close` entry says, typed: why the connection ended
//! ([`CloseReason`]) and with what exit status ([`CloseStatus`]).
//!
//! This is the one reader ([`Close::from_params`]) and the one writer ([`Close::params`])
//! of a close entry's `params`: every recorder (a child server, an HTTP remote, the `call`
//! client, the HTTP front) builds a [`Close`] and writes it through
//! [`crate::record::tap::TapHandle::close`]. Unknown reasons are kept ([`CloseReason::Other`]),
//! never refused, and a close status no process can have (`"exitCode": 256`, `-1`, `1.5`,
//! `"0"`, a signal out of range, both a code and a signal) is [`CloseStatus::Invalid`]: a
//! failure, never a success.

use std::borrow::Cow;
use std::process::ExitStatus;
use std::time::Duration;

use nix::sys::signal::Signal;
use serde_json::{Map, Value, json};

/// The words of [`CloseReason::SessionIdle`] around its limit.
const IDLE_WORDS: (&str, &str) = ("session idle for more than ", " (--session-idle)");

/// Why a connection ended, as the recorder saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CloseReason {
    /// `server exited`: the server ended the connection itself (it exited or crashed).
    ServerExited,
    /// `client closed stdin`: the client hung up (the MCP way to end a stdio session).
    ClientClosedStdin,
    /// `client stopped reading`: the client stopped reading the server's output.
    ClientStoppedReading,
    /// The signal's name (`SIGTERM`): mcptape got it and passed it on or stopped.
    Signal(Signal),
    /// `session ended`: an HTTP session of the front was deleted, refused, or the front
    /// stopped.
    SessionEnded,
    /// `session idle for more than 10m (--session-idle)`: the front ended a session that
    /// had no request for longer than this.
    SessionIdle(Duration),
    /// `client done`: the built-in `call` client finished its calls.
    ClientDone,
    /// `client failed`: the built-in `call` client stopped on an error.
    ClientFailed,
    /// `timeout`: the built-in `call` client got no answer within `--timeout`.
    ClientTimeout,
    /// The server could not be started: written as `error` (not `reason`), this text.
    StartFailed(String),
    /// Any other words (a newer writer's), kept as written.
    Other(String),
    /// `exchange done`: a sessionless (2026-07-28) request of the HTTP front was answered
    /// (or its client went away); the exchange was its own connection.
    ExchangeDone,
    /// `injected disconnect`: a `disconnect` fault ended the connection as if the server
    /// went away ([`crate::upstream::Disconnect`]).
    InjectedDisconnect,
}

/// The reasons written as fixed words, for reading them back.
const FIXED: [CloseReason; 9] = [
    CloseReason::ServerExited,
    CloseReason::ClientClosedStdin,
    CloseReason::ClientStoppedReading,
    CloseReason::SessionEnded,
    CloseReason::ClientDone,
    CloseReason::ClientFailed,
    CloseReason::ClientTimeout,
    CloseReason::ExchangeDone,
    CloseReason::InjectedDisconnect,
];

impl CloseReason {
    /// The words written in `params.reason` (for [`CloseReason::StartFailed`], in
    /// `params.error`).
    pub fn words(&self) -> Cow<'_, str> {
        Cow::Borrowed(match self {
            CloseReason::ServerExited => "server exited",
            CloseReason::ClientClosedStdin => "client closed stdin",
            CloseReason::ClientStoppedReading => "client stopped reading",
            CloseReason::Signal(sig) => sig.as_str(),
            CloseReason::SessionEnded => "session ended",
            CloseReason::SessionIdle(limit) => {
                return Cow::Owned(format!(
                    "{}{}{}",
                    IDLE_WORDS.0,
                    humantime::format_duration(*limit),
                    IDLE_WORDS.1
                ));
            }
            CloseReason::ClientDone => "client done",
            CloseReason::ClientFailed => "client failed",
            CloseReason::ClientTimeout => "timeout",
            CloseReason::StartFailed(error) => error,
            CloseReason::Other(words) => words,
            CloseReason::ExchangeDone => "exchange done",
            CloseReason::InjectedDisconnect => "injected disconnect",
        })
    }

    /// Reads `params.reason`. Words that would not be written back the same are
    /// [`CloseReason::Other`], so reading never changes what a tape says.
    pub fn parse(words: &str) -> CloseReason {
        if let Some(fixed) = FIXED.into_iter().find(|r| r.words() == words) {
            return fixed;
        }
        if let Ok(sig) = words.parse::<Signal>() {
            return CloseReason::Signal(sig);
        }
        let idle = words
            .strip_prefix(IDLE_WORDS.0)
            .and_then(|w| w.strip_suffix(IDLE_WORDS.1))
            .and_then(|limit| humantime::parse_duration(limit).ok())
            .map(CloseReason::SessionIdle)
            .filter(|r| r.words() == words);
        idle.unwrap_or_else(|| CloseReason::Other(words.to_owned()))
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
    /// A status no process can have, as recorded: a failure. Never written.
    Invalid(String),
}

impl CloseStatus {
    /// The status of a process that ended.
    pub fn of(status: ExitStatus) -> CloseStatus {
        use std::os::unix::process::ExitStatusExt;
        match (status.code(), status.signal()) {
            (Some(code), _) => match u8::try_from(code) {
                Ok(c) => CloseStatus::Exited(c),
                Err(_) => CloseStatus::Invalid(format!("exitCode {code}")),
            },
            (None, Some(sig)) => match u8::try_from(sig).ok().filter(|s| (1..=127).contains(s)) {
                Some(s) => CloseStatus::Signaled(s),
                None => CloseStatus::Invalid(format!("signal {sig}")),
            },
            (None, None) => CloseStatus::Unknown,
        }
    }

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

    /// Writes `exitCode`, or `signal` and `signalName` (`unknown` for a number with no
    /// name); nothing for an unknown or invalid status.
    fn write(&self, params: &mut Map<String, Value>) {
        match self {
            CloseStatus::Exited(code) => {
                params.insert("exitCode".into(), json!(code));
            }
            CloseStatus::Signaled(sig) => {
                let name = Signal::try_from(i32::from(*sig))
                    .map(Signal::as_str)
                    .unwrap_or("unknown");
                params.insert("signal".into(), json!(sig));
                params.insert("signalName".into(), json!(name));
            }
            CloseStatus::Unknown | CloseStatus::Invalid(_) => {}
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
    /// `params.reason` (or `params.error` for a failed start), when there is one.
    pub reason: Option<CloseReason>,
    /// `params.exitCode` / `params.signal`.
    pub status: CloseStatus,
}

impl Close {
    /// A close for this reason with this status.
    pub fn new(reason: CloseReason, status: CloseStatus) -> Close {
        Close {
            reason: Some(reason),
            status,
        }
    }

    /// Reads a close entry's `params`.
    pub fn from_params(params: &Value) -> Close {
        let reason = match (params["reason"].as_str(), params["error"].as_str()) {
            (Some(words), _) => Some(CloseReason::parse(words)),
            (None, Some(error)) => Some(CloseReason::StartFailed(error.to_owned())),
            (None, None) => None,
        };
        Close {
            reason,
            status: CloseStatus::from_params(params),
        }
    }

    /// The `params` to write: the status's members, then `reason` (or `error`).
    pub fn params(&self) -> Value {
        let mut params = Map::new();
        self.status.write(&mut params);
        match &self.reason {
            Some(CloseReason::StartFailed(error)) => {
                params.insert("error".into(), json!(error));
            }
            Some(reason) => {
                params.insert("reason".into(), json!(reason.words()));
            }
            None => {}
        }
        Value::Object(params)
    }
}

#[cfg(test)]
mod tests {
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
        assert_eq!(
            CloseReason::parse("SIGTERM"),
            CloseReason::Signal(Signal::SIGTERM)
        );
        assert_eq!(
            CloseReason::parse("session idle for more than 10m (--session-idle)"),
            CloseReason::SessionIdle(Duration::from_secs(600))
        );
        for other in [
            "Server Exited",
            "signal",
            "session idle for more than 600s (--session-idle)",
            "session idle for more than soon (--session-idle)",
        ] {
            assert_eq!(CloseReason::parse(other), CloseReason::Other(other.into()));
        }
        assert_eq!(
            Close::from_params(&json!({"error": "x"})).reason,
            Some(CloseReason::StartFailed("x".into()))
        );
        assert_eq!(Close::from_params(&json!({})).reason, None);
    }

    /// Each writer's close, as the JSON it wrote before there was one writer, and read
    /// back as the same value.
    #[test]
    fn the_writer_writes_what_the_reader_reads() {
        let cases = [
            (
                Close::new(CloseReason::ClientClosedStdin, CloseStatus::Exited(0)),
                r#"{"exitCode":0,"reason":"client closed stdin"}"#,
            ),
            (
                Close::new(CloseReason::ServerExited, CloseStatus::Exited(3)),
                r#"{"exitCode":3,"reason":"server exited"}"#,
            ),
            (
                Close::new(
                    CloseReason::Signal(Signal::SIGTERM),
                    CloseStatus::Signaled(15),
                ),
                r#"{"signal":15,"signalName":"SIGTERM","reason":"SIGTERM"}"#,
            ),
            (
                Close::new(CloseReason::ClientStoppedReading, CloseStatus::Unknown),
                r#"{"reason":"client stopped reading"}"#,
            ),
            (
                Close::new(CloseReason::SessionEnded, CloseStatus::Unknown),
                r#"{"reason":"session ended"}"#,
            ),
            (
                Close::new(
                    CloseReason::SessionIdle(Duration::from_secs(90)),
                    CloseStatus::Unknown,
                ),
                r#"{"reason":"session idle for more than 1m 30s (--session-idle)"}"#,
            ),
            (
                Close::new(CloseReason::ClientDone, CloseStatus::Exited(0)),
                r#"{"exitCode":0,"reason":"client done"}"#,
            ),
            (
                Close::new(CloseReason::ClientFailed, CloseStatus::Unknown),
                r#"{"reason":"client failed"}"#,
            ),
            (
                Close::new(CloseReason::ClientTimeout, CloseStatus::Unknown),
                r#"{"reason":"timeout"}"#,
            ),
            (
                Close::new(
                    CloseReason::StartFailed("cannot start `x`".into()),
                    CloseStatus::Unknown,
                ),
                r#"{"error":"cannot start `x`"}"#,
            ),
            (
                Close::new(
                    CloseReason::Other("a newer word".into()),
                    CloseStatus::Unknown,
                ),
                r#"{"reason":"a newer word"}"#,
            ),
        ];
        for (close, json) in cases {
            let params = close.params();
            assert_eq!(params.to_string(), json);
            assert_eq!(Close::from_params(&params), close, "{json}");
        }
    }

    #[test]
    fn a_process_status_is_written_as_before() {
        use std::os::unix::process::ExitStatusExt;
        let exited = ExitStatus::from_raw(3 << 8);
        assert_eq!(CloseStatus::of(exited), CloseStatus::Exited(3));
        let killed = ExitStatus::from_raw(9);
        assert_eq!(CloseStatus::of(killed), CloseStatus::Signaled(9));
        assert_eq!(
            Close::new(CloseReason::ServerExited, CloseStatus::of(killed))
                .params()
                .to_string(),
            r#"{"signal":9,"signalName":"SIGKILL","reason":"server exited"}"#
        );
    }
}
