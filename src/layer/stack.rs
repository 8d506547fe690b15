//! Which layers a connection gets: one description ([`Stack`]) made from the command
//! line once, turned into a fresh [`Layers`] per connection by every front (the stdio
//! proxy, the HTTP front's sessions, the built-in client) over every upstream (a child,
//! a remote, the replay engine). The tap, when recording, is always first (nearest the
//! client), so that it records what the client sent and what the client was given.

use std::sync::Arc;

use crate::cli;
use crate::error::Result;
use crate::fault::{FaultLayer, FaultPlan};
use crate::layer::Layers;
use crate::record::layer::TapLayer;

/// The layers asked for, below the tap.
#[derive(Debug, Clone, Default)]
pub struct Stack {
    /// The faults to inject.
    pub faults: Option<Arc<FaultPlan>>,
    /// The policy gate and commitments asked for (`--policy`, `--commit`, …), as given.
    pub guard: cli::Guard,
}

impl Stack {
    /// The stack the flags ask for.
    pub fn from_flags(faults: &cli::Faults, guard: &cli::Guard) -> Result<Stack> {
        Ok(Stack {
            faults: FaultPlan::load(&faults.rules, faults.file.as_deref())?.map(Arc::new),
            guard: guard.clone(),
        })
    }

    /// The stack the flags ask for, with the faults of the mode's environment
    /// (`MCPTAPE_FAULT`, `MCPTAPE_FAULTS`, [`crate::fault::env`]) after the flags' own:
    /// for the proxies a `record`/`replay` parent starts.
    pub fn from_flags_and_env(faults: &cli::Faults, guard: &cli::Guard) -> Result<Stack> {
        let own = FaultPlan::load(&faults.rules, faults.file.as_deref())?;
        let plan = match (own, crate::fault::env::plan()?) {
            (Some(mut own), Some(env)) => {
                own.extend(env);
                Some(own)
            }
            (own, env) => own.or(env),
        };
        Ok(Stack {
            faults: plan.map(Arc::new),
            guard: guard.clone(),
        })
    }

    /// A fresh stack of layers for one connection: `tap` first, when recording.
    pub fn layers(&self, tap: Option<TapLayer>) -> Layers {
        Layers::new()
            .push_some(tap)
            .push_some(self.faults.clone().map(FaultLayer::new))
    }
}
