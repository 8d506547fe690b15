//! [`PolicyLayer`]: the gate on one connection, between the tap (nearer the client) and
//! the faults.
//!
//! A client message the policy gates ([`Policy::decide`](crate::policy::Policy::decide))
//! is passed on (`allow`), answered here (`deny`, `dry-run`: [`crate::policy::answer`]),
//! or held for a person (`ask`: a [`Step::Later`] that waits on the desk, and that a
//! client's `notifications/cancelled` naming it withdraws). Each decision is told upward
//! as a `$policy/decision` event ([`crate::tape::policy`]), so that the tap records it
//! after the request and before the answer the client is given; a held call's is told
//! when it is decided (from the future, through a queue that [`Layer::events`] drains).
//!
//! Every client line is read whole, as the servers read it, or refused
//! ([`crate::policy::read`], [`unread`]): the gate never decides on less than the server
//! will act on.
//!
//! The layer also reads the server's `tools/list` answers into the gate's tool index
//! (the annotations rules match). A JSON-RPC batch passes whole or not at all
//! ([`batch`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::layer::{Layer, Step};
use crate::message::{Kind, Message};
use crate::policy::answer;
use crate::policy::approvals::{Answer, Request};
use crate::policy::gate::Gate;
use crate::policy::read::{self, Read};
use crate::policy::rule::{Call, Ruling, TOOLS_CALL};
use crate::tape::lifecycle::LifecycleKind;
use crate::tape::policy::{Decision, PolicyEntry, Resolution};
use crate::upstream::Event;

/// A request id made comparable (`1` and `1.0` alike, `"\u0061"` and `"a"`).
fn id_key(id: &str) -> String {
    serde_json::from_str::<Value>(id)
        .map(|v| v.to_string())
        .unwrap_or_else(|_| id.to_owned())
}

/// The calls held on the desk, by id: a signal that withdraws each.
type HeldCalls = Arc<Mutex<HashMap<String, oneshot::Sender<()>>>>;

/// The gate on one connection.
pub struct PolicyLayer {
    gate: Arc<Gate>,
    /// The client's `tools/list` requests awaiting their answers: true for a later page.
    lists: HashMap<String, bool>,
    /// The calls held for a person.
    held: HeldCalls,
    /// `$policy/decision` events not yet told (also pushed by held calls' futures).
    told: Arc<Mutex<Vec<Event>>>,
}

/// What a decision is about.
#[derive(Debug, Clone)]
struct Facts {
    /// The request's id (JSON text); `None` for a notification.
    id: Option<String>,
    method: String,
    tool: Option<String>,
    arguments: Value,
}

impl Facts {
    /// What the gate reads of a parsed message ([`crate::policy::read`]): `None` when
    /// it has no string `method` (an answer to the server, or no message at all).
    fn of(v: &Value) -> Option<Facts> {
        let method = read::method(v)?.to_owned();
        let params = &v["params"];
        let arguments = if method == TOOLS_CALL {
            params["arguments"].clone()
        } else {
            params.clone()
        };
        Some(Facts {
            id: v.get("id").map(Value::to_string),
            tool: params["name"].as_str().map(str::to_owned),
            method,
            arguments,
        })
    }

    fn entry(&self, ruling: &Ruling, resolution: Resolution) -> PolicyEntry {
        PolicyEntry {
            id: self.id.clone(),
            method: self.method.clone(),
            tool: self.tool.clone(),
            decision: ruling.decision,
            rules: ruling.rules.clone(),
            resolution,
            approval: None,
            by: None,
            reason: None,
            waited_ms: None,
            error: None,
        }
    }

    /// The answer that refuses this request (`why`: a person's or the clock's reason).
    fn refusal(&self, id: &str, ruling: &Ruling, why: Option<&str>) -> Message {
        if self.method == TOOLS_CALL {
            answer::tool_result(id, &answer::refusal_text(&ruling.named(), why), true)
        } else {
            let text = answer::error_message(&self.method, &ruling.named(), false, why);
            answer::error(id, &text, &self.data(ruling))
        }
    }

