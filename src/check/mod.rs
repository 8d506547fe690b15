//! `mcptape check`: rules evaluated over a recorded run, for a CI gate.
//!
//! - [`rules`]: the rules a command line asked for, validated before anything is read.
//! - [`eval`]: each rule run over the tape's exchanges ([`crate::exchange::Exchanges`])
//!   and lifecycle entries, giving one [`Verdict`] per rule with its findings, each
//!   naming its tape line.
//! - [`report`]: the verdicts as text, JSON, JUnit XML or GitHub workflow commands.
//!
//! Scope: the connections of the `--server`s given (all when none), and for the
//! whole-run rules (`--max-duration`) their entries; notes belong to no connection and
//! count only when no `--server` narrows the scope. Only client requests count as calls
//! (`--expect-tool`, `--forbid-tool`, `--max-calls`, `--max-call-duration`) and as
//! `error` / `tool-error` answers: a server's own requests (sampling, roots, elicitation)
//! are answered by the client, whose errors say nothing of the server's health.

pub mod eval;
pub mod report;
pub mod rules;

use serde::Serialize;

/// One offending thing a rule found: where it is on the tape and what it is.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// The tape line (1-based), when the finding has one.
    pub line: Option<usize>,
    /// The connection's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conn: Option<String>,
    /// The request's id (raw JSON), for a finding about an exchange.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The tool, for a `tools/call`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// What it is, for people (text from the tape, escaped where it is printed).
    pub message: String,
}

/// What one rule came to.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    /// The rule, as its flag names it: `forbid-tool`, `fail-on`, `max-calls`…
    pub rule: &'static str,
    /// Its argument as given: `delete_*`, `error`, `20`, `30s`.
    pub arg: String,
    /// True when the rule holds.
    pub pass: bool,
    /// How many things it counted (calls, matches, offending entries).
    pub count: usize,
    /// A one-line summary: what was counted, against what limit.
    pub summary: String,
    /// The offending entries (every one; the text report shows the first few).
    pub findings: Vec<Finding>,
}

impl Verdict {
    /// `forbid-tool delete_*`: the rule and its argument.
    pub fn title(&self) -> String {
        format!("{} {}", self.rule, self.arg)
    }
}

/// Why a check could not be run (usage errors: exit 2).
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// No rule was given: a gate that checks nothing must not pass.
    #[error(
        "no rule to check: give --expect-tool, --forbid-tool, --max-calls, --max-duration, --max-call-duration or --fail-on"
    )]
    NoRule,
    /// Flags that cannot hold together.
    #[error("{what}")]
    Contradiction {
        /// Which, and why.
        what: String,
    },
    /// A `--expect-tool` / `--forbid-tool` pattern that is not a glob.
    #[error("--{flag}: {why}")]
    Glob {
        /// The flag.
        flag: &'static str,
        /// Why, naming the pattern.
        why: String,
    },
    /// A duration rule on a tape whose entries have no time.
    #[error(
        "--{flag} needs times, and no entry of `{tape}` in scope has one (`_meta.ts`): it cannot be checked"
    )]
    NoTimes {
        /// The flag.
        flag: &'static str,
        /// The tape.
        tape: String,
    },
    /// `--fail-on diverged` with no receipt anywhere.
    #[error(
        "--fail-on diverged needs a verify or replay receipt, and there is none: looked for {looked}; run `mcptape verify` or `mcptape replay` first, or give --receipt FILE"
    )]
    NoReceipt {
        /// The paths looked for, quoted.
        looked: String,
    },
    /// A `--server` that names no connection of the tape.
    #[error("--server `{server}`: `{tape}` has no connection of that server (it has: {known})")]
    NoServer {
        /// The name given.
        server: String,
        /// The tape.
        tape: String,
        /// The servers it has.
        known: String,
    },
}
