//! The commit layer: nearest the server in the stack (below the policy gate and the
//! faults), so that what it hashes is what the server answered, before any layer changed
//! it. It remembers the id (and tool) of each `tools/call` request going up; for the
//! server's response with a `result` to one of them it computes the commitment of the
//! `result` member's text ([`crate::commit::jcs`]) and tells a `$commit` event up
//! ([`crate::layer::Layer::events`]), which the tap writes just before the answer. It never
//! changes, holds or drops a message.
//!
//! It must see a message before it is forwarded ([`Layer::reads_first`]): the byte relay
//! shows lines to the layers only afterwards, too late to write the `$commit` first.

use std::collections::HashMap;

use crate::commit::Commitments;
use crate::commit::jcs;
use crate::layer::{Layer, Step};
use crate::message::{Kind, Message};
use crate::tape::commit::{ALG, Body, CommitEntry, Digest};
use crate::tape::lifecycle::LifecycleKind;
use crate::upstream::Event;

/// A request id's JSON text made comparable — its canonical form, so `1` and `1.0`,
/// `"a"` and `"\u0061"` are alike — as the `$commit` entry writes it.
pub fn id_key(id: &str) -> String {
    jcs::canonical_text(id)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .unwrap_or_else(|| id.to_owned())
}

/// The member of a `$commit` event (never written: the tap takes it out) carrying the
/// result's text as the server sent it, so that the tap can tell whether it holds a
/// secret ([`crate::record::commits`]) even when a fault keeps the answer from the tape.
pub const RESULT_PARAM: &str = "_result";

/// The methods whose results are committed to: `tools/call`, and `tasks/result` (a
/// task-augmented `tools/call` answers with a task; the tool's real result comes there).
pub const COMMITTED: [&str; 2] = ["tools/call", "tasks/result"];

/// The commit layer of one connection.
pub struct CommitLayer {
    settings: Commitments,
    /// The `tools/call` requests not answered yet: id (made comparable) → tool name.
    calls: HashMap<String, Option<String>>,
    /// `$commit` events not yet told.
    told: Vec<Event>,
}

impl CommitLayer {
    /// A layer committing as `settings` say.
    pub fn new(settings: Commitments) -> CommitLayer {
        CommitLayer {
            settings,
            calls: HashMap::new(),
            told: Vec::new(),
        }
    }

    /// What it commits as.
    pub fn settings(&self) -> Commitments {
        self.settings
    }

    /// The `$commit` entry for a result's text, answering request `id` to `tool`.
    pub fn entry(&self, id: &str, tool: Option<String>, result: &str) -> CommitEntry {
        CommitEntry {
            id: Some(id_key(id)),
            tool,
            alg: ALG.to_owned(),
            digest: match jcs::commitment(result) {
                Ok(sha256) => Digest::Sha256(sha256),
                Err(refusal) => Digest::None(refusal.to_string()),
            },
            body: if self.settings.drop_bodies {
                Body::Dropped
            } else {
                Body::Kept
            },
        }
    }
}

/// The `params.name` of a `tools/call` request.
fn tool_name(msg: &Message) -> Option<String> {
    let raw = crate::message::raw_member(msg.text(), &["params", "name"])?;
    serde_json::from_str::<String>(raw).ok()
}

impl Layer for CommitLayer {
    fn reads_first(&self) -> bool {
        true
    }

    fn client(&mut self, msg: Message) -> Step {
        match msg.kind() {
            Kind::Request if msg.method().is_some_and(|m| COMMITTED.contains(&m)) => {
                if let Some(id) = msg.id() {
                    self.calls.insert(id_key(id), tool_name(&msg));
                }
            }
            // A cancelled call may never be answered: it is not waited for.
            Kind::Notification if msg.method() == Some("notifications/cancelled") => {
                if let Some(id) = crate::message::raw_member(msg.text(), &["params", "requestId"]) {
                    self.calls.remove(&id_key(id));
                }
            }
            _ => {}
        }
        Step::Pass(msg)
    }

    fn server(&mut self, msg: Message) -> Step {
        let kind = msg.kind();
        if !matches!(kind, Kind::Response | Kind::Error) {
            return Step::Pass(msg);
        }
        let Some(id) = msg.id() else {
            return Step::Pass(msg);
        };
        let Some(tool) = self.calls.remove(&id_key(id)) else {
            return Step::Pass(msg);
        };
        if kind == Kind::Response
            && let Some(result) = crate::message::raw_member(msg.text(), &["result"])
        {
            let mut params = self.entry(id, tool, result).params();
            params[RESULT_PARAM] = serde_json::Value::String(result.to_owned());
            self.told.push((LifecycleKind::Commit, params));
        }
        Step::Pass(msg)
    }

    fn events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.told)
    }
}

#[cfg(test)]
mod tests;