    /// The answer of a dry run of this request.
    fn dry_run(&self, id: &str, ruling: &Ruling, output_schema: bool) -> Message {
        if self.method == TOOLS_CALL {
            let tool = self.tool.as_deref().unwrap_or("?");
            let text = answer::dry_run_text(tool, &self.arguments, &ruling.named());
            answer::tool_result(id, &text, output_schema)
        } else {
            let text = answer::error_message(&self.method, &ruling.named(), true, None);
            answer::error(id, &text, &self.data(ruling))
        }
    }

    /// The `data` of a refusal error: what was decided, and what would have been sent.
    fn data(&self, ruling: &Ruling) -> Value {
        json!({
            "decision": ruling.decision.as_str(),
            "rules": ruling.rules,
            "method": self.method,
            "params": self.arguments,
        })
    }
}

impl PolicyLayer {
    /// The layer of `gate` for one connection.
    pub fn new(gate: Arc<Gate>) -> PolicyLayer {
        PolicyLayer {
            gate,
            lists: HashMap::new(),
            held: Arc::default(),
            told: Arc::default(),
        }
    }

    fn tell(&self, entry: &PolicyEntry) {
        push(&self.told, entry);
    }

    /// The rules' ruling on `facts`; `None` when not gated.
    fn decide(&self, facts: &Facts) -> Option<Ruling> {
        let listed = facts
            .tool
            .as_deref()
            .filter(|_| facts.method == TOOLS_CALL)
            .and_then(|t| self.gate.index.get(&self.gate.server, t));
        self.gate.policy.decide(&Call {
            server: &self.gate.server,
            method: &facts.method,
            tool: facts.tool.as_deref(),
            arguments: &facts.arguments,
            listed: listed.as_ref(),
        })
    }

    /// True when the tool of a `tools/call` declared an `outputSchema`.
    fn has_output_schema(&self, facts: &Facts) -> bool {
        facts
            .tool
            .as_deref()
            .and_then(|t| self.gate.index.get(&self.gate.server, t))
            .is_some_and(|i| i.output_schema)
    }

    /// A `notifications/cancelled` naming a held call: withdraws it (true), and the
    /// notification goes no further (the server never saw the call).
    fn withdraws(&self, v: &Value) -> bool {
        self.withdraw(&v["params"]["requestId"].to_string())
    }

    /// Withdraws the held call whose id is `key` ([`id_key`]): true when there was one.
    fn withdraw(&self, key: &str) -> bool {
        let Ok(mut held) = self.held.lock() else {
            return false;
        };
        match held.remove(key) {
            Some(cancel) => {
                let _ = cancel.send(());
                true
            }
            None => false,
        }
    }

    /// One client message (not a batch), read whole ([`read::line`]).
    fn one(&mut self, msg: Message, read: Read) -> Step {
        let v = read.value;
        let Some(facts) = Facts::of(&v) else {
            return Step::Pass(msg);
        };
        if facts.method == "notifications/cancelled" && self.withdraws(&v) {
            return Step::Drop;
        }
        if self.gate.policy.gates(&facts.method)
            && let Some(unreadable) = unreadable(&facts, read.deep)
        {
            return self.unread(&msg, Some(&facts), unreadable);
        }
        // A head a strict reading cannot take (a duplicate key) goes on as the gate read
        // it, so that the layers below and the server read the message decided on.
        let msg = if msg.method() == Some(facts.method.as_str()) || read.deep {
            msg
        } else {
            Message::new(v.to_string())
        };
        let listing = (facts.method == "tools/list")
            .then(|| facts.id.clone())
            .flatten()
            .map(|id| (id, v["params"].get("cursor").is_some_and(|c| !c.is_null())));
        let step = self.rule_on(msg, facts);
        // Only a listing that went on is awaited (a refused one's id is the gate's).
        if let (Step::Pass(_), Some((id, paged))) = (&step, listing) {
            self.lists.insert(id_key(&id), paged);
        }
        step
    }

