//! `mcptape export SESSION --format har|otlp|jsonl [-o FILE]`: the tape in another
//! tool's format ([`crate::export`]), on stdout or to a file (0600, never through a
//! symlink: it holds the tape's content).

use std::io::Write as _;

use crate::cli;
use crate::error::{Error, Result};
use crate::outcome::Outcome;
use crate::tape::{TapeError, safety};

impl cli::Export {
    /// Writes the export.
    pub fn run(self) -> Result<Outcome> {
        let tape = crate::cmd::show::load(&self.session)?;
        let text = crate::export::render(self.format, &tape);
        match &self.output {
            Some(file) => match safety::write_file(file, text.as_bytes(), 0o600) {
                Ok(()) => {}
                Err(safety::OpenError::Refused(why)) => Err(TapeError::Refused {
                    path: file.clone(),
                    why,
                })?,
                Err(safety::OpenError::Io(source)) => Err(Error::Io {
                    what: format!("cannot write the export `{}`", file.display()),
                    source,
                })?,
            },
            None => std::io::stdout()
                .lock()
                .write_all(text.as_bytes())
                .map_err(Error::Stdout)?,
        }
        Ok(Outcome::Ok)
    }
}
