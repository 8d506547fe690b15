//! What a `$policy/decision` lifecycle entry says: what the policy gate
//! ([`crate::policy`]) decided on a client message and what became of it, written beside
//! the call (after the request, before the answer the client was given). Its `params`
//! are written and read here, once.

use serde_json::{Value, json};

/// A rule's decision: the one spelling of each, in policy files and on tapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Decision {
    /// `allow`: the call goes on to the server.
    Allow,
    /// `deny`: the call is refused here (an `isError` result).
    Deny,
    /// `ask`: the call is held until a person decides (`mcptape approve`/`deny`).
    Ask,
    /// `dry-run`: the call is answered here, not executed, with the arguments it had.
    DryRun,
}

/// Every decision, for reading a word back.
pub const DECISIONS: [Decision; 4] = [
    Decision::Allow,
    Decision::Deny,
    Decision::Ask,
    Decision::DryRun,
];

impl Decision {
    /// The decision's word.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Deny => "deny",
            Decision::Ask => "ask",
            Decision::DryRun => "dry-run",
        }
    }

    /// The decision of a word; `None` for an unknown one.
    pub fn parse(word: &str) -> Option<Decision> {
        DECISIONS.into_iter().find(|d| d.as_str() == word)
    }
}

/// What became of the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Resolution {
    /// `allowed`: forwarded to the server (allowed by a rule, or approved).
    Allowed,
    /// `refused`: answered here with a refusal (denied by a rule or a person, or an
    /// approval that timed out).
    Refused,
    /// `dry-run`: answered here with what it would have run.
    DryRun,
    /// `withdrawn`: the client cancelled it while it was held; nothing was answered.
    Withdrawn,
}

/// Every resolution, for reading a word back.
pub const RESOLUTIONS: [Resolution; 4] = [
    Resolution::Allowed,
    Resolution::Refused,
    Resolution::DryRun,
    Resolution::Withdrawn,
];

impl Resolution {
    /// The resolution's word.
    pub fn as_str(self) -> &'static str {
        match self {
            Resolution::Allowed => "allowed",
            Resolution::Refused => "refused",
            Resolution::DryRun => "dry-run",
            Resolution::Withdrawn => "withdrawn",
        }
    }

    /// The resolution of a word; `None` for an unknown one.
    pub fn parse(word: &str) -> Option<Resolution> {
        RESOLUTIONS.into_iter().find(|r| r.as_str() == word)
    }

    /// True when the client was answered by the gate, not by the server (verify does not
    /// hold the server to such an answer).
    pub fn answered_here(self) -> bool {
        matches!(self, Resolution::Refused | Resolution::DryRun)
    }
}

/// A `$policy/decision` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyEntry {
    /// The id (JSON text) of the request it decided on; None for a notification.
    pub id: Option<String>,
    /// The message's method.
    pub method: String,
    /// The tool (`params.name`), for a `tools/call`.
    pub tool: Option<String>,
    /// What the rules said.
    pub decision: Decision,
    /// The ids of the rules that decided, in file order; empty: the file's `default`.
    pub rules: Vec<String>,
    /// What became of the call.
    pub resolution: Resolution,
    /// For an `ask`: the approval's id (`mcptape approve ID`).
    pub approval: Option<String>,
    /// For an `ask`: who decided (`user@host`), or `timeout`, or `client` (cancelled).
    pub by: Option<String>,
    /// Why it was refused, when a reason was given (`deny --reason`, a timeout).
    pub reason: Option<String>,
    /// For an `ask`: how long it was held, in milliseconds.
    pub waited_ms: Option<u64>,
    /// For a message the gate could not read ([`crate::policy::read`]): the JSON-RPC
    /// error code it was answered with (`-32700`, `-32600`); no rule decided.
    pub error: Option<i64>,
}

impl PolicyEntry {
    /// The entry's `params`.
    pub fn params(&self) -> Value {
        let mut p = json!({
            "method": self.method,
            "decision": self.decision.as_str(),
            "rules": self.rules,
            "resolution": self.resolution.as_str(),
        });
        let obj = p.as_object_mut().expect("a JSON object literal");
        if let Some(id) = &self.id {
            let id = serde_json::from_str::<Value>(id).unwrap_or_else(|_| json!(id));
            obj.insert("id".into(), id);
        }
        for (key, value) in [
            ("tool", &self.tool),
            ("approval", &self.approval),
            ("by", &self.by),
            ("reason", &self.reason),
        ] {
            if let Some(v) = value {
                obj.insert(key.into(), json!(v));
            }
        }
        if let Some(ms) = self.waited_ms {
            obj.insert("waitedMs".into(), json!(ms));
        }
        if let Some(code) = self.error {
            obj.insert("error".into(), json!(code));
        }
        p
    }

    /// Reads an entry's `params`; `None` when they do not have its shape.
    pub fn read(params: &Value) -> Option<PolicyEntry> {
        let text = |name: &str| params[name].as_str().map(str::to_owned);
        let rules = params["rules"]
            .as_array()?
            .iter()
            .map(|r| r.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()?;
        Some(PolicyEntry {
            // Any JSON: the gate refuses requests whose id is not a string or an
            // integer (`true`, `[7]`), and verify matches them by it.
            id: params.get("id").map(Value::to_string),
            method: text("method")?,
            tool: text("tool"),
            decision: Decision::parse(params["decision"].as_str()?)?,
            rules,
            resolution: Resolution::parse(params["resolution"].as_str()?)?,
            approval: text("approval"),
            by: text("by"),
            reason: text("reason"),
            waited_ms: params["waitedMs"].as_u64(),
            error: params["error"].as_i64(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_entry_reads_back_as_written() {
        let entry = PolicyEntry {
            id: Some("7".into()),
            method: "tools/call".into(),
            tool: Some("delete_file".into()),
            decision: Decision::Ask,
            rules: vec!["ask-writes".into()],
            resolution: Resolution::Refused,
            approval: Some("k3f9".into()),
            by: Some("timeout".into()),
            reason: Some("no decision in 300 s".into()),
            waited_ms: Some(300_000),
            error: None,
        };
        assert_eq!(PolicyEntry::read(&entry.params()), Some(entry));
        // A refused unreadable request: any JSON id, the error code, no tool.
        for id in ["true", "[7]", "{}", "null", r#""a""#, "1"] {
            let odd = PolicyEntry {
                id: Some(id.into()),
                method: "?".into(),
                tool: None,
                decision: Decision::Deny,
                rules: Vec::new(),
                resolution: Resolution::Refused,
                approval: None,
                by: None,
                reason: Some("not JSON".into()),
                waited_ms: None,
                error: Some(-32600),
            };
            assert_eq!(PolicyEntry::read(&odd.params()), Some(odd), "{id}");
        }
        for d in DECISIONS {
            assert_eq!(Decision::parse(d.as_str()), Some(d));
        }
        for r in RESOLUTIONS {
            assert_eq!(Resolution::parse(r.as_str()), Some(r));
        }
        assert_eq!(
            PolicyEntry::read(
                &json!({"method": "x", "decision": "maybe", "rules": [], "resolution": "allowed"})
            ),
            None
        );
    }
}
