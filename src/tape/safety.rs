//! Where mcptape refuses to write: the rules every file it writes goes through (tapes,
//! `.prev` copies, `verify` receipts, `redact`'s temporary files).
//!
//! - Nothing is written through a symbolic link: files are opened with `O_NOFOLLOW` (a
//!   link in the last component fails with `ELOOP`, which is a refusal), and a path that
//!   is about to be renamed over is checked with `symlink_metadata` first.
//! - A file in a directory every user may write to is refused, unless that directory is
//!   sticky (the `/tmp` case, where others cannot rename or remove our files) and the
//!   file is ours (checked on the open descriptor, so nobody can swap it in between).
//! - Only a regular file is written (a tape appender also takes a character device such as
//!   `/dev/null` or `/dev/full`, which neither blocks nor has a mode of ours to change): the
//!   open never waits ([`super::kind`]: `O_NONBLOCK`, then `fstat` of the descriptor), so a
//!   FIFO is refused instead of hanging the command, also write-only with no reader
//!   (`ENXIO`).
//! - A file with more than one name (hard links, `st_nlink > 1`) is refused before its
//!   mode changes or a byte is written: appending to it would write the other names' file,
//!   and replacing it by a rename would leave the other names holding the old content.
//!
//! Only the last component is guarded: a directory on the way that is a link (a
//! symlinked `$MCPTAPE_HOME/recordings`) is followed, since the user put it there; its
//! mode is never changed (see [`super::store::ensure_dir`]).

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::OFlag;

use crate::tape::TapeError;
use crate::tape::kind::{self, FileKind};

/// The "others may write" bit of a mode.
const WORLD_WRITABLE: u32 = 0o002;
/// The sticky bit of a directory's mode.
const STICKY: u32 = 0o1000;

/// Why a path is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unsafe {
    /// The path is a symbolic link.
    Symlink,
    /// Its directory is writable by every user and not sticky.
    SharedDir,
    /// Its directory is writable by every user (sticky), and the file is another user's.
    ForeignFile,
    /// It is not a regular file (a FIFO, a socket, a directory, a device).
    NotRegular(FileKind),
    /// A write-only open found nothing on the other end (`ENXIO`: a FIFO with no reader).
    NoReader,
    /// The file has this many names (hard links).
    HardLinked(u64),
    /// A directory for private files (backups, install records) that every user may
    /// write to, sticky or not.
    OpenDir,
    /// A directory for private files that belongs to another user.
    ForeignDir,
}

impl std::fmt::Display for Unsafe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unsafe::Symlink => {
                f.write_str("it is a symbolic link, and mcptape never writes through one")
            }
            Unsafe::SharedDir => f.write_str(
                "its directory is writable by every user and not sticky, so anyone could swap the file",
            ),
            Unsafe::ForeignFile => {
                f.write_str("it belongs to another user, in a directory every user can write to")
            }
            Unsafe::NotRegular(found) => write!(
                f,
                "it is {found}, not a regular file, and mcptape writes only regular files"
            ),
            Unsafe::NoReader => f.write_str(
                "it is a FIFO (or a device) with nothing on the other end, not a regular file",
            ),
            Unsafe::HardLinked(names) => write!(
                f,
                "it has {names} names (hard links): writing it would change the file of the \
                 other names too, and replacing it would leave them as they were"
            ),
            Unsafe::OpenDir => f.write_str(
                "it is writable by every user, and the files it would hold keep secrets",
            ),
            Unsafe::ForeignDir => f.write_str(
                "it belongs to another user, and the files it would hold keep secrets",
            ),
        }
    }
}

/// Why a file could not be opened for writing.
#[derive(Debug)]
pub enum OpenError {
    /// One of the rules above refuses it.
    Refused(Unsafe),
    /// The system refused it.
    Io(std::io::Error),
}

impl OpenError {
    /// The tape error of this failure, naming `path`.
    pub fn for_tape(self, path: &Path) -> TapeError {
        match self {
            OpenError::Refused(why) => TapeError::Refused {
                path: path.to_path_buf(),
                why,
            },
            OpenError::Io(source) => TapeError::Open {
                path: path.to_path_buf(),
                source,
            },
        }
    }
}

/// What the directory of a file allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dir {
    /// Only its owner (and group) may write there.
    Private,
    /// Every user may write there, but only remove their own files (sticky).
    SharedSticky,
}

/// Decides on a directory's mode bits.
fn judge_dir(mode: u32) -> Result<Dir, Unsafe> {
    match (mode & WORLD_WRITABLE != 0, mode & STICKY != 0) {
        (false, _) => Ok(Dir::Private),
        (true, true) => Ok(Dir::SharedSticky),
        (true, false) => Err(Unsafe::SharedDir),
    }
}

