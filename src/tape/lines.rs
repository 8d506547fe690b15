//! Reading a tape line by line from its file, and what one line is.
//!
//! Every reader of tapes (the whole-tape loader, the streaming census of `list` and the
//! `replay` parent, a replaying proxy's loader) classifies lines with [`classify`], so a
//! line means the same to all of them: an entry, a blank line, a torn line
//! ([`crate::tape::torn`]), or a broken one, which is an error naming file and line.
//!
//! [`LineReader`] appends one line at a time to a buffer the caller owns: memory is the
//! largest line (or what the caller keeps), never the whole file.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use crate::tape::TapeError;
use crate::tape::format::{self, Cut, Meta};
use crate::tape::kind::{self, FileKind};
use crate::tape::torn;
use nix::fcntl::OFlag;

/// Bytes read from the file at a time.
const READ_BUFFER_BYTES: usize = 256 * 1024;

/// What one line of a tape is.
#[derive(Debug)]
pub enum Class {
    /// Only whitespace: skipped.
    Blank,
    /// An entry: its `_meta`, and where its message is ([`Cut`], counted from `lead`).
    Entry {
        /// The `_meta` member.
        meta: Meta,
        /// Where the message ends (relative to the first non-blank byte).
        cut: Cut,
        /// Leading whitespace before the message.
        lead: usize,
    },
    /// A torn line (a writer cut mid-write): skipped with a warning.
    Torn(String),
    /// Anything else that does not parse: an error.
    Bad(String),
}

/// Classifies one line (without its `\n`); `terminated` is false for a last line that
/// has no `\n` (nobody ended it).
pub fn classify(raw: &[u8], terminated: bool) -> Class {
    if raw.trim_ascii().is_empty() {
        return Class::Blank;
    }
    let lead = raw.len() - raw.trim_ascii_start().len();
    let decoded = std::str::from_utf8(raw)
        .map_err(|_| "not UTF-8".to_owned())
        .and_then(format::decode_cut);
    match decoded {
        Ok((meta, cut)) => Class::Entry { meta, cut, lead },
        // A last line nobody ended was cut mid-write, whatever it holds.
        Err(reason) if !terminated => Class::Torn(reason),
        Err(reason) if torn::is_unfinished(raw) => Class::Torn(reason),
        Err(reason) => Class::Bad(reason),
    }
}

/// Opens a tape for reading: only a regular file is a tape (a device can read forever).
/// The open never waits (a FIFO is opened with `O_NONBLOCK`, see [`kind`]): its kind is
/// read from the open descriptor and anything but a regular file is refused, naming it.
pub fn open(path: &Path) -> Result<File, TapeError> {
    let err = |source: std::io::Error| match source.kind() {
        std::io::ErrorKind::NotFound => TapeError::Missing {
            path: path.to_path_buf(),
            hint: super::near::hint(path),
        },
        _ => TapeError::Read {
            path: path.to_path_buf(),
            source,
        },
    };
    let file = kind::open(path, OpenOptions::new().read(true), OFlag::empty()).map_err(err)?;
    let meta = file.metadata().map_err(err)?;
    let found = FileKind::of(&meta.file_type());
    if found != FileKind::Regular {
        return Err(err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("not a regular file: it is {found}"),
        )));
    }
    kind::blocking(&file).map_err(err)?;
    Ok(file)
}

/// A tape's lines, read from its file one at a time.
pub struct LineReader {
    path: PathBuf,
    input: BufReader<File>,
    line: usize,
}

/// One line read: its number and whether a `\n` ended it.
#[derive(Debug, Clone, Copy)]
pub struct Read {
    /// 1-based line number.
    pub number: usize,
    /// False for a last line without `\n`.
    pub terminated: bool,
}

impl LineReader {
    /// Opens the tape at `path`.
    pub fn open(path: &Path) -> Result<LineReader, TapeError> {
        Ok(LineReader {
            path: path.to_path_buf(),
            input: BufReader::with_capacity(READ_BUFFER_BYTES, open(path)?),
            line: 0,
        })
    }

    /// The tape's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends the next line to `buf`, without its `\n`; `None` at the end of the file.
    pub fn next_into(&mut self, buf: &mut Vec<u8>) -> Result<Option<Read>, TapeError> {
        let before = buf.len();
        let n = self
            .input
            .read_until(b'\n', buf)
            .map_err(|source| TapeError::Read {
                path: self.path.clone(),
                source,
            })?;
        if n == 0 {
            return Ok(None);
        }
        self.line += 1;
        let terminated = buf.len() > before && buf.last() == Some(&b'\n');
        if terminated {
            buf.pop();
        }
        Ok(Some(Read {
            number: self.line,
            terminated,
        }))
    }

    /// The error for a broken line.
    pub fn bad(&self, line: usize, reason: String) -> TapeError {
        TapeError::BadLine {
            path: self.path.clone(),
            line,
            reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_entries_blank_torn_or_bad() {
        let entry = br#"{"id":1,"_meta":{"dir":"send","server":"s"}}"#;
        assert!(matches!(classify(entry, true), Class::Entry { .. }));
        assert!(matches!(classify(b"  \r", true), Class::Blank));
        // A prefix of an entry, ended by a later writer: torn.
        assert!(matches!(
            classify(br#"{"id":1,"method":"tools/ca"#, true),
            Class::Torn(_)
        ));
        // Cut inside a multi-byte character.
        assert!(matches!(
            classify(b"{\"id\":1,\"text\":\"caf\xc3", true),
            Class::Torn(_)
        ));
        // Broken in the middle, not merely unfinished: an error.
        assert!(matches!(classify(b"{oops", true), Class::Bad(_)));
        assert!(matches!(classify(b"not json", true), Class::Bad(_)));
        assert!(matches!(classify(br#"{"id":1}"#, true), Class::Bad(_)));
        // The last line without `\n`: torn, whatever it is.
        assert!(matches!(classify(b"not json", false), Class::Torn(_)));
    }

    #[test]
    fn reads_lines_with_and_without_a_last_newline() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.ndjson");
        std::fs::write(&path, "a\n\nbc").expect("write");
        let mut r = LineReader::open(&path).expect("open");
        let mut buf = Vec::new();
        let one = r.next_into(&mut buf).expect("read").expect("line 1");
        assert_eq!((one.number, one.terminated, &buf[..]), (1, true, &b"a"[..]));
        buf.clear();
        let two = r.next_into(&mut buf).expect("read").expect("line 2");
        assert_eq!((two.number, &buf[..]), (2, &b""[..]));
        buf.clear();
        let three = r.next_into(&mut buf).expect("read").expect("line 3");
        assert_eq!((three.terminated, &buf[..]), (false, &b"bc"[..]));
        assert!(r.next_into(&mut buf).expect("read").is_none());
    }
}
