//! `mcptape view SESSION [-o FILE.html] [--open] [--verify RECEIPT]`: a tape as one
//! self-contained HTML page ([`crate::view`]), written 0600 (it holds the tape's content)
//! and never through a symlink, its path printed on stderr.

use std::path::{Path, PathBuf};

use crate::cli;
use crate::error::{Error, Result};
use crate::outcome::Outcome;
use crate::receipt::{Receipt, ReceiptError};

impl cli::View {
    /// Writes the page; with `--open`, opens it.
    pub fn run(self) -> Result<Outcome> {
        // The receipt first: a bad one is a usage error before the tape is loaded.
        let receipt = match self.verify.as_deref() {
            Some(path) => Some((
                path,
                Receipt::load(path).map_err(|e| receipt_error(path, e))?,
            )),
            None => None,
        };
        let tape = super::show::load(&self.session)?;
        if let Some((path, r)) = &receipt {
            r.check_tape(path, &tape)
                .map_err(|e| receipt_error(path, e))?;
        }
        let receipt = receipt.map(|(_, r)| r);
        let out = self.output.clone().unwrap_or_else(|| beside(&tape.path));
        let page = crate::view::render(&tape, receipt.as_ref());
        super::write_file(&out, page.as_bytes(), 0o600, "the page", &[&tape.path])?;
        crate::term::eprintln_escaped!("mcptape: wrote {}", out.display());
        if self.open {
            open(&out);
        }
        Ok(Outcome::Ok)
    }
}

/// `<session>.html` beside the tape.
fn beside(tape: &Path) -> PathBuf {
    let name = tape
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".ndjson").unwrap_or(&name);
    tape.with_file_name(format!("{stem}.html"))
}

fn receipt_error(path: &Path, e: ReceiptError) -> Error {
    match e {
        ReceiptError::Read { source, .. } => Error::Io {
            what: format!("cannot read the receipt `{}` (--verify)", path.display()),
            source,
        },
        other => Error::Usage(format!("--verify: {other}")),
    }
}

/// Starts the system's opener on the page, detached; a failure is a warning (the page is
/// written either way).
fn open(page: &Path) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let started = std::process::Command::new(opener)
        .arg(page)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = started {
        crate::term::eprintln_escaped!(
            "mcptape: warning: cannot open the page with `{opener}`: {e} (it is written: {})",
            page.display()
        );
    }
}
