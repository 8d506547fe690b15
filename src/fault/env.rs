//! The rules a proxy takes from the mode's environment: `MCPTAPE_FAULT` (rules, one a
//! line) and `MCPTAPE_FAULTS` (a rules file, relative to that process's directory), set
//! by a `record`/`replay` parent for the proxies under it — read from the proxy's own
//! environment when it has them, else from the nearest ancestor's that decides the mode.

use crate::error::Result;
use crate::fault::FaultPlan;
use crate::mode::{self, ENV_FAULT, ENV_FAULTS, ModeEnv};

/// The plan the mode's environment gives; `None` when it gives no rules.
pub fn plan() -> Result<Option<FaultPlan>> {
    let own = mode::own()?;
    let env = if has_rules(&own) { own } else { mode::find()? };
    plan_of(&env)
}

fn has_rules(env: &ModeEnv) -> bool {
    env.get(ENV_FAULT).is_some() || env.get(ENV_FAULTS).is_some()
}

/// The plan of one environment's variables.
pub fn plan_of(env: &ModeEnv) -> Result<Option<FaultPlan>> {
    let rules: Vec<String> = env
        .get(ENV_FAULT)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect();
    let file = env.get(ENV_FAULTS).map(|f| env.cwd.join(f));
    FaultPlan::load_from(&rules, ENV_FAULT, file.as_deref())
}
