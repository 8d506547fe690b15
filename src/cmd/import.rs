//! `mcptape import claude-code|codex [PATH]...`: an agent's past sessions as tapes.

use crate::cli::Import;
use crate::error::{Error, Result};
use crate::outcome::Outcome;

impl Import {
    /// Reads the transcripts and writes one tape per session.
    pub fn run(self) -> Result<Outcome> {
        Err(Error::Usage("`mcptape import` is being built".into()))
    }
}