    /// What the rules make of one message the gate read.
    fn rule_on(&mut self, msg: Message, facts: Facts) -> Step {
        let Some(ruling) = self.decide(&facts) else {
            return Step::Pass(msg);
        };
        let Some(id) = facts.id.clone() else {
            // A notification a rule names: allowed on, else dropped (nothing to answer).
            let resolution = match ruling.decision {
                Decision::Allow => Resolution::Allowed,
                Decision::DryRun => Resolution::DryRun,
                Decision::Deny | Decision::Ask => Resolution::Refused,
            };
            self.tell(&facts.entry(&ruling, resolution));
            return match resolution {
                Resolution::Allowed => Step::Pass(msg),
                _ => Step::Drop,
            };
        };
        match ruling.decision {
            Decision::Allow => {
                self.tell(&facts.entry(&ruling, Resolution::Allowed));
                Step::Pass(msg)
            }
            Decision::Deny => {
                self.tell(&facts.entry(&ruling, Resolution::Refused));
                Step::Answer(vec![facts.refusal(&id, &ruling, None)])
            }
            Decision::DryRun => {
                self.tell(&facts.entry(&ruling, Resolution::DryRun));
                let schema = self.has_output_schema(&facts);
                Step::Answer(vec![facts.dry_run(&id, &ruling, schema)])
            }
            Decision::Ask => self.ask(msg, facts, id, ruling),
        }
    }

    /// An `ask`: refused at once with a timeout of 0, else held on the desk until a
    /// person decides, the clock runs out, or the client cancels.
    fn ask(&mut self, msg: Message, facts: Facts, id: String, ruling: Ruling) -> Step {
        let refuse_now = |layer: &Self, reason: String| {
            let mut entry = facts.entry(&ruling, Resolution::Refused);
            entry.reason = Some(reason.clone());
            layer.tell(&entry);
            Step::Answer(vec![facts.refusal(&id, &ruling, Some(&reason))])
        };
        let desk = match &self.gate.desk {
            Some(desk) if !self.gate.timeout.is_zero() => desk.clone(),
            _ => {
                return refuse_now(
                    self,
                    "it needs a person's approval, and --approval-timeout is 0".into(),
                );
            }
        };
        let request = Request {
            server: self.gate.server.clone(),
            method: facts.method.clone(),
            tool: facts.tool.clone(),
            arguments: redacted(&facts.arguments),
            rules: ruling.rules.clone(),
        };
        let mut held = match desk.hold(request) {
            Ok(held) => held,
            Err(e) => {
                let why = format!(
                    "the approvals desk cannot hold it: {}",
                    crate::error::chain(&e)
                );
                return refuse_now(self, why);
            }
        };
        let (cancel, cancelled) = oneshot::channel();
        let key = id_key(&id);
        if let Ok(mut calls) = self.held.lock() {
            calls.insert(key.clone(), cancel);
        }
        let (calls, told, timeout) = (
            Arc::clone(&self.held),
            Arc::clone(&self.told),
            self.gate.timeout,
        );
        let mut unheard = facts.entry(&ruling, Resolution::Withdrawn);
        unheard.approval = Some(held.id.clone());
        unheard.reason = Some("the connection ended before a decision".into());
        let unheard = Unheard {
            entry: Some(unheard),
            told: Arc::clone(&told),
            calls: Arc::clone(&calls),
            key: key.clone(),
            started: Instant::now(),
        };
        Step::Later(Box::pin(async move {
            // Moved in whole: dropped with the future, it tells the withdrawal.
            let mut unheard = unheard;
            let started = Instant::now();
            let answer = tokio::select! {
                answer = held.wait(timeout) => Some(answer),
                _ = cancelled => None,
            };
            if let Ok(mut calls) = calls.lock() {
                calls.remove(&key);
            }
            let waited = started.elapsed();
            let approval = held.id.clone();
            drop(held);
            let decided = decided(answer, timeout);
            let mut entry = facts.entry(&ruling, decided.resolution);
            entry.approval = Some(approval);
            entry.by = decided.by;
            entry.reason = decided.reason;
            entry.waited_ms = Some(u64::try_from(waited.as_millis()).unwrap_or(u64::MAX));
            push(&told, &entry);
            unheard.entry = None;
            match decided.resolution {
                Resolution::Allowed => Step::Pass(msg),
                Resolution::Withdrawn => Step::Drop,
                _ => Step::Answer(vec![facts.refusal(&id, &ruling, decided.why.as_deref())]),
            }
        }))
    }
}

