//! Whether a connection commits to its `tools/call` results, and whether the tape keeps
//! their bodies: from the flags (`--commit`, `--redact-results`, `--policy`) and from the
//! mode's environment (`MCPTAPE_COMMIT`, `MCPTAPE_REDACT_RESULTS`, `MCPTAPE_POLICY`) —
//! each variable read on its own, from our own environment when it has it, else from the
//! nearest ancestor's that decides the mode ([`crate::mode::find`]), so a proxy under
//! `mcptape record --commit` commits even when the agent between them scrubbed its
//! environment, as the faults do ([`crate::fault::env`]).
//!
//! Privacy fails closed: `MCPTAPE_REDACT_RESULTS=1` in either environment drops the
//! bodies — a proxy's own `MCPTAPE_COMMIT=0`, or a scrubbed environment without the
//! variable, cannot undo an ancestor's `record --redact-results`.

use crate::cli;
use crate::error::{Error, Result};
use crate::mode::{self, ENV_COMMIT, ENV_POLICY, ENV_REDACT_RESULTS, ModeEnv};

/// Commitments asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Commitments {
    /// `--redact-results`: the tape keeps the commitments and drops the result bodies.
    pub drop_bodies: bool,
}

impl Commitments {
    /// What the flags and the mode's environment ask for; `None`: no commitments.
    pub fn of(guard: &cli::Guard) -> Result<Option<Commitments>> {
        let own = mode::own()?;
        let ancestor = mode::find()?;
        Commitments::of_envs(guard, &own, &ancestor)
    }

    /// What the flags and one environment's variables ask for.
    #[cfg(test)]
    pub fn of_env(guard: &cli::Guard, env: &ModeEnv) -> Result<Option<Commitments>> {
        Commitments::of_envs(guard, env, env)
    }

    /// What the flags ask for, with each variable from `own` when it has it, else from
    /// `ancestor`; `MCPTAPE_REDACT_RESULTS=1` in either drops the bodies.
    pub fn of_envs(
        guard: &cli::Guard,
        own: &ModeEnv,
        ancestor: &ModeEnv,
    ) -> Result<Option<Commitments>> {
        let pick = |name: &str| {
            if own.get(name).is_some() {
                own
            } else {
                ancestor
            }
        };
        let drop_bodies = guard.redact_results
            || switch(own, ENV_REDACT_RESULTS)?
            || switch(ancestor, ENV_REDACT_RESULTS)?;
        let on = drop_bodies
            || guard.commit
            || guard.policy.is_some()
            || switch(pick(ENV_COMMIT), ENV_COMMIT)?
            || pick(ENV_POLICY).get(ENV_POLICY).is_some();
        Ok(on.then_some(Commitments { drop_bodies }))
    }
}

/// An on/off variable: `1` on, `0` or empty (or unset) off; anything else is a usage
/// error naming it.
fn switch(env: &ModeEnv, name: &str) -> Result<bool> {
    match env.get(name).map(str::trim) {
        None | Some("0") => Ok(false),
        Some("1") => Ok(true),
        Some(other) => Err(Error::Usage(format!(
            "environment variable `{name}` is `{}`: write 1 (on) or 0 (off)",
            crate::term::line(other)
        ))),
    }
}

/// The variables `mcptape record` sets for the proxies under it: `1` for each flag
/// given, `None` (left as it is) for the others.
pub fn env_vars(guard: &cli::Guard) -> [(&'static str, Option<String>); 2] {
    [
        (ENV_COMMIT, guard.commit.then(|| "1".to_owned())),
        (
            ENV_REDACT_RESULTS,
            guard.redact_results.then(|| "1".to_owned()),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::mode::Source;

    fn env(vars: &[(&str, &str)]) -> ModeEnv {
        ModeEnv {
            vars: vars
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect::<HashMap<_, _>>(),
            source: Source::Own,
            cwd: std::env::temp_dir(),
        }
    }

    #[test]
    fn flags_and_variables_turn_commitments_on() {
        let none = cli::Guard::default();
        assert_eq!(Commitments::of_env(&none, &env(&[])).expect("ok"), None);
        let on = Some(Commitments { drop_bodies: false });
        let dropped = Some(Commitments { drop_bodies: true });
        let commit = cli::Guard {
            commit: true,
            ..Default::default()
        };
        assert_eq!(Commitments::of_env(&commit, &env(&[])).expect("ok"), on);
        let redact = cli::Guard {
            redact_results: true,
            ..Default::default()
        };
        assert_eq!(
            Commitments::of_env(&redact, &env(&[])).expect("ok"),
            dropped
        );
        let policy = cli::Guard {
            policy: Some("p.toml".into()),
            ..Default::default()
        };
        assert_eq!(Commitments::of_env(&policy, &env(&[])).expect("ok"), on);
        for (vars, want) in [
            (&[(ENV_COMMIT, "1")][..], on),
            (&[(ENV_COMMIT, "0")][..], None),
            (&[(ENV_COMMIT, "")][..], None),
            (&[(ENV_REDACT_RESULTS, "1")][..], dropped),
            (&[(ENV_POLICY, "/p.toml")][..], on),
        ] {
            assert_eq!(
                Commitments::of_env(&none, &env(vars)).expect("ok"),
                want,
                "{vars:?}"
            );
        }
        let err = Commitments::of_env(&none, &env(&[(ENV_COMMIT, "yes")])).expect_err("bad");
        assert!(err.to_string().contains("MCPTAPE_COMMIT"), "{err}");
        assert_eq!(err.exit_code(), crate::error::EXIT_USAGE);
    }

    #[test]
    fn each_variable_is_read_on_its_own_and_dropping_bodies_fails_closed() {
        let none = cli::Guard::default();
        let dropped = Some(Commitments { drop_bodies: true });
        let ancestor = env(&[(ENV_REDACT_RESULTS, "1")]);
        // The reviewer's case: a scrubbed env with MCPTAPE_COMMIT=1 under
        // `record --redact-results`.
        for own in [
            env(&[(ENV_COMMIT, "1")]),
            env(&[(ENV_COMMIT, "0")]),
            env(&[]),
            env(&[(ENV_REDACT_RESULTS, "0")]),
        ] {
            assert_eq!(
                Commitments::of_envs(&none, &own, &ancestor).expect("ok"),
                dropped,
                "{:?}",
                own.vars
            );
        }
        // Commit from the ancestor when our own env does not say; our own wins for it.
        let commit = env(&[(ENV_COMMIT, "1")]);
        assert_eq!(
            Commitments::of_envs(&none, &env(&[]), &commit).expect("ok"),
            Some(Commitments { drop_bodies: false })
        );
        assert_eq!(
            Commitments::of_envs(&none, &env(&[(ENV_COMMIT, "0")]), &commit).expect("ok"),
            None
        );
    }

    #[test]
    fn record_passes_the_flags_it_was_given() {
        let guard = cli::Guard {
            redact_results: true,
            ..Default::default()
        };
        assert_eq!(
            env_vars(&guard),
            [(ENV_COMMIT, None), (ENV_REDACT_RESULTS, Some("1".into()))]
        );
    }
}
