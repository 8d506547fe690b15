//! The layer that injects a [`FaultPlan`]'s faults into one connection.
//!
//! Each rule keeps this connection's own count of the messages it selects (for `nth`) and
//! its own seeded draws (for `p`): every message a rule's method and name fit is counted
//! and drawn for, by every rule, so a rule picks the same messages whatever the rules
//! before it did. The first rule that picks a message decides.
//!
//! A request's answer-side effects (error, tool-error, timeout, malformed, delay,
//! slow-stream) let the request go on — the server (or the replay script) sees it — and
//! act on its answer; `disconnect` and `drop` act on the message itself. Each fault is
//! told upward as a `$fault` event ([`Fault`]), so the tap records it next to what it
//! changed.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use crate::fault::FaultPlan;
use crate::fault::rule::{Effect, Rule};
use crate::layer::{Layer, Step};
use crate::message::{Kind, Message};
use crate::tape::fault::FaultEntry;
use crate::tape::lifecycle::LifecycleKind;
use crate::upstream::Event;

/// The JSON-RPC error text of a request's id, made comparable (`1` and `1.0` alike).
fn id_key(id: &str) -> String {
    serde_json::from_str::<serde_json::Value>(id)
        .map(|v| v.to_string())
        .unwrap_or_else(|_| id.to_owned())
}

/// What a `$fault` entry tells besides its rule.
#[derive(Clone, Default)]
struct Fault {
    id: Option<String>,
    method: Option<String>,
    tool: Option<String>,
    seed: Option<u64>,
    replaced: Option<serde_json::Value>,
}

impl Fault {
    /// What a fault at `msg` tells.
    fn of(msg: &Message, rule: &Rule) -> Fault {
        Fault {
            id: msg.id().map(str::to_owned),
            method: msg.method().map(str::to_owned),
            tool: tool_name(msg),
            seed: rule.selector.p.and(rule.selector.seed),
            replaced: None,
        }
    }

    fn entry(self, rule: &Rule) -> FaultEntry {
        FaultEntry {
            rule: rule.text.clone(),
            index: rule.index as u64,
            effect: rule.effect.kind(),
            id: self.id,
            method: self.method,
            tool: self.tool,
            seed: self.seed,
            replaced: self.replaced,
        }
    }
}

/// A request whose answer a rule will change.
struct Pending {
    rule: usize,
    method: String,
    tool: Option<String>,
    seed: Option<u64>,
}

/// The layer applying a plan to one connection.
pub struct FaultLayer {
    plan: Arc<FaultPlan>,
    /// Per rule: messages its method and name fitted so far.
    counts: Vec<u64>,
    /// Per rule: its draws for `p`.
    draws: Vec<SplitMix>,
    /// Requests whose answers are to be changed, by id.
    pending: HashMap<String, Pending>,
    /// `$fault` events not yet told.
    told: Vec<Event>,
}

impl FaultLayer {
    /// A layer applying `plan`, with counters of its own.
    pub fn new(plan: Arc<FaultPlan>) -> FaultLayer {
        let draws = plan.rules.iter().map(|r| SplitMix(r.seed())).collect();
        FaultLayer {
            counts: vec![0; plan.rules.len()],
            draws,
            plan,
            pending: HashMap::new(),
            told: Vec::new(),
        }
    }

    /// The rule that picks `msg` coming from the client (`from_client`) or the server,
    /// counting it for every rule it fits.
    fn pick(&mut self, msg: &Message, from_client: bool) -> Option<usize> {
        let kind = msg.kind();
        let method = msg.method()?;
        let mut name: Option<Option<String>> = None;
        let mut chosen = None;
        for (i, rule) in self.plan.rules.iter().enumerate() {
            let applies = match kind {
                Kind::Request if from_client => true,
                Kind::Request | Kind::Notification => rule.effect == Effect::Drop,
                _ => false,
            };
            if !applies || rule.selector.method.as_deref().is_some_and(|m| m != method) {
                continue;
            }
            if let Some(want) = &rule.selector.name {
                let name = name.get_or_insert_with(|| tool_name(msg));
                if name.as_deref() != Some(want.as_str()) {
                    continue;
                }
            }
            self.counts[i] += 1;
            let drawn = rule.selector.p.is_none_or(|p| self.draws[i].unit() < p);
            let nth = rule.selector.nth.is_none_or(|n| n == self.counts[i]);
            if drawn && nth && chosen.is_none() {
                chosen = Some(i);
            }
        }
        chosen
    }

    fn tell(&mut self, rule: &Rule, fault: Fault) {
        self.told
            .push((LifecycleKind::Fault, fault.entry(rule).params()));
    }

