//! Receipts: what a verify or replay run left beside its tape, read back for `view
//! --verify` and `check --fail-on diverged`.
//!
//! - `<session>.verify.json`, written by `verify`: what ran, the counts, and since this
//!   version every call as it came out (`calls`, verify's [`Played`]: line, class,
//!   differences with their paths).
//! - `<session>.replay.json`, written by `replay`: one [`Verdict`] per replayed
//!   connection (mismatches with their diffs, leftovers).
//!
//! A receipt is read as JSON whatever its name: `kind` says which, and a verify receipt
//! of an older version (no `kind`, no `calls`) reads with no calls. A receipt that is
//! not one of these is an error naming the file.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::verdict::Verdict;
use crate::verify::compare::Played;

/// The most bytes a receipt may have: it is read whole.
pub const MAX_RECEIPT_BYTES: u64 = 256 << 20;

/// A receipt, read.
#[derive(Debug, Clone)]
pub enum Receipt {
    /// A verify run's: every call played against the live server.
    Verify {
        /// The server verified.
        server: String,
        /// Every recorded request, played or not, in tape order.
        calls: Vec<Played>,
    },
    /// A replay run's: one verdict per replayed connection.
    Replay {
        /// The verdicts.
        verdicts: Vec<Verdict>,
    },
}

/// Why a receipt could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReceiptError {
    /// Not readable (missing, not a regular file, too big).
    #[error("cannot read the receipt `{path}`")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Not a verify or replay receipt.
    #[error("`{path}` is not a verify or replay receipt: {why}")]
    Shape {
        /// The file.
        path: PathBuf,
        /// What is wrong, for people.
        why: String,
    },
}

#[derive(Deserialize)]
struct Raw {
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    server: Option<String>,
    #[serde(default)]
    calls: Vec<Played>,
    #[serde(default)]
    verdicts: Vec<Verdict>,
    #[serde(default)]
    counts: Option<serde_json::Value>,
}

impl Receipt {
    /// Reads a receipt (never through a FIFO: opened as a tape is).
    pub fn load(path: &Path) -> Result<Receipt, ReceiptError> {
        let read = |source| ReceiptError::Read {
            path: path.to_path_buf(),
            source,
        };
        let file = crate::tape::lines::open(path)
            .map_err(|e| read(std::io::Error::other(e.to_string())))?;
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(
            &mut std::io::Read::take(file, MAX_RECEIPT_BYTES + 1),
            &mut bytes,
        )
        .map_err(read)?;
        if bytes.len() as u64 > MAX_RECEIPT_BYTES {
            return Err(read(std::io::Error::other(format!(
                "larger than {MAX_RECEIPT_BYTES} bytes"
            ))));
        }
        Receipt::parse(path, &bytes)
    }

    /// Reads a receipt's bytes (`path` only names it in errors).
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<Receipt, ReceiptError> {
        let shape = |why: String| ReceiptError::Shape {
            path: path.to_path_buf(),
            why,
        };
        let raw: Raw = serde_json::from_slice(bytes).map_err(|e| shape(e.to_string()))?;
        match raw.kind.as_deref() {
            Some("replay") => Ok(Receipt::Replay {
                verdicts: raw.verdicts,
            }),
            Some("verify") | None if raw.server.is_some() || raw.counts.is_some() => {
                Ok(Receipt::Verify {
                    server: raw.server.unwrap_or_default(),
                    calls: raw.calls,
                })
            }
            Some(other) => Err(shape(format!("unknown kind `{other}`"))),
            None => Err(shape("no `kind`, `server` or `counts`".into())),
        }
    }

    /// Where `verify` and `replay` leave their receipts for `tape`:
    /// `<session>.verify.json` and `<session>.replay.json`, beside it.
    pub fn beside(tape: &Path) -> [PathBuf; 2] {
        let name = tape
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let stem = name.strip_suffix(".ndjson").unwrap_or(&name).to_owned();
        [
            tape.with_file_name(format!("{stem}.verify.json")),
            tape.with_file_name(format!("{stem}.replay.json")),
        ]
    }

    /// The tape lines this receipt says diverged: a verify call that changed, became or
    /// stopped being an error, or was not played because the server was gone (its
    /// request's line); a replay mismatch or leftover.
    pub fn diverged_lines(&self) -> Vec<usize> {
        use crate::verify::compare::Class;
        match self {
            Receipt::Verify { calls, .. } => calls
                .iter()
                .filter(|c| {
                    matches!(
                        c.class,
                        Class::Changed | Class::NewError | Class::GoneError | Class::NotPlayed
                    )
                })
                .map(|c| c.line)
                .collect(),
            Receipt::Replay { verdicts } => verdicts
                .iter()
                .flat_map(|v| {
                    v.mismatch
                        .iter()
                        .filter_map(|m| m.line)
                        .chain(v.leftovers.iter().map(|l| l.line))
                })
                .collect(),
        }
    }

    /// What this receipt says failed at no tape line, one sentence each: a replay
    /// client that sent past the tape's end, a cut recording the client outran, anything
    /// else replay found wrong (garbage from the client, no connection to serve).
    pub fn unplaced(&self) -> Vec<String> {
        let Receipt::Replay { verdicts } = self else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for v in verdicts {
            if let Some(m) = v.mismatch.as_ref().filter(|m| m.line.is_none()) {
                out.push(format!(
                    "server `{}`: the client sent {} past the tape's end",
                    v.server, m.got
                ));
            }
            if let Some(end) = &v.tape_end {
                out.push(format!("server `{}`: {end}", v.server));
            }
            out.extend(
                v.problems
                    .iter()
                    .map(|p| format!("server `{}`: {p}", v.server)),
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verify_receipt_reads_back_with_calls_that_have_no_differences() {
        // verify leaves `differences` out of a call that is the same.
        let same = br#"{"kind":"verify","server":"s","calls":[{"server":"s","conn":"c","line":5,"method":"tools/call","tool":"echo","class":"same"},{"server":"s","conn":"c","line":7,"method":"tools/list","class":"changed","differences":[{"path":"result","old":1,"new":2}]}]}"#;
        let r = Receipt::parse(Path::new("r.json"), same).expect("verify's own receipt");
        assert_eq!(r.diverged_lines(), [7]);
    }

    #[test]
    fn both_kinds_and_the_older_verify_receipt_read() {
        let p = Path::new("r.json");
        let old = br#"{"tape":"t","server":"s","command":"c","counts":{"same":1}}"#;
        assert!(
            matches!(Receipt::parse(p, old), Ok(Receipt::Verify { calls, .. }) if calls.is_empty())
        );
        let replay = br#"{"kind":"replay","verdicts":[{"server":"s","conn":"c","matched":1,"answered":1,"mismatch":{"line":4,"expected":"a","got":"b","diff":"-a\n+b","later_line":null},"leftovers":[{"line":9,"summary":"x"}],"problems":[]}]}"#;
        let r = Receipt::parse(p, replay).expect("a replay receipt");
        assert_eq!(r.diverged_lines(), [4, 9]);
        let err = Receipt::parse(p, b"[1]").expect_err("not a receipt");
        assert!(err.to_string().contains("r.json"), "{err}");
        let err = Receipt::parse(p, br#"{"kind":"x"}"#).expect_err("unknown kind");
        assert!(err.to_string().contains("unknown kind"), "{err}");
    }
}
