//! Reading and writing agents' config files safely: never through a symbolic link, a
//! byte-exact backup (`$MCPTAPE_HOME/backups/`, directory 0700, file 0600) before any
//! change, then a temporary file in the same directory, synced and renamed over the
//! config with its mode (and owner, where allowed) kept.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::agents::error::AgentError;

/// The largest config file install reads, in bytes.
pub const MAX_CONFIG_BYTES: u64 = 16 * 1024 * 1024;

/// The directory of backups and install records under `mcptape_home`.
pub fn backups_dir(mcptape_home: &Path) -> PathBuf {
    mcptape_home.join("backups")
}

/// The config file's text; `None` when there is no such file. A symbolic link, a
/// directory, a file over [`MAX_CONFIG_BYTES`] or text that is not UTF-8 is an error.
pub fn read_config(path: &Path) -> Result<Option<String>, AgentError> {
    let refused = |why| AgentError::Refused {
        path: path.to_path_buf(),
        why,
    };
    let meta = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(AgentError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    if meta.file_type().is_symlink() {
        return Err(refused("it is a symbolic link"));
    }
    if !meta.is_file() {
        return Err(refused("it is not a regular file"));
    }
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(AgentError::TooLarge {
            path: path.to_path_buf(),
            max: MAX_CONFIG_BYTES,
        });
    }
    let bytes = open_nofollow(path, OpenOptions::new().read(true))
        .and_then(|mut f| {
            let mut buf = Vec::new();
            io::Read::read_to_end(&mut io::Read::take(&mut f, MAX_CONFIG_BYTES + 1), &mut buf)?;
            Ok(buf)
        })
        .map_err(|source| AgentError::Read {
            path: path.to_path_buf(),
            source,
        })?;
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| AgentError::Read {
            path: path.to_path_buf(),
            source: io::Error::new(io::ErrorKind::InvalidData, "the file is not UTF-8"),
        })
}

fn open_nofollow(path: &Path, options: &mut OpenOptions) -> io::Result<fs::File> {
    options
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(path)
}

/// Creates `dir` (0700) when missing; refuses a symbolic link there, and an existing
/// directory every user may write to or another user's ([`crate::tape::safety`]'s
/// rule for private files).
pub fn ensure_private_dir(dir: &Path) -> io::Result<()> {
    match fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{}` is a symbolic link", dir.display()),
        )),
        Ok(m) if m.is_dir() => crate::tape::safety::check_private_dir(&m).map_err(|why| {
            io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("`{}`: {why}", dir.display()),
            )
        }),
        Ok(_) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{}` is not a directory", dir.display()),
        )),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if let Some(parent) = dir.parent() {
                fs::create_dir_all(parent)?;
            }
            fs::DirBuilder::new().mode(0o700).create(dir)?;
            fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
        }
        Err(e) => Err(e),
    }
}

/// Writes a new file (0600) that must not exist yet: never an existing file or link.
fn write_new_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = open_nofollow(
        path,
        OpenOptions::new().write(true).create_new(true).mode(0o600),
    )?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// A file name made of `path`'s own name and a hash of the whole path, so two configs
/// of the same name (`settings.json`) keep apart.
pub fn file_key(path: &Path) -> String {
    // FNV-1a: stable across builds and platforms, which `DefaultHasher` is not.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in path.as_os_str().as_encoded_bytes() {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    let name: String = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{name}-{hash:016x}")
}

/// Writes a byte-exact copy of `path`'s `bytes` under `backups` and returns where.
pub fn backup(backups: &Path, path: &Path, bytes: &[u8]) -> Result<PathBuf, AgentError> {
    let stamp = humantime::format_rfc3339_millis(std::time::SystemTime::now())
        .to_string()
        .replace(':', "");
    let key = file_key(path);
    let mut target = backups.join(format!("{key}.{stamp}.bak"));
    let fail = |backup: PathBuf, source| AgentError::Backup {
        path: path.to_path_buf(),
        backup,
        source,
    };
    ensure_private_dir(backups).map_err(|e| fail(backups.to_path_buf(), e))?;
    for n in 1.. {
        match write_new_private(&target, bytes) {
            Ok(()) => return Ok(target),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 100 => {
                target = backups.join(format!("{key}.{stamp}-{n}.bak"));
            }
            Err(e) => return Err(fail(target, e)),
        }
    }
    unreachable!("the loop returns")
}

/// Replaces `path`'s content with `bytes` through a temporary file in its directory,
/// synced and renamed over it, with the file's mode and (where allowed) owner. A
/// symbolic link is refused; on any failure the file is as it was.
pub fn replace(path: &Path, bytes: &[u8]) -> Result<(), AgentError> {
    let fail = |source| AgentError::Write {
        path: path.to_path_buf(),
        source,
    };
    let meta = fs::symlink_metadata(path).map_err(fail)?;
    if meta.file_type().is_symlink() {
        return Err(AgentError::Refused {
            path: path.to_path_buf(),
            why: "it is a symbolic link",
        });
    }
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".mcptape-")
        .tempfile_in(dir)
        .map_err(fail)?;
    tmp.write_all(bytes).map_err(fail)?;
    tmp.as_file()
        .set_permissions(fs::Permissions::from_mode(meta.mode() & 0o7777))
        .map_err(fail)?;
    // Keeping the owner needs privilege when it is another user's: best effort.
    let _ = std::os::unix::fs::fchown(tmp.as_file(), Some(meta.uid()), Some(meta.gid()));
    tmp.as_file().sync_all().map_err(fail)?;
    tmp.persist(path).map_err(|e| fail(e.error))?;
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Writes `bytes` to `path` (0600) by a rename, refusing a symbolic link there.
pub fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "it is a symbolic link",
        ));
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".mcptape-")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file()
        .set_permissions(fs::Permissions::from_mode(0o600))?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
