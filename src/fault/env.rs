//! The rules a proxy takes from the mode's environment: `MCPTAPE_FAULT` (a JSON array of
//! rule texts, or one a line) and `MCPTAPE_FAULTS` (a rules file, relative to that process's directory), set
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
    let value = env.get(ENV_FAULT).unwrap_or_default();
    // What `record`/`replay` set is a JSON array of rules; by hand, one rule a line.
    let rules: Vec<String> = match serde_json::from_str::<Vec<String>>(value.trim()) {
        Ok(rules) if value.trim_start().starts_with('[') => rules,
        _ => value
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_owned)
            .collect(),
    };
    let file = env.get(ENV_FAULTS).map(|f| env.cwd.join(f));
    FaultPlan::load_from(&rules, ENV_FAULT, file.as_deref())
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::plan_of;
    use crate::mode::{ENV_FAULT, ModeEnv, Source};

    fn env(value: &str) -> ModeEnv {
        ModeEnv {
            vars: HashMap::from([(ENV_FAULT.to_owned(), value.to_owned())]),
            source: Source::Own,
            cwd: std::env::temp_dir(),
        }
    }

    #[test]
    fn a_rule_with_a_newline_reaches_the_proxies_whole() {
        // Found by review: rules joined by newlines came apart at a message's newline.
        let flags = crate::cli::Faults {
            rules: vec![
                "tools/call: tool-error \"line1\nline2\"".to_owned(),
                "tools/list: timeout".to_owned(),
            ],
            file: None,
        };
        let [(_, value), _] = crate::fault::env_vars(&flags).expect("vars");
        let plan = plan_of(&env(&value.expect("set")))
            .expect("parses")
            .expect("rules");
        assert_eq!(plan.rule_count(), 2);
        // By hand, one rule a line still works.
        let plan = plan_of(&env("tools/list: timeout\n* nth=1: drop\n"))
            .expect("parses")
            .expect("rules");
        assert_eq!(plan.rule_count(), 2);
    }
}