/// Decides on an existing directory meant for private files: the rules of [`judge_dir`]
/// without the sticky exception (others could still add files there), and it must be
/// ours.
fn judge_private_dir(mode: u32, dir_uid: u32, our_uid: u32) -> Result<(), Unsafe> {
    match judge_dir(mode) {
        Ok(Dir::Private) if dir_uid == our_uid => Ok(()),
        Ok(Dir::Private) => Err(Unsafe::ForeignDir),
        _ => Err(Unsafe::OpenDir),
    }
}

/// Refuses an existing directory (`meta`, read without following a link) that is to
/// hold private files, when every user may write to it or it is not ours.
pub fn check_private_dir(meta: &std::fs::Metadata) -> Result<(), Unsafe> {
    judge_private_dir(meta.mode(), meta.uid(), nix::unistd::geteuid().as_raw())
}

/// Decides on a file opened in a directory: in a shared one it must be ours.
fn judge_file(dir: Dir, file_uid: u32, our_uid: u32) -> Result<(), Unsafe> {
    match dir {
        Dir::SharedSticky if file_uid != our_uid => Err(Unsafe::ForeignFile),
        _ => Ok(()),
    }
}

/// Checks the directory `path` is in. A directory that cannot be read is let through:
/// the open that follows reports it.
fn check_dir(path: &Path) -> Result<Dir, Unsafe> {
    let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(d) => d,
        None => Path::new("."),
    };
    match std::fs::metadata(dir) {
        Ok(meta) => judge_dir(meta.mode()),
        Err(_) => Ok(Dir::Private),
    }
}

/// Refuses `path` when it is a symbolic link or sits in a directory the rules refuse;
/// for files that are replaced by a rename rather than opened.
pub fn check_replace(path: &Path) -> Result<(), TapeError> {
    let refused = |why| TapeError::Refused {
        path: path.to_path_buf(),
        why,
    };
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(refused(Unsafe::Symlink));
    }
    let dir = check_dir(path).map_err(refused)?;
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        judge_links(FileKind::of(&meta.file_type()), meta.nlink()).map_err(refused)?;
        judge_file(dir, meta.uid(), nix::unistd::geteuid().as_raw()).map_err(refused)?;
    }
    Ok(())
}

/// Which kinds of file an open for writing accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accept {
    /// Regular files only (receipts, `.prev` copies: they are chmod-ed and emptied).
    Regular,
    /// Regular files and character devices (a tape appended to: `--record /dev/null`
    /// discards, `/dev/full` fails every write); never a FIFO, socket or directory.
    RegularOrCharDevice,
}

/// Decides on the kind of an opened file.
fn judge_kind(accept: Accept, found: FileKind) -> Result<(), Unsafe> {
    match (accept, found) {
        (_, FileKind::Regular) | (Accept::RegularOrCharDevice, FileKind::CharDevice) => Ok(()),
        _ => Err(Unsafe::NotRegular(found)),
    }
}

/// Decides on a file's link count: a regular file must have one name.
fn judge_links(found: FileKind, names: u64) -> Result<(), Unsafe> {
    match found {
        FileKind::Regular if names > 1 => Err(Unsafe::HardLinked(names)),
        _ => Ok(()),
    }
}

/// Opens `path` with `options` plus `O_NOFOLLOW` and `O_NONBLOCK`, after checking its
/// directory, and checks the file it got (its kind, its links, its owner) on the
/// descriptor before clearing `O_NONBLOCK`; nothing is written or chmod-ed before.
pub fn open(path: &Path, options: &mut OpenOptions, accept: Accept) -> Result<File, OpenError> {
    let dir = check_dir(path).map_err(OpenError::Refused)?;
    let file = kind::open(path, options, OFlag::O_NOFOLLOW).map_err(|e| {
        match e.raw_os_error().map(Errno::from_raw) {
            Some(Errno::ELOOP) => OpenError::Refused(Unsafe::Symlink),
            Some(Errno::ENXIO) => OpenError::Refused(Unsafe::NoReader),
            _ => OpenError::Io(e),
        }
    })?;
    let meta = file.metadata().map_err(OpenError::Io)?;
    let found = FileKind::of(&meta.file_type());
    judge_kind(accept, found).map_err(OpenError::Refused)?;
    judge_links(found, meta.nlink()).map_err(OpenError::Refused)?;
    judge_file(dir, meta.uid(), nix::unistd::geteuid().as_raw()).map_err(OpenError::Refused)?;
    kind::blocking(&file).map_err(OpenError::Io)?;
    Ok(file)
}