    /// A message this rule acts on by itself (`drop`, `disconnect`), or a request whose
    /// answer it will change.
    fn at_message(&mut self, i: usize, msg: Message) -> Step {
        let rule = self.plan.rules[i].clone();
        let fault = Fault::of(&msg, &rule);
        match &rule.effect {
            Effect::Drop => {
                self.tell(&rule, fault);
                Step::Drop
            }
            Effect::Disconnect { status } => {
                self.tell(&rule, fault);
                Step::Disconnect(*status)
            }
            effect => {
                let Some(id) = msg.id() else {
                    return Step::Pass(msg);
                };
                if *effect == Effect::Timeout {
                    // Told now: the answer may never come, and the tape must say why.
                    self.tell(&rule, fault.clone());
                }
                self.pending.insert(
                    id_key(id),
                    Pending {
                        rule: i,
                        method: fault.method.clone().unwrap_or_default(),
                        tool: fault.tool.clone(),
                        seed: fault.seed,
                    },
                );
                Step::Pass(msg)
            }
        }
    }

    /// The answer to a request a rule picked.
    fn at_answer(&mut self, pending: Pending, answer: Message) -> Step {
        let rule = self.plan.rules[pending.rule].clone();
        let id = answer.id().unwrap_or("null").to_owned();
        let fault = Fault {
            id: Some(id.clone()),
            method: Some(pending.method),
            tool: pending.tool,
            seed: pending.seed,
            replaced: None,
        };
        let keep = |m: Message| {
            m.on(answer.stream())
                .answering(answer.answered().map(Arc::from))
        };
        match &rule.effect {
            Effect::Timeout => Step::Drop,
            Effect::Delay { ms } => {
                self.tell(&rule, fault);
                let ms = *ms;
                Step::Later(Box::pin(async move {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    Step::Pass(answer)
                }))
            }
            Effect::SlowStream => {
                self.tell(&rule, fault);
                Step::Pass(answer.slowly())
            }
            Effect::Error { code, message } => {
                let text = serde_json::json!({"code": code, "message": message});
                let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{text}}}"#);
                self.replace(&rule, &answer, fault, keep(Message::new(line)))
            }
            Effect::ToolError { text } => {
                let result = serde_json::json!({
                    "content": [{"type": "text", "text": text}],
                    "isError": true,
                });
                let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#);
                self.replace(&rule, &answer, fault, keep(Message::new(line)))
            }
            Effect::Malformed => {
                let line = torn(answer.text());
                self.replace(&rule, &answer, fault, keep(Message::new(line)))
            }
            Effect::Drop | Effect::Disconnect { .. } => Step::Pass(answer),
        }
    }

    fn replace(&mut self, rule: &Rule, answer: &Message, fault: Fault, by: Message) -> Step {
        let fault = Fault {
            replaced: Some(answer.value()),
            ..fault
        };
        self.tell(rule, fault);
        Step::Pass(by)
    }
}

/// The `params.name` of a message, when it has one.
fn tool_name(msg: &Message) -> Option<String> {
    let text = msg.text();
    let raw = crate::message::raw_member(text, &["params", "name"])?;
    serde_json::from_str::<String>(raw).ok()
}

/// A line that is not JSON: the first half of `text` (a JSON object cut short is never
/// JSON), at least one byte.
fn torn(text: &str) -> String {
    let mut at = (text.len() / 2).max(1).min(text.len());
    while at < text.len() && !text.is_char_boundary(at) {
        at += 1;
    }
    let cut = &text[..at];
    if crate::message::shape(cut.as_bytes()) == crate::message::Shape::Invalid {
        cut.to_owned()
    } else {
        format!("{cut} (mcptape: malformed)")
    }
}

impl Layer for FaultLayer {
    fn reads_first(&self) -> bool {
        !self.plan.rules.is_empty()
    }

    fn client(&mut self, msg: Message) -> Step {
        match self.pick(&msg, true) {
            Some(i) => self.at_message(i, msg),
            None => Step::Pass(msg),
        }
    }

    fn server(&mut self, msg: Message) -> Step {
        match msg.kind() {
            Kind::Response | Kind::Error => {
                let pending = msg.id().and_then(|id| self.pending.remove(&id_key(id)));
                match pending {
                    Some(p) => self.at_answer(p, msg),
                    None => Step::Pass(msg),
                }
            }
            _ => match self.pick(&msg, false) {
                Some(i) => self.at_message(i, msg),
                None => Step::Pass(msg),
            },
        }
    }

    fn events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.told)
    }
}

/// A small seeded generator (SplitMix64): the same seed gives the same draws everywhere.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A draw in `0..1`.
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests;
