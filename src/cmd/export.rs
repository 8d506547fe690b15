//! `mcptape export SESSION --format har|otlp|jsonl` (issue 18, being built).

use crate::cli;
use crate::error::{Error, Result};
use crate::outcome::Outcome;

impl cli::Export {
    /// Not built yet.
    pub fn run(self) -> Result<Outcome> {
        Err(Error::Usage("`mcptape export` is not built yet".into()))
    }
}
