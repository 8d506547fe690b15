//! Fault injection: rules that pick messages (by method, tool name, occurrence or a seeded
//! probability) and an effect for each (a JSON-RPC error, a tool error, a delay, no
//! answer, a dropped notification, a malformed line, the server going away, a slow
//! stream), applied by one layer ([`FaultLayer`]) on every front and upstream alike.
//!
//! Rules come from `--fault RULE` (repeatable) and `--faults FILE` (JSON or TOML), or,
//! for the proxies under `record`/`replay`, from `MCPTAPE_FAULT` / `MCPTAPE_FAULTS`.
//! Every fault injected is told to the layers nearer the client as a `$fault` event
//! ([`crate::layer::Layer::events`]), so the tap records it next to what it changed.

use std::path::Path;

use crate::error::{Error, Result};

pub mod env;
pub mod file;
pub mod layer;
pub mod rule;

pub use layer::FaultLayer;
pub use rule::{Effect, Rule, Selector};

/// The most rules one run takes.
pub const MAX_RULES: usize = 10_000;

/// The fault rules of one run, parsed and checked.
#[derive(Debug, Clone, Default)]
pub struct FaultPlan {
    /// The rules: the flags' first, then the file's; numbered from 1 in this order.
    pub rules: Vec<Rule>,
}

impl Rule {
    /// The seed of this rule's draws (`seed=`, or the one drawn when the plan was loaded).
    pub fn seed(&self) -> u64 {
        self.selector.seed.unwrap_or(0)
    }
}

impl FaultPlan {
    /// How many rules the plan has (for tests).
    #[cfg(test)]
    pub fn rule_count(&self) -> usize {
        self.rules.len()
    }

    /// The plan of `rules` (command-line syntax) and `file`; `None` when there are none.
    /// A bad rule is a usage error naming the rule and its bad part.
    pub fn load(rules: &[String], file: Option<&Path>) -> Result<Option<FaultPlan>> {
        FaultPlan::load_from(rules, "--fault", file)
    }

    /// As [`FaultPlan::load`], the rules' source named `from` in errors (`--fault`,
    /// `MCPTAPE_FAULT`).
    pub fn load_from(
        rules: &[String],
        from: &str,
        file: Option<&Path>,
    ) -> Result<Option<FaultPlan>> {
        let mut plan = FaultPlan::default();
        plan.add_texts(rules, from)?;
        if let Some(path) = file {
            for (sel, effect, text) in file::load(path)? {
                plan.push(text, sel, effect)?;
            }
        }
        Ok((!plan.rules.is_empty()).then_some(plan))
    }

    /// Adds rules in their command-line syntax, from `from` (named in errors).
    pub fn add_texts(&mut self, rules: &[String], from: &str) -> Result<()> {
        for (n, text) in rules.iter().enumerate() {
            let (sel, effect) = rule::parse(text).map_err(|e| {
                let what = format!("{from} rule {} `{text}`: {e}", n + 1);
                Error::Usage(crate::term::line(&what).into_owned())
            })?;
            self.push(text.clone(), sel, effect)?;
        }
        Ok(())
    }

    /// Adds one checked rule, numbering it; a `p=` without `seed=` gets a seed drawn now.
    fn push(&mut self, text: String, mut selector: Selector, effect: Effect) -> Result<()> {
        if self.rules.len() >= MAX_RULES {
            return Err(Error::Usage(format!(
                "too many fault rules: at most {MAX_RULES}"
            )));
        }
        if selector.p.is_some() && selector.seed.is_none() {
            let mut bytes = [0u8; 8];
            // No randomness at hand: seed 0, still a valid (and reproducible) plan.
            let _ = getrandom::fill(&mut bytes);
            selector.seed = Some(u64::from_le_bytes(bytes) >> 11);
        }
        self.rules.push(Rule {
            index: self.rules.len() + 1,
            text,
            selector,
            effect,
        });
        Ok(())
    }

    /// Adds `other`'s rules after these, numbered on.
    pub fn extend(&mut self, other: FaultPlan) {
        for rule in other.rules {
            let index = self.rules.len() + 1;
            self.rules.push(Rule { index, ..rule });
        }
    }
}

/// The variables that hand `flags`' rules to the proxies under a `record`/`replay`
/// parent ([`crate::mode::ENV_FAULT`], [`crate::mode::ENV_FAULTS`], the file's absolute
/// path), after checking them here so that a bad rule fails before CMD runs. Unset ones
/// are `None`: the parent removes them from CMD's environment.
pub fn env_vars(flags: &crate::cli::Faults) -> Result<[(&'static str, Option<String>); 2]> {
    FaultPlan::load(&flags.rules, flags.file.as_deref())?;
    let file = match &flags.file {
        Some(f) => Some(std::path::absolute(f).map_err(|source| Error::Io {
            what: format!("cannot resolve --faults `{}`", f.display()),
            source,
        })?),
        None => None,
    };
    Ok([
        (
            crate::mode::ENV_FAULT,
            // A JSON array, so that a rule may hold a newline (in its message).
            (!flags.rules.is_empty())
                .then(|| serde_json::Value::from(flags.rules.clone()).to_string()),
        ),
        (
            crate::mode::ENV_FAULTS,
            file.map(|f| f.to_string_lossy().into_owned()),
        ),
    ])
}
