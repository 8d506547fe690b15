//! The desk's file-system rules: its directory is 0700 and ours (made so, or refused
//! with the way to fix it), and each of its files is written whole under a temporary
//! name (0600, `O_CREAT|O_EXCL|O_NOFOLLOW`) and then put in place: with a hard link
//! when the name must be new (a second `approve` of the same call finds it taken:
//! exactly one decision wins), with a rename when it replaces our own file. Readers
//! open with `O_NOFOLLOW|O_NONBLOCK`, take regular files only, and read a bounded size.
//! Nothing here follows a link in the last component.

use std::fs::{self, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::error::ApprovalError;

/// The most bytes a desk file may hold: a pending call keeps its arguments shown
/// ([`super::record::ARGUMENTS_SHOWN_BYTES`]) well under this.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// Makes the desk's directory (0700, with any missing parents 0700) unless it exists,
/// then checks it ([`check_dir`]).
pub fn ensure_dir(dir: &Path) -> Result<(), ApprovalError> {
    let dir_err = |source| ApprovalError::Dir {
        path: dir.to_path_buf(),
        source,
    };
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty())
        && !parent.is_dir()
    {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .map_err(dir_err)?;
    }
    match fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(dir_err(e)),
    }
    check_dir(dir)?.ok_or_else(|| dir_err(io::ErrorKind::NotFound.into()))
}

/// Checks the desk's directory, read without following a link: None when it does not
/// exist; refused when it is a link, not a directory, another user's, or reachable by
/// group or others — each with the way to fix it.
pub fn check_dir(dir: &Path) -> Result<Option<()>, ApprovalError> {
    let meta = match fs::symlink_metadata(dir) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(ApprovalError::Dir {
                path: dir.to_path_buf(),
                source,
            });
        }
    };
    let shown = dir.display();
    let unsafe_dir = |why: String, fix: String| ApprovalError::Unsafe {
        path: dir.to_path_buf(),
        why,
        fix,
    };
    if meta.file_type().is_symlink() {
        return Err(unsafe_dir(
            "is a symbolic link, and pending calls are kept only in a directory of mcptape's own"
                .into(),
            format!("remove the link (`rm '{shown}'`) and mcptape makes the directory"),
        ));
    }
    if !meta.is_dir() {
        return Err(unsafe_dir(
            "is not a directory".into(),
            format!("remove it (`rm '{shown}'`) and mcptape makes the directory"),
        ));
    }
    let me = nix::unistd::geteuid().as_raw();
    if meta.uid() != me {
        return Err(unsafe_dir(
            format!("belongs to another user (uid {}, not {me})", meta.uid()),
            "remove it, as its owner, and mcptape makes it again".into(),
        ));
    }
    let mode = meta.mode() & 0o7777;
    if mode & 0o077 != 0 {
        return Err(unsafe_dir(
            format!("can be reached by other users (mode {mode:04o})"),
            format!("make it private with `chmod 700 '{shown}'`"),
        ));
    }
    Ok(Some(()))
}

/// Where a file is written whole before it is put in place: a hidden name of its own,
/// which listings skip.
fn temp_path(dir: &Path, name: &str) -> Result<PathBuf, ApprovalError> {
    let salt = crate::ids::conn_id()?;
    Ok(dir.join(format!(".{name}.{salt}.tmp")))
}

/// Writes `bytes` to a new temporary file in `dir` (0600, never an existing file or a
/// link), synced.
fn write_temp(dir: &Path, name: &str, bytes: &[u8]) -> Result<PathBuf, ApprovalError> {
    let tmp = temp_path(dir, name)?;
    let file_err = |source| ApprovalError::File {
        what: "write",
        path: tmp.clone(),
        source,
    };
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(&tmp)
        .map_err(file_err)?;
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(file_err(e));
    }
    Ok(tmp)
}

/// Puts `bytes` in `dir/name`, which must not exist yet: true when it was put there,
/// false when the name was taken (by another process, at the same moment or before).
pub fn place_new(dir: &Path, name: &str, bytes: &[u8]) -> Result<bool, ApprovalError> {
    let tmp = write_temp(dir, name, bytes)?;
    let path = dir.join(name);
    // A hard link never replaces what is there: of two writers, one gets the name.
    let linked = fs::hard_link(&tmp, &path);
    let _ = fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(source) => Err(ApprovalError::File {
            what: "write",
            path,
            source,
        }),
    }
}

/// Replaces our own `dir/name` with `bytes`, whole (a rename over it).
pub fn replace(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), ApprovalError> {
    let tmp = write_temp(dir, name, bytes)?;
    let path = dir.join(name);
    fs::rename(&tmp, &path).map_err(|source| {
        let _ = fs::remove_file(&tmp);
        ApprovalError::File {
            what: "write",
            path,
            source,
        }
    })
}

/// The bytes of `path`, or None when there is no such file. A link, a file that is not
/// regular, or one over [`MAX_FILE_BYTES`] is an error.
pub fn read(path: &Path) -> Result<Option<Vec<u8>>, ApprovalError> {
    let file_err = |source| ApprovalError::File {
        what: "read",
        path: path.to_path_buf(),
        source,
    };
    let flags = nix::fcntl::OFlag::O_NOFOLLOW | nix::fcntl::OFlag::O_NONBLOCK;
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits())
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(file_err(e)),
    };
    let meta = file.metadata().map_err(file_err)?;
    if !meta.is_file() {
        return Err(file_err(io::Error::new(
            io::ErrorKind::InvalidData,
            "not a regular file",
        )));
    }
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(file_err)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(file_err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("longer than {MAX_FILE_BYTES} bytes"),
        )));
    }
    Ok(Some(bytes))
}

/// Removes `path`; one already gone is fine.
pub fn remove(path: &Path) -> Result<(), ApprovalError> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(ApprovalError::File {
            what: "remove",
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// True when `path` exists (a link counts: it is not followed).
pub fn exists(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok()
}

/// True while process `pid` runs as this user: a holder that is gone (or whose pid now
/// belongs to another user's process) leaves a stale call.
pub fn alive(pid: u32) -> bool {
    let Ok(raw) = i32::try_from(pid) else {
        return false;
    };
    if raw <= 0 {
        return false;
    }
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(raw), None).is_ok()
}
