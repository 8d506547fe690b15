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
        // The receipt first: a bad one is a usage error before anything is loaded.
        let receipt = self.verify.as_deref().map(load_receipt).transpose()?;
        let tape = super::show::load(&self.session)?;
        let out = self.output.clone().unwrap_or_else(|| beside(&tape.path));
        let page = crate::view::render(&tape, receipt.as_ref());
        super::write_file(&out, page.as_bytes(), 0o600, "the page")?;
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

fn load_receipt(path: &Path) -> Result<Receipt> {
    Receipt::load(path).map_err(|e| match e {
        ReceiptError::Read { source, .. } => Error::Io {
            what: format!("cannot read the receipt `{}` (--verify)", path.display()),
            source,
        },
        shape @ ReceiptError::Shape { .. } => Error::Usage(format!("--verify: {shape}")),
    })
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
