//! Reading the files a transcript reader needs, under the rules every reader of outside
//! files keeps: a regular file only (a FIFO or device is refused without waiting on it),
//! never through a symlink where the path comes from inside a transcript, lines bounded
//! ([`MAX_LINE_BYTES`]), and a last line without its `\n` reported as torn, for the
//! caller to decide.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use nix::fcntl::OFlag;

use crate::import::ImportError;
use crate::tape::kind::{self, FileKind};

/// The longest transcript line read (and the largest stored-aside result): the framing
/// maximum of a live line, so an answer mcptape could have recorded can be imported.
pub const MAX_LINE_BYTES: usize = crate::framing::MAX_LINE_BYTES;

/// Opens a regular file for reading; with `no_follow`, a symlink is refused too.
pub fn open(path: &Path, no_follow: bool) -> Result<File, ImportError> {
    let err = |source| ImportError::Read {
        path: path.to_path_buf(),
        source,
    };
    let flags = if no_follow {
        OFlag::O_NOFOLLOW
    } else {
        OFlag::empty()
    };
    let file = kind::open(path, OpenOptions::new().read(true), flags).map_err(err)?;
    let meta = file.metadata().map_err(err)?;
    let found = FileKind::of(&meta.file_type());
    if found != FileKind::Regular {
        return Err(ImportError::NotTranscript {
            path: path.to_path_buf(),
            why: format!("it is {found}"),
        });
    }
    kind::blocking(&file).map_err(err)?;
    Ok(file)
}

/// A whole small file (a stored-aside tool result), at most [`MAX_LINE_BYTES`]; `None`
/// when it is missing, not a regular file, a symlink, or bigger.
pub fn read_small(path: &Path) -> Option<Vec<u8>> {
    let file = open(path, true).ok()?;
    let mut bytes = Vec::new();
    file.take(MAX_LINE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    (bytes.len() <= MAX_LINE_BYTES).then_some(bytes)
}

/// One line of a transcript.
pub struct Line {
    /// 1-based.
    pub number: usize,
    /// Its bytes, without `\n`.
    pub bytes: Vec<u8>,
    /// False for a last line that ends without `\n` (a writer may have been cut off).
    pub terminated: bool,
}

/// A transcript's lines, one at a time, each at most [`MAX_LINE_BYTES`].
pub struct Lines {
    path: PathBuf,
    input: BufReader<File>,
    number: usize,
}

impl Lines {
    /// Opens the transcript at `path`.
    pub fn open(path: &Path) -> Result<Lines, ImportError> {
        Ok(Lines {
            path: path.to_path_buf(),
            input: BufReader::new(open(path, false)?),
            number: 0,
        })
    }

    /// The next line; `None` at the end.
    pub fn next_line(&mut self) -> Result<Option<Line>, ImportError> {
        let mut bytes = Vec::new();
        let limit = MAX_LINE_BYTES as u64 + 1;
        let read = (&mut self.input)
            .take(limit)
            .read_until(b'\n', &mut bytes)
            .map_err(|source| ImportError::Read {
                path: self.path.clone(),
                source,
            })?;
        if read == 0 {
            return Ok(None);
        }
        self.number += 1;
        let terminated = bytes.last() == Some(&b'\n');
        if terminated {
            bytes.pop();
        }
        if bytes.len() > MAX_LINE_BYTES {
            return Err(ImportError::TooLong {
                path: self.path.clone(),
                line: self.number,
                max: MAX_LINE_BYTES,
            });
        }
        Ok(Some(Line {
            number: self.number,
            bytes,
            terminated,
        }))
    }
}