/// Writes a whole small file (a receipt, a `.prev` copy) under the rules, with `mode`
/// (also when it existed). It is emptied only once it is known to be safe to write: a
/// regular file with one name.
pub fn write_file(path: &Path, bytes: &[u8], mode: u32) -> Result<(), OpenError> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = open(
        path,
        OpenOptions::new().write(true).create(true).mode(mode),
        Accept::Regular,
    )?;
    file.set_permissions(std::fs::Permissions::from_mode(mode))
        .map_err(OpenError::Io)?;
    file.set_len(0).map_err(OpenError::Io)?;
    std::io::Write::write_all(&mut file, bytes).map_err(OpenError::Io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_by_mode() {
        assert_eq!(judge_dir(0o40700), Ok(Dir::Private));
        assert_eq!(judge_dir(0o40775), Ok(Dir::Private));
        assert_eq!(judge_dir(0o41777), Ok(Dir::SharedSticky));
        assert_eq!(judge_dir(0o40777), Err(Unsafe::SharedDir));
        assert_eq!(judge_dir(0o40733), Err(Unsafe::SharedDir));
    }

    #[test]
    fn in_a_sticky_shared_directory_only_our_own_file_is_written() {
        assert_eq!(judge_file(Dir::SharedSticky, 1000, 1000), Ok(()));
        assert_eq!(
            judge_file(Dir::SharedSticky, 1001, 1000),
            Err(Unsafe::ForeignFile)
        );
        assert_eq!(judge_file(Dir::Private, 1001, 1000), Ok(()));
    }

    #[test]
    fn a_link_is_refused_and_its_target_untouched() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("target");
        std::fs::write(&target, "keep").expect("write");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        let err = write_file(&link, b"x", 0o600).expect_err("refused");
        assert!(
            matches!(err, OpenError::Refused(Unsafe::Symlink)),
            "{err:?}"
        );
        let err = check_replace(&link).expect_err("refused");
        assert!(err.to_string().contains("link"), "{err}");
        assert_eq!(std::fs::read(&target).expect("read"), b"keep");
    }

    #[test]
    fn a_directory_for_private_files_is_ours_and_nobody_elses_to_write() {
        assert_eq!(judge_private_dir(0o40700, 1000, 1000), Ok(()));
        assert_eq!(judge_private_dir(0o40750, 1000, 1000), Ok(()));
        assert_eq!(judge_private_dir(0o40777, 1000, 1000), Err(Unsafe::OpenDir));
        assert_eq!(judge_private_dir(0o41777, 1000, 1000), Err(Unsafe::OpenDir));
        assert_eq!(judge_private_dir(0o40700, 0, 1000), Err(Unsafe::ForeignDir));
    }

    #[test]
    fn a_world_writable_directory_is_refused_unless_sticky() {
        let dir = tempfile::tempdir().expect("tempdir");
        let open_dir = dir.path().join("open");
        std::fs::create_dir(&open_dir).expect("mkdir");
        std::fs::set_permissions(&open_dir, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        let err = write_file(&open_dir.join("f"), b"x", 0o600).expect_err("refused");
        assert!(
            matches!(err, OpenError::Refused(Unsafe::SharedDir)),
            "{err:?}"
        );
        assert!(!open_dir.join("f").exists());
        std::fs::set_permissions(&open_dir, std::fs::Permissions::from_mode(0o1777))
            .expect("chmod");
        write_file(&open_dir.join("f"), b"x", 0o600).expect("ours, in a sticky directory");
    }

    #[test]
    fn a_fifo_is_refused_without_waiting_with_or_without_a_reader() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("p");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).expect("mkfifo");
        let err = write_file(&fifo, b"x", 0o600).expect_err("no reader");
        assert!(
            matches!(err, OpenError::Refused(Unsafe::NoReader)),
            "{err:?}"
        );
        // With a reader there, the open succeeds and the kind refuses it.
        let _reader =
            kind::open(&fifo, OpenOptions::new().read(true), OFlag::empty()).expect("reader");
        let err = write_file(&fifo, b"x", 0o600).expect_err("a fifo");
        assert!(
            matches!(err, OpenError::Refused(Unsafe::NotRegular(FileKind::Fifo))),
            "{err:?}"
        );
        let err = open(
            &fifo,
            OpenOptions::new().read(true).append(true),
            Accept::RegularOrCharDevice,
        )
        .expect_err("a fifo");
        assert!(
            matches!(err, OpenError::Refused(Unsafe::NotRegular(FileKind::Fifo))),
            "{err:?}"
        );
    }

    #[test]
    fn a_hard_linked_file_is_refused_and_its_other_name_untouched() {
        let dir = tempfile::tempdir().expect("tempdir");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").expect("write");
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let second = dir.path().join("second");
        std::fs::hard_link(&victim, &second).expect("link");
        let err = write_file(&second, b"x", 0o600).expect_err("refused");
        assert!(
            matches!(err, OpenError::Refused(Unsafe::HardLinked(2))),
            "{err:?}"
        );
        let err = check_replace(&second).expect_err("refused");
        assert!(err.to_string().contains("2 names (hard links)"), "{err}");
        assert_eq!(std::fs::read(&victim).expect("read"), b"keep");
        let mode = std::fs::metadata(&victim)
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o644);
    }
}
