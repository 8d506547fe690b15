//! Appending entries to a tape that other processes may be appending to at the same time.
//!
//! Every line is written with one `write` on an `O_APPEND` descriptor while holding an
//! exclusive advisory lock (`flock`) on the file: the proxies of many servers can share
//! one tape and their lines never interleave. The tape is 0600, also when it existed, and
//! is opened under the rules of [`crate::tape::safety`] (no symlink, no shared directory,
//! no FIFO, no second name).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::tape::TapeError;
use crate::tape::safety;

/// An open tape, appended to line by line.
#[derive(Debug)]
pub struct TapeWriter {
    file: File,
    path: PathBuf,
    max_bytes: Option<u64>,
}

impl TapeWriter {
    /// Opens (creating if needed) a tape for appending; its directory must exist.
    pub fn open(path: &Path) -> Result<Self, TapeError> {
        let open_err = |source| TapeError::Open {
            path: path.to_path_buf(),
            source,
        };
        // Never through a symlink, never in a directory others could swap it in.
        let file = safety::open(
            path,
            OpenOptions::new()
                .read(true)
                .append(true)
                .create(true)
                .mode(0o600),
            safety::Accept::RegularOrCharDevice,
        )
        .map_err(|e| e.for_tape(path))?;
        let meta = file.metadata().map_err(open_err)?;
        // Only regular files get their mode fixed: a tape path may name a character
        // device (`/dev/full` in tests), whose permissions are not ours to change.
        if meta.is_file() && meta.permissions().mode() & 0o777 != 0o600 {
            file.set_permissions(std::fs::Permissions::from_mode(0o600))
                .map_err(open_err)?;
        }
        Ok(TapeWriter {
            file,
            path: path.to_path_buf(),
            max_bytes: None,
        })
    }

    /// Refuses appends that would grow the tape past `max` bytes ([`TapeError::Full`]).
    pub fn limit(mut self, max: Option<u64>) -> Self {
        self.max_bytes = max;
        self
    }

    /// Appends a line even past the size limit (the entry that says the tape is cut).
    pub fn append_past_limit(&mut self, line: &[u8]) -> Result<(), TapeError> {
        let max = self.max_bytes.take();
        let done = self.append(line);
        self.max_bytes = max;
        done
    }

    /// The tape's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one whole line (which must end in `\n`) under the tape's lock. If the
    /// tape does not end in `\n` (another writer failed mid-line), the torn line is ended
    /// first, so that it stays one bad line instead of swallowing this one.
    pub fn append(&mut self, line: &[u8]) -> Result<(), TapeError> {
        let write_err = |source| TapeError::Write {
            path: self.path.clone(),
            source,
        };
        self.file.lock().map_err(write_err)?;
        if let Some(max) = self.max_bytes {
            let len = self.file.metadata().map(|m| m.len()).unwrap_or(0);
            if len + line.len() as u64 > max {
                let _ = self.file.unlock();
                return Err(TapeError::Full {
                    path: self.path.clone(),
                    max,
                });
            }
        }
        let written = self.torn().and_then(|torn| {
            if torn {
                let mut whole = Vec::with_capacity(line.len() + 1);
                whole.push(b'\n');
                whole.extend_from_slice(line);
                self.file.write_all(&whole)
            } else {
                self.file.write_all(line)
            }
        });
        let unlocked = self.file.unlock();
        written.map_err(write_err)?;
        unlocked.map_err(write_err)
    }

    /// True when the tape is a non-empty regular file whose last byte is not `\n`.
    fn torn(&self) -> std::io::Result<bool> {
        use std::os::unix::fs::FileExt;
        let meta = self.file.metadata()?;
        if !meta.is_file() || meta.len() == 0 {
            return Ok(false);
        }
        let mut last = [0u8];
        self.file.read_exact_at(&mut last, meta.len() - 1)?;
        Ok(last[0] != b'\n')
    }

    /// Asks the OS to put what was written on disk (at the end of a connection).
    pub fn sync(&self) -> Result<(), TapeError> {
        match self.file.sync_data() {
            // Devices and pipes cannot be synced; that is not a lost entry.
            Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => Ok(()),
            other => other.map_err(|source| TapeError::Write {
                path: self.path.clone(),
                source,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_private_and_tightens_existing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.ndjson");
        std::fs::write(&path, "").expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let mut w = TapeWriter::open(&path).expect("open");
        w.append(b"{}\n").expect("append");
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(std::fs::read(&path).expect("read"), b"{}\n");
    }

    #[test]
    fn a_torn_line_left_by_another_writer_is_ended_first() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.ndjson");
        std::fs::write(&path, "{\"torn\":").expect("write");
        let mut w = TapeWriter::open(&path).expect("open");
        w.append(b"{}\n").expect("append");
        assert_eq!(std::fs::read(&path).expect("read"), b"{\"torn\":\n{}\n");
    }

    #[test]
    fn a_symlinked_tape_is_refused_and_its_target_keeps_its_mode() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("victim");
        std::fs::write(&target, "").expect("write");
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let link = dir.path().join("t.ndjson");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        let err = TapeWriter::open(&link).expect_err("refused");
        assert!(
            err.to_string().contains("refusing to write") && err.to_string().contains("t.ndjson"),
            "{err}"
        );
        let mode = std::fs::metadata(&target)
            .expect("meta")
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o644);
    }

    #[test]
    fn full_disk_is_an_error_naming_the_tape() {
        let mut w = TapeWriter::open(Path::new("/dev/full")).expect("open /dev/full");
        let err = w.append(b"{}\n").expect_err("disk full");
        assert!(err.to_string().contains("/dev/full"), "{err}");
    }
}
