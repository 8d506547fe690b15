//! Which layers a connection gets: one description ([`Stack`]) made from the command
//! line once, turned into a fresh [`Layers`] per connection by every front (the stdio
//! proxy, the HTTP front's sessions, the built-in client) over every upstream (a child,
//! a remote, the replay engine). The tap, when recording, is always first (nearest the
//! client), so that it records what the client sent and what the client was given; the
//! commit layer, when recording with commitments, is last (nearest the server), so that
//! it hashes what the server answered.

use std::sync::Arc;

use crate::cli;
use crate::commit::{CommitLayer, Commitments};
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
    /// The commitments the flags and the mode's environment ask for.
    pub commit: Option<Commitments>,
}

impl Stack {
    /// The stack the flags ask for.
    pub fn from_flags(faults: &cli::Faults, guard: &cli::Guard) -> Result<Stack> {
        Ok(Stack {
            faults: FaultPlan::load(&faults.rules, faults.file.as_deref())?.map(Arc::new),
            guard: guard.clone(),
            commit: Commitments::of(guard)?,
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
            commit: Commitments::of(guard)?,
        })
    }

    /// A fresh stack of layers for one connection: `tap` first, when recording; the
    /// commit layer last, when recording with commitments.
    pub fn layers(&self, tap: Option<TapLayer>) -> Layers {
        let commit = self.commit.filter(|_| tap.is_some()).map(CommitLayer::new);
        Layers::new()
            .push_some(tap)
            .push_some(self.faults.clone().map(FaultLayer::new))
            .push_some(commit)
    }
}
