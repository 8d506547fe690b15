//! `mcptape install` and `mcptape uninstall`: wrap the servers of agents' configs with
//! `mcptape proxy`, and restore them.

use crate::cli::{Install, Uninstall};
use crate::error::{Error, Result};
use crate::outcome::Outcome;

impl Install {
    /// Wraps the chosen agents' server entries (or lists them, with `--list`).
    pub fn run(self) -> Result<Outcome> {
        Err(Error::Usage("`mcptape install` is being built".into()))
    }
}

impl Uninstall {
    /// Restores the wrapped entries of the chosen agents' configs.
    pub fn run(self) -> Result<Outcome> {
        Err(Error::Usage("`mcptape uninstall` is being built".into()))
    }
}
