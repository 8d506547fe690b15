//! `mcptape view SESSION`: a tape as one self-contained HTML page (issue 18, being built).

use crate::cli;
use crate::error::{Error, Result};
use crate::outcome::Outcome;

impl cli::View {
    /// Not built yet.
    pub fn run(self) -> Result<Outcome> {
        Err(Error::Usage("`mcptape view` is not built yet".into()))
    }
}
