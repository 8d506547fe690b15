//! The rule language: a [`Policy`] is a `default` decision and [`Rule`]s in file order;
//! [`Policy::decide`] gives the first rule whose matchers all match a [`Call`], else the
//! default. The file format is [`crate::policy::file`]'s; the semantics are in
//! docs/POLICY.md (the decision table).
//!
//! Only `tools/call` is gated, and any method a rule names (`method`); every other
//! message is not gated ([`Policy::decide`] gives `None`).

use globset::GlobMatcher;
use serde_json::Value;

use crate::policy::args::{ArgPath, ArgTest};
use crate::policy::index::{Hint, ToolInfo};
use crate::tape::policy::Decision;

/// The method every policy gates.
pub const TOOLS_CALL: &str = "tools/call";

/// The word a refusal names when the file's `default` decided.
pub const DEFAULT_RULE: &str = "default";

/// A policy: the rules of one file.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Where it came from, for messages (`--policy `p.toml``).
    pub source: String,
    /// What applies when no rule matches.
    pub default: Decision,
    /// The rules, in file order.
    pub rules: Vec<Rule>,
}

/// A list of globs: one of them matches.
#[derive(Debug, Clone)]
pub struct Globs(pub Vec<(String, GlobMatcher)>);

impl Globs {
    /// True when one of the globs matches `text`.
    pub fn matches(&self, text: &str) -> bool {
        self.0.iter().any(|(_, g)| g.is_match(text))
    }
}

/// One `[[rule]]`: its decision, and matchers that must all match.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Its id (unique in the file).
    pub id: String,
    /// Its line in the file.
    pub line: usize,
    /// What it decides.
    pub decision: Decision,
    /// `server`: the server's name; `None`: any.
    pub server: Option<Globs>,
    /// `tool`: the `params.name` (a tool; a prompt for `prompts/get`); `None`: any.
    pub tool: Option<Globs>,
    /// `method`; `None`: `tools/call`.
    pub method: Option<Globs>,
    /// `args`: tests of the values at JSON paths into the arguments (a `tools/call`'s
    /// `params.arguments`, another method's `params`).
    pub args: Vec<(ArgPath, Vec<ArgTest>)>,
    /// `annotations`: hints the tool must have (the spec's defaults for an unsaid one).
    pub annotations: Vec<(Hint, bool)>,
    /// `listed`: whether the server must have listed the tool (`tools/list`).
    pub listed: Option<bool>,
}

/// What the gate knows of one client message.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    /// The server's name.
    pub server: &'a str,
    /// The method.
    pub method: &'a str,
    /// `params.name`, when it is a string.
    pub tool: Option<&'a str>,
    /// `params.arguments` for a `tools/call`, `params` for another method (`null` when
    /// absent).
    pub arguments: &'a Value,
    /// What the server's listing said of the tool; `None`: it never listed it.
    pub listed: Option<&'a ToolInfo>,
}

/// What the rules decided on a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ruling {
    /// The decision.
    pub decision: Decision,
    /// The id of the rule that decided; empty when the file's `default` did.
    pub rules: Vec<String>,
}

impl Ruling {
    /// The rule ids a refusal names: comma-separated, or `default`.
    pub fn named(&self) -> String {
        if self.rules.is_empty() {
            DEFAULT_RULE.to_owned()
        } else {
            self.rules.join(", ")
        }
    }
}

impl Rule {
    /// The methods this rule is about.
    fn method_matches(&self, method: &str) -> bool {
        match &self.method {
            Some(globs) => globs.matches(method),
            None => method == TOOLS_CALL,
        }
    }

    /// True when every matcher matches `call`.
    pub fn matches(&self, call: &Call<'_>) -> bool {
        if !self.method_matches(call.method) {
            return false;
        }
        if self
            .server
            .as_ref()
            .is_some_and(|g| !g.matches(call.server))
        {
            return false;
        }
        if let Some(globs) = &self.tool
            && !call.tool.is_some_and(|t| globs.matches(t))
        {
            return false;
        }
        // Annotations and listings are of tools: only a tools/call has them.
        let is_call = call.method == TOOLS_CALL;
        if !self.annotations.is_empty() || self.listed.is_some() {
            if !is_call {
                return false;
            }
            if self
                .listed
                .is_some_and(|want| want != call.listed.is_some())
            {
                return false;
            }
            if !self
                .annotations
                .iter()
                .all(|&(hint, want)| ToolInfo::hint(call.listed, hint) == want)
            {
                return false;
            }
        }
        self.args.iter().all(|(path, tests)| {
            let found = path.select(call.arguments);
            tests.iter().all(|t| t.passes(&found))
        })
    }
}

impl Policy {
    /// True when messages of `method` are gated: `tools/call`, and any a rule names.
    pub fn gates(&self, method: &str) -> bool {
        method == TOOLS_CALL
            || self
                .rules
                .iter()
                .any(|r| r.method.as_ref().is_some_and(|g| g.matches(method)))
    }

    /// The first matching rule's decision, else the default's; `None` when the call's
    /// method is not gated.
    pub fn decide(&self, call: &Call<'_>) -> Option<Ruling> {
        if !self.gates(call.method) {
            return None;
        }
        Some(match self.rules.iter().find(|r| r.matches(call)) {
            Some(rule) => Ruling {
                decision: rule.decision,
                rules: vec![rule.id.clone()],
            },
            None => Ruling {
                decision: self.default,
                rules: Vec::new(),
            },
        })
    }

    /// True when some call may be held for a person (a rule or the default says `ask`).
    pub fn can_ask(&self) -> bool {
        self.default == Decision::Ask || self.rules.iter().any(|r| r.decision == Decision::Ask)
    }
}
