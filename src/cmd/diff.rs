//! `mcptape diff A B`: two tapes' (or a tape's and a live server's) lists and answers compared (issue 18, being built).

use crate::cli;
use crate::error::{Error, Result};
use crate::outcome::Outcome;

impl cli::Diff {
    /// Not built yet.
    pub fn run(self) -> Result<Outcome> {
        Err(Error::Usage("`mcptape diff` is not built yet".into()))
    }
}
