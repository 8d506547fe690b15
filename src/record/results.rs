//! What the tape keeps of a server's messages when result bodies are dropped
//! (`--redact-results`). It fails closed: the `result` of a server message is kept only
//! when the tap positively knows that it answers, by the very id the client sent (the
//! same JSON text), one pending request whose method is in [`KEPT`] — or that a layer
//! made the answer itself (the policy gate's refusal or dry run, a fault's `error` or
//! `tool-error`), so nothing of the server's is in it. Every other `result` loses its
//! body ([`crate::commit::body::withheld`], the marker saying why):
//!
//! - an answer the tap cannot attribute: an id in another spelling (`"1"` for `1`, `1.0`),
//!   an id no pending request has (a cancelled call's late answer), an id two pending
//!   requests share;
//! - a message whose members cannot be read, or that names one twice (which member a
//!   reader takes is up to it): it is written as a bare answer;
//! - every answer in a server batch (a JSON array line);
//! - the answers to `tools/call` and `tasks/result` (the tool's result, committed to).
//!
//! Beyond results: a server line that is not JSON-RPC keeps no text (`$transport/invalid`,
//! which a fault's `malformed` answer becomes), an over-long server line keeps no prefix
//! (`$transport/oversize`), and a `$fault` keeps no `replaced` result. Kept as they are:
//! errors (`error.message`, `error.data`), and the server's requests and notifications
//! (progress, log messages, list changes, sampling and elicitation requests).

use std::collections::{HashMap, HashSet};

use serde_json::{Value, json};

use crate::commit::body;
use crate::commit::layer::id_key;
use crate::message::{Kind, Message};

/// The methods whose answers the tape keeps: what a server says about itself and its
/// catalog, and replies that carry no tool output. `tools/call` and `tasks/result` are
/// never kept; a method not listed (one a later MCP adds) is not kept either.
pub const KEPT: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "tasks/get",
    "tasks/list",
    "tasks/cancel",
];

/// Why a result lost its body, as its marker says.
pub const UNATTRIBUTED: &str =
    "--redact-results: the tap could not tell which request this answers";
/// Why a result of a method not in [`KEPT`] lost its body.
pub const NOT_KEPT: &str = "--redact-results: the answers to this method are not kept";
/// Why a result in a server batch lost its body.
pub const IN_BATCH: &str = "--redact-results: an answer in a server batch is not kept";
/// Why a message that names a member twice lost its result.
pub const UNREADABLE: &str = "--redact-results: the message names a member twice";

/// The client's requests still waiting for their answers, as the tape writer saw them.
#[derive(Default)]
pub(super) struct Requests {
    /// Id exactly as the client wrote it → method; `None` when two pending requests
    /// share the id.
    pending: HashMap<String, Option<String>>,
    /// Ids (made comparable) whose next answer a layer made itself.
    own: HashSet<String>,
}

impl Requests {
    /// A client message: a request waits for its answer, a cancel withdraws one. The id
    /// (made comparable) of the request it names, when it names one.
    pub(super) fn sent(&mut self, msg: &Message, track: bool) -> Option<String> {
        match msg.kind() {
            Kind::Request => {
                let id = msg.id()?.trim();
                let key = id_key(id);
                self.own.remove(&key);
                if track {
                    let method = msg.method().map(str::to_owned);
                    self.pending
                        .entry(id.to_owned())
                        .and_modify(|m| *m = None)
                        .or_insert(method);
                }
                Some(key)
            }
            Kind::Notification if msg.method() == Some("notifications/cancelled") => {
                let id = crate::message::raw_member(msg.text(), &["params", "requestId"])?;
                self.pending.remove(id.trim());
                Some(id_key(id))
            }
            _ => None,
        }
    }

    /// A layer will answer request `id` (a JSON value) itself.
    pub(super) fn own_answer(&mut self, id: &Value) {
        self.own.insert(id_key(&id.to_string()));
    }

    /// Why the tape drops the `result` of server message `text` (not in a batch), or
    /// `None` when it keeps it (or there is none to drop).
    pub(super) fn drops(&mut self, msg: &Message) -> Option<&'static str> {
        let Ok(members) = crate::message::members(msg.text()) else {
            return Some(UNREADABLE);
        };
        if !members.iter().any(|(k, _)| k == "result") {
            return None;
        }
        let mut names = HashSet::new();
        if !members.iter().all(|(k, _)| names.insert(k.as_str())) {
            return Some(UNREADABLE);
        }
        if msg.kind() != Kind::Response {
            return Some(UNATTRIBUTED);
        }
        let id = msg.id()?.trim();
        let own = self.own.remove(&id_key(id));
        match self.pending.remove(id) {
            _ if own => None,
            Some(Some(method)) if KEPT.contains(&method.as_str()) => None,
            Some(Some(_)) => Some(NOT_KEPT),
            Some(None) | None => Some(UNATTRIBUTED),
        }
    }
}

/// `text` with its `result`'s body dropped for `reason`.
pub(super) fn without_result(text: &str, reason: &str) -> String {
    let result = crate::message::raw_member(text, &["result"]).unwrap_or("{}");
    let kept = body::withheld(result, reason);
    let members = crate::message::members(text).unwrap_or_default();
    let mut names = HashSet::new();
    let unique = members.iter().all(|(k, _)| names.insert(k.as_str()));
    match unique
        .then(|| crate::message::replace_member(text, &["result"], &kept))
        .flatten()
    {
        Some(text) => text,
        None => bare(text, &kept),
    }
}

/// A bare answer with `result` (raw JSON) in place of `text`, whose members cannot be
/// trusted: its id when it names exactly one, else `null`.
pub fn bare(text: &str, result: &str) -> String {
    let members = crate::message::members(text).unwrap_or_default();
    let ids: Vec<&str> = members
        .iter()
        .filter(|(k, _)| k == "id")
        .map(|(_, v)| v.get())
        .collect();
    let id = match ids[..] {
        [id] => id,
        _ => "null",
    };
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)
}

/// A `$fault`'s params without the body of the answer it replaced.
pub(super) fn fault(mut params: Value) -> Value {
    let Some(result) = params.get("replaced").and_then(|r| r.get("result")) else {
        return params;
    };
    let kept = body::withheld(
        &result.to_string(),
        "--redact-results: the replaced answer's body is not kept",
    );
    params["replaced"]["result"] = serde_json::from_str(&kept).unwrap_or_else(|_| json!({}));
    params
}

/// A server-side `$transport/invalid` or `$transport/oversize` entry's params without the
/// line's text.
pub(super) fn without_text(mut params: Value, member: &str) -> Value {
    if params["dir"].as_str() == Some("send") {
        return params;
    }
    if let Some(obj) = params.as_object_mut()
        && obj.contains_key(member)
    {
        if member == "text" {
            obj.insert(member.into(), json!(""));
        } else {
            obj.remove(member);
        }
        obj.insert(
            "withheld".into(),
            json!("--redact-results: a server line that is not a message keeps no text"),
        );
    }
    params
}
