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
use crate::layer::Layer;

/// The fault rules of one run, parsed and checked.
#[derive(Debug, Clone, Default)]
pub struct FaultPlan {
    /// The rules as given, in order.
    rules: Vec<String>,
}

impl FaultPlan {
    /// The plan of `rules` (command-line syntax) and `file`; `None` when there are none.
    /// A bad rule is a usage error naming the rule and its bad part.
    pub fn load(rules: &[String], file: Option<&Path>) -> Result<Option<FaultPlan>> {
        if rules.is_empty() && file.is_none() {
            return Ok(None);
        }
        Err(Error::Usage(
            "--fault and --faults are not available in this build yet".into(),
        ))
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
            (!flags.rules.is_empty()).then(|| flags.rules.join("\n")),
        ),
        (
            crate::mode::ENV_FAULTS,
            file.map(|f| f.to_string_lossy().into_owned()),
        ),
    ])
}

/// The layer that injects a plan's faults into one connection.
pub struct FaultLayer {
    plan: std::sync::Arc<FaultPlan>,
}

impl FaultLayer {
    /// A layer applying `plan` (its counters are this connection's own).
    pub fn new(plan: std::sync::Arc<FaultPlan>) -> FaultLayer {
        FaultLayer { plan }
    }
}

impl Layer for FaultLayer {
    fn reads_first(&self) -> bool {
        !self.plan.rules.is_empty()
    }
}
