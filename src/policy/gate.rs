//! The gate of one server: its policy, its tool index, how long an `ask` waits and the
//! desk it waits on — made once per command ([`crate::layer::Stack`]), shared by every
//! connection's [`PolicyLayer`].
//!
//! The policy comes from `--policy`, else from `MCPTAPE_POLICY` in the mode's
//! environment (this process's own, else the nearest `record`/`replay` ancestor's, as
//! the faults do: [`crate::fault::env`]), a relative path read from that process's
//! directory. A file that cannot be read or parsed is an error before any server starts,
//! whichever way it was given: never a silent allow.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::cli;
use crate::error::{Error, Result};
use crate::mode::{self, ENV_APPROVAL_TIMEOUT, ENV_POLICY, ModeEnv};
use crate::policy::approvals::Desk;
use crate::policy::index::ToolIndex;
use crate::policy::layer::PolicyLayer;
use crate::policy::rule::Policy;

/// How long an `ask` waits for a person when no flag or variable says.
pub const DEFAULT_APPROVAL_TIMEOUT: Duration = Duration::from_secs(300);

/// One server's gate.
#[derive(Debug)]
pub struct Gate {
    /// The rules.
    pub policy: Policy,
    /// The server's name (what `server` rules match, the tape's `server`).
    pub server: String,
    /// The tools the server listed, shared by all connections.
    pub index: ToolIndex,
    /// How long an `ask` waits (`0`: refused at once).
    pub timeout: Duration,
    /// Where an `ask` waits; `None` when nothing can be held (no `ask`, or a timeout of 0).
    pub desk: Option<Desk>,
}

impl Gate {
    /// The gate `guard` and the mode's environment ask for, for `server`; `None` when
    /// there is no policy.
    pub fn load(guard: &cli::Guard, server: &str) -> Result<Option<Arc<Gate>>> {
        let (path, from, env) = match &guard.policy {
            Some(path) => (path.clone(), "--policy", None),
            None => {
                let env = environment(ENV_POLICY)?;
                match env.get(ENV_POLICY).filter(|p| !p.is_empty()) {
                    Some(p) => (env.cwd.join(p), ENV_POLICY, Some(env)),
                    None => return Ok(None),
                }
            }
        };
        let policy = Policy::load_from(&path, from)?;
        let timeout = match guard.approval_timeout {
            Some(t) => t,
            None => timeout_of(&match env {
                Some(env) if env.get(ENV_APPROVAL_TIMEOUT).is_some() => env,
                _ => environment(ENV_APPROVAL_TIMEOUT)?,
            })?,
        };
        let desk = if policy.can_ask() && !timeout.is_zero() {
            Some(Desk::open()?)
        } else {
            None
        };
        Ok(Some(Arc::new(Gate {
            policy,
            server: server.to_owned(),
            index: ToolIndex::new(),
            timeout,
            desk,
        })))
    }

    /// A layer for one connection.
    pub fn layer(self: &Arc<Self>) -> PolicyLayer {
        PolicyLayer::new(Arc::clone(self))
    }
}

/// The environment that holds `var`: ours when it does, else the mode's (the nearest
/// `record`/`replay` ancestor's).
fn environment(var: &str) -> Result<ModeEnv> {
    let own = mode::own()?;
    if own.get(var).is_some() {
        return Ok(own);
    }
    mode::find()
}

/// `MCPTAPE_APPROVAL_TIMEOUT` of `env` (seconds, or `30s`, `5m`), else the default.
fn timeout_of(env: &ModeEnv) -> Result<Duration> {
    match env
        .get(ENV_APPROVAL_TIMEOUT)
        .filter(|v| !v.trim().is_empty())
    {
        None => Ok(DEFAULT_APPROVAL_TIMEOUT),
        Some(v) => crate::duration::parse(v).map_err(|e| {
            Error::Usage(crate::term::line(&format!("{ENV_APPROVAL_TIMEOUT}: {e}")).into_owned())
        }),
    }
}

/// The variables `record --policy F --approval-timeout S` hands the proxies under it
/// (`F` made absolute, after checking it loads, so that a bad file fails before CMD
/// runs). A flag not given is `None`: CMD keeps what it inherits (a policy exported
/// around `record` still applies: never a silent allow).
pub fn env_vars(guard: &cli::Guard) -> Result<[(&'static str, Option<String>); 2]> {
    let policy = match &guard.policy {
        Some(path) => {
            Policy::load(path)?;
            let abs: PathBuf = std::path::absolute(path).map_err(|source| Error::Io {
                what: format!("cannot resolve --policy `{}`", path.display()),
                source,
            })?;
            Some(abs.to_string_lossy().into_owned())
        }
        None => None,
    };
    let timeout = guard.approval_timeout.map(|t| {
        if t.subsec_nanos() == 0 {
            t.as_secs().to_string()
        } else {
            format!("{}ms", t.as_millis())
        }
    });
    Ok([(ENV_POLICY, policy), (ENV_APPROVAL_TIMEOUT, timeout)])
}
