//! Classification: a recorded answer against a live one, and the result of one recorded
//! call ([`Played`]).
//!
//! `result._meta` is left out by the caller unless `--match-meta`; here JSON carried in
//! strings is parsed in place, the ignore globs are removed from both sides, and a
//! recorded `"[REDACTED]"` (or `[REDACTED]` span) matches anything. A JSON-RPC error and
//! a tool result with `isError: true` are both errors; two errors compare by code, then by
//! message.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::matcher::{self, Difference, Glob};

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
    /// Cancelled by the client at its recorded point: played, its answer not compared.
    Cancelled,
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
            Class::Cancelled => "cancelled",
        }
    }

    /// True for the classes that fail a verify run.
    pub fn is_difference(self) -> bool {
        matches!(self, Class::Changed | Class::NewError | Class::GoneError)
    }
}

/// One recorded request, played (or not) against the live server.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Played {
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
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub differences: Vec<Difference>,
    /// The tape line of the recorded answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer_line: Option<usize>,
    /// The live answer, exactly as the server wrote it (for `--update`).
    #[serde(skip)]
    pub live: Option<String>,
}

impl Played {
    /// `tools/call echo` or `prompts/get`, for reports.
    pub fn title(&self) -> String {
        match &self.tool {
            Some(t) => format!("{} {t}", self.method),
            None => self.method.clone(),
        }
    }
}

/// True when an answer is an error: a JSON-RPC error or a tool's `isError: true`.
pub(super) fn is_error(v: &Value) -> bool {
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
