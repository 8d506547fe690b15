//! A transcript file read line by line: opened without blocking (a FIFO or a device named
//! by mistake is refused, not waited on), only a regular file, each line at most
//! [`MAX_LINE_BYTES`], never the whole file in memory. Shared by the transcript readers.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use nix::fcntl::OFlag;

use crate::import::TranscriptError;
use crate::tape::kind::{self, FileKind};

/// The most bytes one transcript line may hold: agents keep whole tool results on one
/// line, and a result of tens of megabytes is real, but a line past this is refused.
pub const MAX_LINE_BYTES: usize = 256 << 20;

/// Opens `path` as a transcript: a regular file, opened without waiting.
pub fn open(path: &Path) -> Result<File, TranscriptError> {
    let read_err = |source| TranscriptError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = kind::open(path, OpenOptions::new().read(true), OFlag::empty()).map_err(read_err)?;
    let meta = file.metadata().map_err(read_err)?;
    if FileKind::of(&meta.file_type()) != FileKind::Regular {
        return Err(TranscriptError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    kind::blocking(&file).map_err(read_err)?;
    Ok(file)
}

/// One line of a transcript: its 1-based number, its bytes (without the newline), and
/// whether a newline ended it (a last line without one may be torn by a crash).
pub struct Line<'a> {
    /// 1-based.
    pub number: usize,
    /// The bytes, without `\n` (and without a `\r` before it).
    pub bytes: &'a [u8],
    /// False for a last line that the file ends in the middle of.
    pub ended: bool,
}

/// Calls `each` with every line of the file at `path`, in order.
pub fn each_line(
    path: &Path,
    mut each: impl FnMut(Line<'_>) -> Result<(), TranscriptError>,
) -> Result<(), TranscriptError> {
    let mut input = BufReader::new(open(path)?);
    let mut buf = Vec::new();
    let mut number = 0;
    loop {
        buf.clear();
        number += 1;
        let limit = u64::try_from(MAX_LINE_BYTES).unwrap_or(u64::MAX).saturating_add(1);
        let read = (&mut input)
            .take(limit)
            .read_until(b'\n', &mut buf)
            .map_err(|source| TranscriptError::Read {
                path: path.to_path_buf(),
                source,
            })?;
        if read == 0 {
            return Ok(());
        }
        let ended = buf.last() == Some(&b'\n');
        if buf.len() > MAX_LINE_BYTES && !(ended && buf.len() == MAX_LINE_BYTES + 1) {
            return Err(too_long(path, number));
        }
        each(Line {
            number,
            bytes: trim_newline(&buf),
            ended,
        })?;
    }
}

/// Calls `each` with every line of `bytes` (a whole transcript already in memory).
pub fn each_line_of(
    path: &Path,
    bytes: &[u8],
    mut each: impl FnMut(Line<'_>) -> Result<(), TranscriptError>,
) -> Result<(), TranscriptError> {
    let mut rest = bytes;
    let mut number = 0;
    while !rest.is_empty() {
        number += 1;
        let (line, ended, next) = match memchr::memchr(b'\n', rest) {
            Some(i) => (&rest[..=i], true, &rest[i + 1..]),
            None => (rest, false, &rest[rest.len()..]),
        };
        if trim_newline(line).len() > MAX_LINE_BYTES {
            return Err(too_long(path, number));
        }
        each(Line {
            number,
            bytes: trim_newline(line),
            ended,
        })?;
        rest = next;
    }
    Ok(())
}

fn trim_newline(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn too_long(path: &Path, line: usize) -> TranscriptError {
    TranscriptError::LineTooLong {
        path: PathBuf::from(path),
        line,
        max: MAX_LINE_BYTES,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(bytes: &[u8]) -> Vec<(usize, Vec<u8>, bool)> {
        let mut out = Vec::new();
        each_line_of(Path::new("t.jsonl"), bytes, |l| {
            out.push((l.number, l.bytes.to_vec(), l.ended));
            Ok(())
        })
        .expect("lines");
        out
    }

    #[test]
    fn lines_are_numbered_and_a_last_line_without_newline_is_not_ended() {
        let got = collect(b"a\r\n\nb");
        assert_eq!(
            got,
            vec![
                (1, b"a".to_vec(), true),
                (2, b"".to_vec(), true),
                (3, b"b".to_vec(), false)
            ]
        );
    }

    #[test]
    fn a_file_read_from_disk_gives_the_same_lines_and_a_fifo_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("r.jsonl");
        std::fs::write(&path, b"one\ntwo").expect("write");
        let mut got = Vec::new();
        each_line(&path, |l| {
            got.push((l.number, l.bytes.to_vec(), l.ended));
            Ok(())
        })
        .expect("read");
        assert_eq!(got, vec![(1, b"one".to_vec(), true), (2, b"two".to_vec(), false)]);

        let fifo = dir.path().join("fifo.jsonl");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).expect("mkfifo");
        let err = each_line(&fifo, |_| Ok(())).expect_err("a fifo is no transcript");
        assert!(matches!(err, TranscriptError::NotAFile { .. }), "{err}");
        assert!(err.to_string().contains("fifo.jsonl"), "{err}");
    }
}
