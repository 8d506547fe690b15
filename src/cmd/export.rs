//! `mcptape export SESSION --format har|otlp|jsonl [-o FILE]`: the tape in another
//! tool's format ([`crate::export`]), on stdout or to a file (0600, never through a
//! symlink: it holds the tape's content).

use crate::cli;
use crate::error::Result;
use crate::outcome::Outcome;

impl cli::Export {
    /// Writes the export.
    pub fn run(self) -> Result<Outcome> {
        let tape = crate::cmd::show::load(&self.session)?;
        let text = crate::export::render(self.format, &tape);
        super::write_output(
            self.output.as_deref(),
            text.as_bytes(),
            0o600,
            "the export",
            &[&tape.path],
        )?;
        Ok(Outcome::Ok)
    }
}
