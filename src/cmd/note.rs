//! `mcptape note SESSION TEXT...`: appends a `$note` to a tape that exists, also while a
//! recording writes to it ([`crate::tape::note`]). The words of TEXT are joined with
//! spaces; the note is redacted as a recording would be, and never sent to anyone. A
//! file whose first line is not a tape entry is not a tape, and is left alone.

use std::io::{BufRead, Read};
use std::path::Path;

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
        first_line_is_an_entry(&path)?;
        let (redactor, warnings) = Redactor::for_recording(&|name| std::env::var(name).ok());
        for w in warnings {
            crate::term::eprintln_escaped!("mcptape: warning: {w}");
        }
        note::append(&path, &text, &redactor)?;
        crate::term::eprintln_escaped!("mcptape: noted in `{}`", path.display());
        Ok(Outcome::Ok)
    }
}

/// Refuses a file that is not a tape: its first line, if it has one, must read as a tape
/// entry (a JSON object with its `_meta`). A first line still being written (no `\n`
/// yet, while a recording starts) passes when it opens a JSON object.
fn first_line_is_an_entry(path: &Path) -> Result<()> {
    let file = crate::tape::lines::open(path)?;
    let mut first = Vec::new();
    std::io::BufReader::new(file.take(crate::framing::MAX_LINE_BYTES as u64 + 1))
        .read_until(b'\n', &mut first)
        .map_err(|source| crate::error::TapeError::Read {
            path: path.to_path_buf(),
            source,
        })?;
    let terminated = first.last() == Some(&b'\n');
    let line = String::from_utf8_lossy(&first);
    let line = line.trim_ascii();
    let why = if line.is_empty() || (!terminated && line.starts_with('{')) {
        return Ok(());
    } else if !terminated {
        "its first line is not a tape entry".to_owned()
    } else {
        match crate::tape::format::decode_cut(line) {
            Ok(_) => return Ok(()),
            Err(e) => format!("its first line is not a tape entry: {e}"),
        }
    };
    Err(Error::Usage(format!(
        "`{}` is not a tape ({why}): a note goes into a tape",
        path.display()
    )))
}
