//! What a `$fault` lifecycle entry says: an injected fault ([`crate::fault`]), written by
//! the fault layer just before what it changed, read by `show` and by replay. Its
//! `params` are written and read here, once.

use serde_json::{Value, json};

/// The effect of an injected fault: the one spelling of each effect's word, in rules and
/// on tapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FaultEffect {
    /// `error`: a JSON-RPC error in place of the answer.
    Error,
    /// `tool-error`: an `isError` result in place of the answer.
    ToolError,
    /// `delay`: the answer held.
    Delay,
    /// `timeout`: the answer never given.
    Timeout,
    /// `drop`: the message dropped.
    Drop,
    /// `malformed`: a non-JSON line in place of the answer.
    Malformed,
    /// `disconnect`: the server went away at this request.
    Disconnect,
    /// `slow-stream`: the answer written in small pieces.
    SlowStream,
}

/// Every effect, for reading a word back.
pub const EFFECTS: [FaultEffect; 8] = [
    FaultEffect::Error,
    FaultEffect::ToolError,
    FaultEffect::Delay,
    FaultEffect::Timeout,
    FaultEffect::Drop,
    FaultEffect::Malformed,
    FaultEffect::Disconnect,
    FaultEffect::SlowStream,
];

impl FaultEffect {
    /// The effect's word.
    pub fn as_str(self) -> &'static str {
        match self {
            FaultEffect::Error => "error",
            FaultEffect::ToolError => "tool-error",
            FaultEffect::Delay => "delay",
            FaultEffect::Timeout => "timeout",
            FaultEffect::Drop => "drop",
            FaultEffect::Malformed => "malformed",
            FaultEffect::Disconnect => "disconnect",
            FaultEffect::SlowStream => "slow-stream",
        }
    }

    /// The effect of a word; `None` for an unknown one.
    pub fn parse(word: &str) -> Option<FaultEffect> {
        EFFECTS.into_iter().find(|e| e.as_str() == word)
    }

    /// True when the request it hit was never answered on the tape (`timeout`, `drop`,
    /// `disconnect`): replay treats that as recorded, not as a cut tape.
    pub fn leaves_unanswered(self) -> bool {
        matches!(
            self,
            FaultEffect::Timeout | FaultEffect::Drop | FaultEffect::Disconnect
        )
    }
}

/// A `$fault` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultEntry {
    /// The rule's text.
    pub rule: String,
    /// The rule's number among the run's rules, from 1.
    pub index: u64,
    /// What it did.
    pub effect: FaultEffect,
    /// The id (JSON text) of the request it hit, when it hit a request or its answer.
    pub id: Option<String>,
    /// The method of the message it hit (the request's, for an answer).
    pub method: Option<String>,
    /// The tool (`params.name`), when the request named one.
    pub tool: Option<String>,
    /// The seed of the rule's draws, when it has `p=`.
    pub seed: Option<u64>,
    /// The message it replaced or withheld, when there was one.
    pub replaced: Option<Value>,
}

impl FaultEntry {
    /// The entry's `params`.
    pub fn params(&self) -> Value {
        let mut p = json!({
            "rule": self.rule,
            "index": self.index,
            "effect": self.effect.as_str(),
        });
        let obj = p.as_object_mut().expect("a JSON object literal");
        if let Some(id) = &self.id {
            let id = serde_json::from_str::<Value>(id).unwrap_or_else(|_| json!(id));
            obj.insert("id".into(), id);
        }
        for (key, value) in [("method", &self.method), ("tool", &self.tool)] {
            if let Some(v) = value {
                obj.insert(key.into(), json!(v));
            }
        }
        if let Some(seed) = self.seed {
            obj.insert("seed".into(), json!(seed));
        }
        if let Some(r) = &self.replaced {
            obj.insert("replaced".into(), r.clone());
        }
        p
    }

    /// Reads an entry's `params`; `None` when they do not have its shape.
    pub fn read(params: &Value) -> Option<FaultEntry> {
        let text = |name: &str| params[name].as_str().map(str::to_owned);
        Some(FaultEntry {
            rule: text("rule")?,
            index: params["index"].as_u64()?,
            effect: FaultEffect::parse(params["effect"].as_str()?)?,
            id: params
                .get("id")
                .filter(|id| id.is_string() || id.is_number())
                .map(Value::to_string),
            method: text("method"),
            tool: text("tool"),
            seed: params["seed"].as_u64(),
            replaced: params.get("replaced").cloned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fault_entry_reads_back_as_written() {
        let entry = FaultEntry {
            rule: "tools/call: error -1 \"x\"".into(),
            index: 2,
            effect: FaultEffect::Error,
            id: Some("\"a\"".into()),
            method: Some("tools/call".into()),
            tool: Some("echo".into()),
            seed: Some(7),
            replaced: Some(json!({"jsonrpc": "2.0", "id": "a", "result": {}})),
        };
        assert_eq!(FaultEntry::read(&entry.params()), Some(entry));
        for e in EFFECTS {
            assert_eq!(FaultEffect::parse(e.as_str()), Some(e));
        }
        assert_eq!(
            FaultEntry::read(&json!({"rule": "x", "index": 1, "effect": "melt"})),
            None
        );
    }
}
