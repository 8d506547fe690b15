//! `mcptape note SESSION TEXT...`: appends a `$note` to a tape that exists, also while a
//! recording writes to it ([`crate::tape::note`]). The words of TEXT are joined with
//! spaces; the note is redacted as a recording would be, and never sent to anyone.

use crate::cli;
use crate::error::{Error, Result};
use crate::mode;
use crate::outcome::Outcome;
use crate::redact::Redactor;
use crate::tape::note;

impl cli::Note {
    /// Appends the note; says on stderr where it went.
    pub fn run(self) -> Result<Outcome> {
        let text = self.text.join(" ");
        note::check(&text).map_err(|e| Error::Usage(format!("invalid note: {e}")))?;
        let path = mode::session_path(&self.session)?;
        // A note goes into a tape that exists: a mistyped session name must not leave a
        // tape holding only a note.
        match std::fs::symlink_metadata(&path) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::Usage(format!(
                    "no tape `{}`: a note goes into a tape that exists (record it first, or \
                     give `record --note`)",
                    path.display()
                )));
            }
            Err(source) => {
                return Err(crate::error::TapeError::Read { path, source }.into());
            }
        }
        let (redactor, warnings) = Redactor::for_recording(&|name| std::env::var(name).ok());
        for w in warnings {
            crate::term::eprintln_escaped!("mcptape: warning: {w}");
        }
        note::append(&path, &text, &redactor)?;
        crate::term::eprintln_escaped!("mcptape: noted in `{}`", path.display());
        Ok(Outcome::Ok)
    }
}
