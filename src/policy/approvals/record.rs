//! What the desk's files hold: a pending call (`<id>.json`) and its decision
//! (`<id>.decision`), each one JSON object, named by an id of
//! [`crate::ids::approval_id`].

use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Bytes of a call's arguments kept in its pending file, as JSON text; longer arguments
/// are kept as the start of that text ([`Pending::arguments_bytes`] says how long).
pub const ARGUMENTS_SHOWN_BYTES: usize = 64 * 1024;
/// The extension of a pending call's file.
pub const PENDING_EXT: &str = "json";
/// The extension of a decision's file.
pub const DECISION_EXT: &str = "decision";

/// A call waiting on the desk: what `mcptape approvals` shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pending {
    /// Its id.
    pub id: String,
    /// The server's name.
    pub server: String,
    /// The method (`tools/call`, or another a rule names).
    pub method: String,
    /// The tool, for a `tools/call`.
    #[serde(default)]
    pub tool: Option<String>,
    /// The arguments (redacted by the holder); a string holding the start of their JSON
    /// text when they are longer than [`ARGUMENTS_SHOWN_BYTES`].
    #[serde(default)]
    pub arguments: Value,
    /// The length of the arguments' JSON text, when only its start is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments_bytes: Option<usize>,
    /// The ids of the rules that said `ask`.
    #[serde(default)]
    pub rules: Vec<String>,
    /// The holder's process id: a call whose holder is gone is stale.
    pub pid: u32,
    /// When it was put on the desk (RFC 3339 UTC, milliseconds).
    pub since: String,
    /// When it is refused unless decided before (once the holder waits).
    #[serde(default)]
    pub deadline: Option<String>,
}

impl Pending {
    /// How long it has waited, at `now`.
    pub fn waited(&self, now: SystemTime) -> Duration {
        parse_time(&self.since)
            .and_then(|since| now.duration_since(since).ok())
            .unwrap_or_default()
    }

    /// How long it has left, at `now`: None without a deadline.
    pub fn left(&self, now: SystemTime) -> Option<Duration> {
        let deadline = parse_time(self.deadline.as_deref()?)?;
        Some(deadline.duration_since(now).unwrap_or_default())
    }

    /// The tool, or the method when it is not a `tools/call`.
    pub fn what(&self) -> &str {
        self.tool.as_deref().unwrap_or(&self.method)
    }
}

/// The arguments as a pending file keeps them: whole, or the start of their JSON text.
pub fn shown_arguments(arguments: Value) -> (Value, Option<usize>) {
    let text = arguments.to_string();
    if text.len() <= ARGUMENTS_SHOWN_BYTES {
        return (arguments, None);
    }
    let mut end = ARGUMENTS_SHOWN_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (Value::String(text[..end].to_owned()), Some(text.len()))
}

/// What became of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// `mcptape approve`.
    Approved,
    /// `mcptape deny`.
    Denied,
    /// Nobody decided in time (the holder says so).
    TimedOut,
    /// The holder withdrew it (the client cancelled, the connection ended).
    Withdrawn,
}

/// A call's decision: `<id>.decision`. The first one written wins.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    /// The call's id.
    pub id: String,
    /// What became of it.
    pub decision: Verdict,
    /// Who decided (`user@host`); None for the holder's own.
    #[serde(default)]
    pub by: Option<String>,
    /// `deny --reason`.
    #[serde(default)]
    pub reason: Option<String>,
    /// When (RFC 3339 UTC, milliseconds).
    pub at: String,
}

impl Decision {
    /// A decision taken now.
    pub fn now(id: &str, decision: Verdict, by: Option<String>, reason: Option<String>) -> Self {
        Decision {
            id: id.to_owned(),
            decision,
            by,
            reason,
            at: crate::tape::format::timestamp(SystemTime::now()),
        }
    }

    /// What became of the call, for a person: "approved by ann@box", "it timed out".
    pub fn said(&self) -> String {
        let by = self
            .by
            .as_deref()
            .map(|b| format!(" by {b}"))
            .unwrap_or_default();
        match self.decision {
            Verdict::Approved => format!("it was approved{by}"),
            Verdict::Denied => format!("it was denied{by}"),
            Verdict::TimedOut => "it timed out".to_owned(),
            Verdict::Withdrawn => "it was withdrawn (its client cancelled or went away)".to_owned(),
        }
    }
}

/// Who is deciding: `user@host`.
pub fn who() -> String {
    let uid = nix::unistd::geteuid();
    let user = nix::unistd::User::from_uid(uid)
        .ok()
        .flatten()
        .map(|u| u.name)
        .or_else(|| std::env::var("USER").ok().filter(|u| !u.is_empty()))
        .unwrap_or_else(|| uid.to_string());
    let host = nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_owned());
    format!("{user}@{host}")
}

/// A time written by [`crate::tape::format::timestamp`].
pub fn parse_time(text: &str) -> Option<SystemTime> {
    humantime::parse_rfc3339(text).ok()
}
