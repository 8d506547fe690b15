//! Opening a tape, receipt or `.prev` without blocking, and what kind of file it turned
//! out to be.
//!
//! `open(2)` of a FIFO waits for the other end (forever, when nobody comes), and a
//! device can read forever, so no file is trusted by its path: it is opened with
//! `O_NONBLOCK` (a FIFO opens at once; write-only with no reader it fails with `ENXIO`),
//! its kind is read from the open descriptor (`fstat`, so it cannot be swapped in
//! between), and only then is `O_NONBLOCK` cleared for ordinary blocking I/O. Which
//! kinds are accepted is the caller's rule ([`crate::tape::lines::open`],
//! [`crate::tape::safety::open`]).

use std::fs::{File, FileType, OpenOptions};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use nix::fcntl::{FcntlArg, OFlag, fcntl};

/// What kind of file an open descriptor is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A regular file: the only kind that is a tape.
    Regular,
    /// A directory.
    Directory,
    /// A named pipe.
    Fifo,
    /// A socket.
    Socket,
    /// A character device (`/dev/zero`, `/dev/full`, a terminal).
    CharDevice,
    /// A block device (a disk).
    BlockDevice,
    /// Anything else the system may report.
    Other,
}

impl FileKind {
    /// The kind of a file type from `fstat`.
    pub fn of(ty: &FileType) -> FileKind {
        if ty.is_file() {
            FileKind::Regular
        } else if ty.is_dir() {
            FileKind::Directory
        } else if ty.is_fifo() {
            FileKind::Fifo
        } else if ty.is_socket() {
            FileKind::Socket
        } else if ty.is_char_device() {
            FileKind::CharDevice
        } else if ty.is_block_device() {
            FileKind::BlockDevice
        } else {
            FileKind::Other
        }
    }
}

impl std::fmt::Display for FileKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FileKind::Regular => "a regular file",
            FileKind::Directory => "a directory",
            FileKind::Fifo => "a FIFO (named pipe)",
            FileKind::Socket => "a socket",
            FileKind::CharDevice => "a character device",
            FileKind::BlockDevice => "a block device",
            FileKind::Other => "not a file mcptape knows",
        })
    }
}

/// Opens `path` with `options`, `O_NONBLOCK` and `extra` flags, so that the open itself
/// never waits; the caller checks the kind ([`FileKind::of`] on the descriptor's
/// metadata) and then calls [`blocking`].
pub fn open(path: &Path, options: &mut OpenOptions, extra: OFlag) -> std::io::Result<File> {
    options
        .custom_flags((extra | OFlag::O_NONBLOCK).bits())
        .open(path)
}

/// Clears `O_NONBLOCK` on a file opened by [`open`], for ordinary blocking reads and
/// writes.
pub fn blocking(file: &File) -> std::io::Result<()> {
    let flags = fcntl(file, FcntlArg::F_GETFL).map_err(std::io::Error::from)?;
    let flags = OFlag::from_bits_retain(flags) & !OFlag::O_NONBLOCK;
    fcntl(file, FcntlArg::F_SETFL(flags)).map_err(std::io::Error::from)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_opens_at_once_and_says_what_it_is() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("p");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).expect("mkfifo");
        // Read-only: opens at once, though no writer is there.
        let file = open(&fifo, OpenOptions::new().read(true), OFlag::empty()).expect("open");
        let kind = FileKind::of(&file.metadata().expect("fstat").file_type());
        assert_eq!(kind, FileKind::Fifo);
        drop(file);
        // Write-only with no reader: ENXIO instead of a wait.
        let err =
            open(&fifo, OpenOptions::new().write(true), OFlag::empty()).expect_err("no reader");
        assert_eq!(err.raw_os_error(), Some(nix::errno::Errno::ENXIO as i32));
    }

    #[test]
    fn blocking_clears_o_nonblock() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("f");
        std::fs::write(&path, "x").expect("write");
        let file = open(&path, OpenOptions::new().read(true), OFlag::empty()).expect("open");
        let flags = |f: &File| OFlag::from_bits_retain(fcntl(f, FcntlArg::F_GETFL).expect("getfl"));
        assert!(flags(&file).contains(OFlag::O_NONBLOCK));
        blocking(&file).expect("clear");
        assert!(!flags(&file).contains(OFlag::O_NONBLOCK));
        let kind = FileKind::of(&file.metadata().expect("fstat").file_type());
        assert_eq!(kind, FileKind::Regular);
    }
}
