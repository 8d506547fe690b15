//! `mcptape approvals`, `approve ID`, `deny ID`: the person's side of a policy's `ask`
//! ([`crate::policy::approvals`]).

use crate::cli;
use crate::error::{Error, Result};
use crate::outcome::Outcome;

impl cli::Approvals {
    /// Lists the pending calls.
    pub fn run(self) -> Result<Outcome> {
        Err(Error::Usage("approvals: not built yet (issue 17)".into()))
    }
}

impl cli::Approve {
    /// Lets a pending call through.
    pub fn run(self) -> Result<Outcome> {
        Err(Error::Usage("approve: not built yet (issue 17)".into()))
    }
}

impl cli::Deny {
    /// Refuses a pending call.
    pub fn run(self) -> Result<Outcome> {
        Err(Error::Usage("deny: not built yet (issue 17)".into()))
    }
}
