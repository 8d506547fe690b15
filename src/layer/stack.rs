//! Which layers a connection gets: one description ([`Stack`]) made from the command
//! line once, turned into a fresh [`Layers`] per connection by every front (the stdio
//! proxy, the HTTP front's sessions, the built-in client) over every upstream (a child,
//! a remote, the replay engine). The tap, when recording, is always first (nearest the
//! client), so that it records what the client sent and what the client was given; the
//! policy gate comes next (so that the tap records the gate's answers and decisions),
//! then the faults; the commit layer, when recording with commitments, is last (nearest
//! the server), so that it hashes what the server answered.
//!
//! A replay gets no gate ([`Stack::replay_layers`]): the tape already holds what the gate
//! decided when it was recorded — a refusal is the recorded answer — and a replayed `ask`
//! must not wait for a person again.

use std::sync::Arc;

use crate::cli;
use crate::commit::{CommitLayer, Commitments};
use crate::error::Result;
use crate::fault::{FaultLayer, FaultPlan};
use crate::layer::Layers;
use crate::policy::Gate;
use crate::record::layer::TapLayer;

/// The layers asked for, below the tap.
#[derive(Debug, Clone, Default)]
pub struct Stack {
    /// The faults to inject.
    pub faults: Option<Arc<FaultPlan>>,
    /// The policy gate of this server (`--policy`, else `MCPTAPE_POLICY`), loaded.
    pub gate: Option<Arc<Gate>>,
    /// The commitments the flags and the mode's environment ask for.
    pub commit: Option<Commitments>,
}

impl Stack {
    /// The stack the flags ask for, for `server` (the policy from the mode's
    /// environment when `--policy` is not given: a gate is never left out silently).
    pub fn from_flags(faults: &cli::Faults, guard: &cli::Guard, server: &str) -> Result<Stack> {
        Ok(Stack {
            faults: FaultPlan::load(&faults.rules, faults.file.as_deref())?.map(Arc::new),
            gate: Gate::load(guard, server)?,
            commit: Commitments::of(guard)?,
        })
    }

    /// The stack the flags ask for, with the faults of the mode's environment
    /// (`MCPTAPE_FAULT`, `MCPTAPE_FAULTS`, [`crate::fault::env`]) after the flags' own:
    /// for the proxies a `record`/`replay` parent starts.
    pub fn from_flags_and_env(
        faults: &cli::Faults,
        guard: &cli::Guard,
        server: &str,
    ) -> Result<Stack> {
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
            gate: Gate::load(guard, server)?,
            commit: Commitments::of(guard)?,
        })
    }

    /// A fresh stack of layers for one connection to a live server: `tap` first, when
    /// recording, then the policy gate, then the faults; the commit layer last, when
    /// recording with commitments.
    pub fn layers(&self, tap: Option<TapLayer>) -> Layers {
        let commit = self.commit.filter(|_| tap.is_some()).map(CommitLayer::new);
        if let (Some(tap), Some(c)) = (&tap, commit.as_ref().map(|c| c.settings()))
            && c.drop_bodies
        {
            tap.drop_results();
        }
        Layers::new()
            .push_some(tap)
            .push_some(self.gate.as_ref().map(Gate::layer))
            .push_some(self.faults.clone().map(FaultLayer::new))
            .push_some(commit)
    }

    /// A fresh stack of layers in front of the replay engine: the faults, and no gate
    /// (the tape's recorded decisions are replayed as they were answered).
    pub fn replay_layers(&self) -> Layers {
        Layers::new().push_some(self.faults.clone().map(FaultLayer::new))
    }

    /// Says once on stderr, for a replay, that the policy is not applied.
    pub fn say_replay_ungated(&self) {
        if let Some(gate) = &self.gate {
            crate::term::eprintln_escaped!(
                "mcptape: replaying: the policy ({}) is not applied; the tape's recorded decisions and answers are replayed",
                gate.policy.source
            );
        }
    }
}