/// A held call's withdrawal, told if its future is dropped before it is decided (a
/// signal, the connection's close, a server that went away): the stack then asks the
/// layer for its events, so the tape says what became of the call.
struct Unheard {
    /// The entry to tell; None once the call was decided.
    entry: Option<PolicyEntry>,
    told: Arc<Mutex<Vec<Event>>>,
    calls: HeldCalls,
    key: String,
    started: Instant,
}

impl Drop for Unheard {
    fn drop(&mut self) {
        let Some(mut entry) = self.entry.take() else {
            return;
        };
        if let Ok(mut calls) = self.calls.lock() {
            calls.remove(&self.key);
        }
        let waited = self.started.elapsed();
        entry.waited_ms = Some(u64::try_from(waited.as_millis()).unwrap_or(u64::MAX));
        push(&self.told, &entry);
    }
}

/// What a held call came to.
struct Decided {
    resolution: Resolution,
    by: Option<String>,
    /// The reason the entry records (a person's `--reason`, the clock's).
    reason: Option<String>,
    /// What a refusal's text says of it.
    why: Option<String>,
}

/// What the desk's `answer` (`None`: the client cancelled) makes of a held call.
fn decided(answer: Option<Answer>, timeout: Duration) -> Decided {
    match answer {
        None => Decided {
            resolution: Resolution::Withdrawn,
            by: Some("client".into()),
            reason: Some("the client cancelled it".into()),
            why: None,
        },
        Some(Answer::Approved { by }) => Decided {
            resolution: Resolution::Allowed,
            by: Some(by),
            reason: None,
            why: None,
        },
        Some(Answer::Denied { by, reason }) => Decided {
            why: Some(match &reason {
                Some(r) => format!("denied by {by}: {r}"),
                None => format!("denied by {by}"),
            }),
            reason,
            resolution: Resolution::Refused,
            by: Some(by),
        },
        Some(Answer::TimedOut) => {
            let why = format!("no decision within {} s", secs(timeout));
            Decided {
                resolution: Resolution::Refused,
                by: Some("timeout".into()),
                reason: Some(why.clone()),
                why: Some(why),
            }
        }
    }
}

/// Seconds, as people write them (`300`, `0.5`).
fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{}", d.as_secs())
    } else {
        format!("{s}")
    }
}

/// The arguments as a person may see them on the desk: secrets redacted.
fn redacted(arguments: &Value) -> Value {
    let text = arguments.to_string();
    let clean = crate::redact::Redactor::for_messages().message(&text);
    serde_json::from_str(&clean).unwrap_or_else(|_| json!("[REDACTED]"))
}

fn push(told: &Mutex<Vec<Event>>, entry: &PolicyEntry) {
    if let Ok(mut told) = told.lock() {
        told.push((LifecycleKind::PolicyDecision, entry.params()));
    }
}

impl Layer for PolicyLayer {
    fn reads_first(&self) -> bool {
        true
    }

    fn client(&mut self, msg: Message) -> Step {
        // Every line is read whole, as the servers read it, or refused.
        match read::line(msg.raw()) {
            Err(unreadable) => self.unread(&msg, None, unreadable),
            Ok(read) if read.value.is_array() => self.batch(msg, read),
            Ok(read) => self.one(msg, read),
        }
    }

    fn server(&mut self, msg: Message) -> Step {
        if matches!(msg.kind(), Kind::Response | Kind::Error)
            && let Some(paged) = msg.id().and_then(|id| self.lists.remove(&id_key(id)))
            && msg.kind() == Kind::Response
        {
            self.gate
                .index
                .listed(&self.gate.server, &msg.value()["result"], paged);
        }
        Step::Pass(msg)
    }

    fn cancelled(&mut self, id: &str) {
        // An HTTP client that closed a held call's stream gave it up, as a
        // `notifications/cancelled` says: withdrawn.
        self.withdraw(&id_key(id));
    }

    fn events(&mut self) -> Vec<Event> {
        self.told
            .lock()
            .map(|mut t| std::mem::take(&mut *t))
            .unwrap_or_default()
    }
}

mod batch;
mod unread;

use unread::unreadable;

#[cfg(test)]
mod tests;
