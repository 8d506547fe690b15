//! A JSON-RPC batch (an array: MCP 2025-03-26 allowed them, later revisions removed
//! them) through the gate: sent whole when every gated member in it is allowed; else
//! none of it is sent, each request in it is answered here (the gate's answer for the
//! gated ones, a [`REFUSED_CODE`] error for the others), and no member is held for a
//! person (an `ask` in a batch is refused: there is no way to send the rest meanwhile).
//! A gated member the gate cannot read as a request ([`crate::policy::read`]: an id
//! that is not a string or an integer) keeps the whole batch back, and is answered with
//! its `-32600` error.

use serde_json::{Value, json};

use super::unread::{entry as unread_entry, unreadable};
use super::{Facts, PolicyLayer, id_key};
use crate::layer::Step;
use crate::message::Message;
use crate::policy::answer::REFUSED_CODE;
use crate::policy::read::{self, Read};
use crate::tape::policy::{Decision, Resolution};

impl PolicyLayer {
    /// A JSON-RPC batch: whole when every gated member is allowed, else answered here.
    pub(super) fn batch(&mut self, msg: Message, read: Read) -> Step {
        let Value::Array(items) = read.value else {
            return Step::Pass(msg);
        };
        let mut members = Vec::new();
        let mut unread = Vec::new();
        for item in &items {
            let Some(facts) = Facts::of(item) else {
                members.push(None);
                continue;
            };
            if self.gate.policy.gates(&facts.method)
                && let Some(why) = unreadable(&facts, read.deep)
            {
                unread.push((facts, why));
                continue;
            }
            let ruling = self.decide(&facts);
            members.push(Some((facts, ruling)));
        }
        let whole = unread.is_empty()
            && members.iter().flatten().all(|(_, ruling)| {
                ruling
                    .as_ref()
                    .is_none_or(|r| r.decision == Decision::Allow)
            });
        if whole {
            for (facts, ruling) in members.iter().flatten() {
                if let Some(ruling) = ruling {
                    self.tell(&facts.entry(ruling, Resolution::Allowed));
                }
                if facts.method == "tools/list"
                    && let Some(id) = &facts.id
                {
                    let paged = facts.arguments.get("cursor").is_some_and(|c| !c.is_null());
                    self.lists.insert(id_key(id), paged);
                }
            }
            return Step::Pass(msg);
        }
        let mut answers = Vec::new();
        for (facts, why) in &unread {
            self.tell(&unread_entry(&msg, Some(facts), why));
            answers.push(read::error(why));
        }
        for (facts, ruling) in members.iter().flatten() {
            let Some(ruling) = ruling else {
                if let Some(id) = &facts.id {
                    answers.push(not_sent(id));
                }
                continue;
            };
            let (resolution, reason) = match ruling.decision {
                Decision::Allow => (
                    Resolution::Refused,
                    Some("not sent: its batch held a call the policy did not allow".to_owned()),
                ),
                Decision::Deny => (Resolution::Refused, None),
                Decision::DryRun => (Resolution::DryRun, None),
                Decision::Ask => (
                    Resolution::Refused,
                    Some("no call in a batch is held for approval: send it alone".to_owned()),
                ),
            };
            let mut entry = facts.entry(ruling, resolution);
            entry.reason = reason.clone();
            self.tell(&entry);
            let Some(id) = &facts.id else { continue };
            let answer = match (ruling.decision, resolution) {
                (Decision::Allow, _) => not_sent(id),
                (_, Resolution::DryRun) => facts.dry_run(id, ruling, self.has_output_schema(facts)),
                _ => facts.refusal(id, ruling, reason.as_deref()),
            };
            answers.push(answer);
        }
        if answers.is_empty() {
            return Step::Drop;
        }
        let values: Vec<Value> = answers.iter().map(Message::value).collect();
        Step::Answer(vec![Message::new(Value::Array(values).to_string())])
    }
}

/// The error answer of a batch member that was not sent.
fn not_sent(id: &str) -> Message {
    let error = json!({
        "code": REFUSED_CODE,
        "message": "not sent: its batch held a call the policy did not allow; send calls one by one",
    });
    Message::new(format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{error}}}"#))
}
