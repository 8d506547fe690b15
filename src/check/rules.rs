//! The rules a `check` command line asked for, validated before the tape is read: the
//! tool globs compiled, and at least one rule present.

use std::time::Duration;

use globset::GlobMatcher;

use super::CheckError;
use crate::cli::{Check, CheckFailOn};

/// A tool pattern: as given, and compiled.
#[derive(Debug, Clone)]
pub struct ToolGlob {
    /// The pattern as given.
    pub text: String,
    /// The pattern compiled (the policy files' glob: `*`, `?`, `[abc]`, `{a,b}`).
    pub glob: GlobMatcher,
}

/// Every rule of one check.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    /// `--server`: only these servers' connections (all when empty).
    pub servers: Vec<String>,
    /// `--expect-tool`.
    pub expect: Vec<ToolGlob>,
    /// `--forbid-tool`.
    pub forbid: Vec<ToolGlob>,
    /// `--max-calls`.
    pub max_calls: Option<usize>,
    /// `--max-duration`: the whole run.
    pub max_duration: Option<Duration>,
    /// `--max-call-duration`: any one client request.
    pub max_call_duration: Option<Duration>,
    /// `--fail-on`, each kind once, in the order given.
    pub fail_on: Vec<CheckFailOn>,
}

impl Rules {
    /// The rules of a command line; no rule at all is an error.
    pub fn of(check: &Check) -> Result<Rules, CheckError> {
        let globs = |flag: &'static str, texts: &[String]| {
            texts
                .iter()
                .map(|t| {
                    crate::policy::args::glob(t)
                        .map(|glob| ToolGlob {
                            text: t.clone(),
                            glob,
                        })
                        .map_err(|why| CheckError::Glob { flag, why })
                })
                .collect::<Result<Vec<_>, _>>()
        };
        // The same pattern twice is one rule; expected and forbidden at once is no gate.
        let dedup = |texts: &[String]| {
            let mut out: Vec<String> = Vec::new();
            for t in texts {
                if !out.contains(t) {
                    out.push(t.clone());
                }
            }
            out
        };
        let (expect, forbid) = (dedup(&check.expect_tools), dedup(&check.forbid_tools));
        if let Some(both) = expect.iter().find(|t| forbid.contains(t)) {
            return Err(CheckError::Contradiction {
                what: format!("--expect-tool `{both}` and --forbid-tool `{both}`"),
            });
        }
        if check.receipt.is_some() && !check.fail_on.contains(&CheckFailOn::Diverged) {
            return Err(CheckError::Contradiction {
                what: "--receipt is read only by --fail-on diverged, which is not given".into(),
            });
        }
        let mut fail_on: Vec<CheckFailOn> = Vec::new();
        for kind in &check.fail_on {
            if !fail_on.contains(kind) {
                fail_on.push(*kind);
            }
        }
        let rules = Rules {
            servers: check.servers.clone(),
            expect: globs("expect-tool", &expect)?,
            forbid: globs("forbid-tool", &forbid)?,
            max_calls: check.max_calls,
            max_duration: check.max_duration,
            max_call_duration: check.max_call_duration,
            fail_on,
        };
        if rules.is_empty() {
            return Err(CheckError::NoRule);
        }
        Ok(rules)
    }

    fn is_empty(&self) -> bool {
        self.expect.is_empty()
            && self.forbid.is_empty()
            && self.max_calls.is_none()
            && self.max_duration.is_none()
            && self.max_call_duration.is_none()
            && self.fail_on.is_empty()
    }
}

/// The word `--fail-on` takes for a kind.
pub fn word(kind: CheckFailOn) -> &'static str {
    match kind {
        CheckFailOn::Error => "error",
        CheckFailOn::ToolError => "tool-error",
        CheckFailOn::Invalid => "invalid",
        CheckFailOn::Diverged => "diverged",
        CheckFailOn::Truncated => "truncated",
        CheckFailOn::Fault => "fault",
        CheckFailOn::PolicyDenied => "policy-denied",
    }
}

/// A duration as the reports write it: `1.234 s`, `250 ms`.
pub fn shown(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{} ms", d.as_millis())
    } else {
        format!("{:.3} s", d.as_secs_f64())
    }
}
