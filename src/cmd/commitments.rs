//! `mcptape commitments verify|check`: a tape's `$commit` entries against answers
//! ([`crate::commit`]).

use crate::cli;
use crate::error::{Error, Result};
use crate::outcome::Outcome;

impl cli::Commitments {
    /// Verifies the tape's commitments, or checks an answer against them.
    pub fn run(self) -> Result<Outcome> {
        Err(Error::Usage("commitments: not built yet (issue 17)".into()))
    }
}
