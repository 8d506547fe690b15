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
//!
//! [`Receipt::load_for`] also checks that the receipt was made for the tape it is shown
//! with: its `tape` is that file, and each server it names is on the tape. A receipt
//! with no `tape` (an older one) is taken at its word.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::tape::{Tape, TapeError};
use crate::verdict::Verdict;
use crate::verify::compare::Played;

/// The most bytes a receipt may have: it is read whole.
pub const MAX_RECEIPT_BYTES: u64 = 256 << 20;

/// A receipt, read.
#[derive(Debug, Clone)]
pub enum Receipt {
    /// A verify run's: every call played against the live server.
    Verify {
        /// The tape it was made for, when it says.
        tape: Option<PathBuf>,
        /// The server verified.
        server: String,
        /// Every recorded request, played or not, in tape order.
        calls: Vec<Played>,
    },
    /// A replay run's: one verdict per replayed connection.
    Replay {
        /// The tape it was made for, when it says.
        tape: Option<PathBuf>,
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
    /// Made for another tape.
    #[error("the receipt `{path}` is not of the tape `{tape}`: {why}")]
    OtherTape {
        /// The receipt.
        path: PathBuf,
        /// The tape it is shown with.
        tape: PathBuf,
        /// What differs, for people.
        why: String,
    },
}

#[derive(Deserialize)]
struct Raw {
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    tape: Option<PathBuf>,
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
        // Opened as a tape is; its errors say "tape", so only their cause is kept.
        let file = crate::tape::lines::open(path).map_err(|e| {
            read(match e {
                TapeError::Missing { .. } => {
                    std::io::Error::new(std::io::ErrorKind::NotFound, "no such file")
                }
                TapeError::Read { source, .. } => source,
                other => std::io::Error::other(other.to_string()),
            })
        })?;
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

    /// Reads the receipt at `path` and checks that it was made for `tape`
    /// ([`Receipt::check_tape`]).
    pub fn load_for(path: &Path, tape: &Tape) -> Result<Receipt, ReceiptError> {
        let receipt = Receipt::load(path)?;
        receipt.check_tape(path, tape)?;
        Ok(receipt)
    }

    /// Whether this receipt (read from `path`) is of `tape`: the file its `tape` names
    /// is this one (the same file, or, when that path no longer exists, a file of the
    /// same name: a tape moved with its receipt), and every server it names has a
    /// connection on the tape. A receipt with no `tape` passes the first test.
    pub fn check_tape(&self, path: &Path, tape: &Tape) -> Result<(), ReceiptError> {
        let other = |why: String| ReceiptError::OtherTape {
            path: path.to_path_buf(),
            tape: tape.path.clone(),
            why,
        };
        if let Some(theirs) = self.tape() {
            let same = match (std::fs::metadata(theirs), std::fs::metadata(&tape.path)) {
                (Ok(a), Ok(b)) => {
                    use std::os::unix::fs::MetadataExt;
                    (a.dev(), a.ino()) == (b.dev(), b.ino())
                }
                (Err(_), _) => theirs.file_name() == tape.path.file_name(),
                // The tape was read, so this is a race; the name decides.
                (Ok(_), Err(_)) => theirs.file_name() == tape.path.file_name(),
            };
            if !same {
                return Err(other(format!("it was made for `{}`", theirs.display())));
            }
        }
        let conns = tape.connections();
        let on_tape: BTreeSet<&str> = conns.iter().map(|c| c.server.as_str()).collect();
        let named: BTreeSet<&str> = match self {
            Receipt::Verify { server, .. } => [server.as_str()].into(),
            Receipt::Replay { verdicts, .. } => {
                verdicts.iter().map(|v| v.server.as_str()).collect()
            }
        };
        let missing: Vec<String> = named
            .into_iter()
            .filter(|s| !s.is_empty() && !on_tape.contains(s))
            .map(|s| format!("`{s}`"))
            .collect();
        if !missing.is_empty() {
            return Err(other(format!(
                "the tape has no connection to the server {}",
                missing.join(", ")
            )));
        }
        Ok(())
    }

    /// The tape this receipt says it was made for.
    pub fn tape(&self) -> Option<&Path> {
        match self {
            Receipt::Verify { tape, .. } | Receipt::Replay { tape, .. } => tape.as_deref(),
        }
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
                tape: raw.tape,
                verdicts: raw.verdicts,
            }),
            Some("verify") | None if raw.server.is_some() || raw.counts.is_some() => {
                Ok(Receipt::Verify {
                    tape: raw.tape,
                    server: raw.server.unwrap_or_default(),
                    calls: raw.calls,
                })
            }
            Some("verify") => Err(shape("a verify receipt with no `server`".into())),
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
            Receipt::Replay { verdicts, .. } => verdicts
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
        let Receipt::Replay { verdicts, .. } = self else {
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
        let err = Receipt::parse(p, br#"{"kind":"verify"}"#).expect_err("no server");
        assert!(err.to_string().contains("no `server`"), "{err}");
    }
}
