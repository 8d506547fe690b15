//! What replay gathers once per server ([`ServerFacts`]), and the one-line summaries and
//! error lines it answers and reports with.

use std::collections::HashSet;

use serde_json::json;

use super::SUMMARY_CHARS;
use crate::message::{self, Kind, Message};
use crate::tape::{Connection, Direction, Tape};

/// What the tape says about a server across all its connections, gathered once.
#[derive(Debug, Clone, Default)]
pub struct ServerFacts {
    /// Protocol versions the server answered anywhere in the tape.
    pub(super) versions: HashSet<String>,
    /// Its recorded answer to a `server/discover` probe, if any.
    pub(super) discover_answer: Option<Message>,
}

impl ServerFacts {
    /// Gathers the facts of the server of `conns` (connections of one server).
    pub fn of(tape: &Tape, conns: &[Connection]) -> ServerFacts {
        let mut versions = HashSet::new();
        let mut discover_answer = None;
        for c in conns {
            let mut probes: HashSet<&str> = HashSet::new();
            for &i in &c.entries {
                let e = &tape.entries[i];
                let m = &e.message;
                if e.meta.dir == Direction::Send && m.method() == Some("server/discover") {
                    probes.insert(m.id().unwrap_or_default());
                }
                if e.meta.dir != Direction::Recv
                    || !matches!(m.kind(), Kind::Response | Kind::Error)
                {
                    continue;
                }
                if let Some(v) = message::raw_member(m.text(), &["result", "protocolVersion"]) {
                    versions.insert(v.to_owned());
                }
                if discover_answer.is_none() && probes.contains(m.id().unwrap_or_default()) {
                    discover_answer = Some(m.clone());
                }
            }
        }
        ServerFacts {
            versions,
            discover_answer,
        }
    }
}

/// A short one-line account of a message.
pub fn summary(msg: &Message) -> String {
    let v = msg.value();
    let id = msg.id().map(|i| format!(" #{i}")).unwrap_or_default();
    let text = match msg.kind() {
        Kind::Request | Kind::Notification => {
            let method = msg.method().unwrap_or("?");
            let params = &v["params"];
            if method == "tools/call" {
                format!(
                    "{method}{id} {} {}",
                    params["name"].as_str().unwrap_or("?"),
                    params
                        .get("arguments")
                        .map(ToString::to_string)
                        .unwrap_or_default()
                )
            } else {
                match params {
                    serde_json::Value::Null => format!("{method}{id}"),
                    p => format!("{method}{id} {p}"),
                }
            }
        }
        Kind::Response => format!("response{id} {}", v["result"]),
        Kind::Error => format!("error{id} {}", v["error"]),
        Kind::Other => msg.text().to_owned(),
    };
    if text.chars().count() > SUMMARY_CHARS {
        let mut cut: String = text.chars().take(SUMMARY_CHARS - 1).collect();
        cut.push('…');
        cut
    } else {
        text
    }
}

/// An error response to `id` (raw JSON), as a line.
///
/// The text is written with C1 and bidi controls as `\u` escapes (the same JSON): a
/// client may well print a divergence for a person, and it quotes the tape.
pub fn error_line(id: &str, code: i64, text: &str) -> Vec<u8> {
    let msg = crate::term::json_compact(&json!({"code": code, "message": text}));
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{msg}}}\n").into_bytes()
}
