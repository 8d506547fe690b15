//! `mcptape note SESSION TEXT`: a `$note` appended to a tape (issue 18, being built).

use crate::cli;
use crate::error::{Error, Result};
use crate::outcome::Outcome;

impl cli::Note {
    /// Not built yet.
    pub fn run(self) -> Result<Outcome> {
        Err(Error::Usage("`mcptape note` is not built yet".into()))
    }
}
