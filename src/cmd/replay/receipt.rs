//! `<session>.replay.json`: what a replay run found, left beside the tape for `view
//! --verify` and `check --fail-on diverged` ([`crate::receipt`] reads it back).
//!
//! Written once, after CMD exited and every proxy reported, 0600 like the tape (a verdict
//! quotes the tape's messages) and never through a symlink. It is a by-product: a receipt
//! that cannot be written, for any reason, is a warning and never changes the run's exit
//! status, which is the verdicts'.

use std::path::Path;

use serde_json::json;

use crate::tape::safety::{self, OpenError};
use crate::verdict::Verdict;

/// Writes the receipt of this run's `verdicts` (`<session>.replay.json` beside `tape`); a failure is printed as a warning.
pub(super) fn write(tape: &Path, verdicts: &[Verdict]) {
    let [_, path] = crate::receipt::Receipt::beside(tape);
    let receipt = json!({
        "kind": "replay",
        "tape": tape,
        "verdicts": verdicts,
    });
    let why = match safety::write_file(&path, format!("{receipt:#}\n").as_bytes(), 0o600) {
        Ok(()) => return,
        Err(OpenError::Refused(why)) => why.to_string(),
        Err(OpenError::Io(e)) => e.to_string(),
    };
    crate::term::eprintln_escaped!(
        "mcptape: warning: cannot write the receipt `{}`: {why}",
        path.display()
    );
}
