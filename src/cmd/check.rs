//! `mcptape check SESSION`: a CI gate on a recorded run (issue 18, being built).

use crate::cli;
use crate::error::{Error, Result};
use crate::outcome::Outcome;

impl cli::Check {
    /// Not built yet.
    pub fn run(self) -> Result<Outcome> {
        Err(Error::Usage("`mcptape check` is not built yet".into()))
    }
}
