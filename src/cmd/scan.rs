//! `mcptape scan`: the sessions agents kept, with their MCP calls per server.

use crate::cli::Scan;
use crate::error::{Error, Result};
use crate::outcome::Outcome;

impl Scan {
    /// Lists the sessions found (and imports them with `--import`).
    pub fn run(self) -> Result<Outcome> {
        Err(Error::Usage("`mcptape scan` is being built".into()))
    }
}
