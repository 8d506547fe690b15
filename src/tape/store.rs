//! Session names ⇄ tape paths, and the file-system rules for tapes.
//!
//! A SESSION argument that contains `/` or ends in `.ndjson` is a path; anything else is
//! a name, checked so that it cannot leave `$MCPTAPE_HOME/recordings` (no separators, no
//! `..`, not empty, no control characters, not hidden). Directories mcptape creates are
//! 0700 and tapes 0600, also when they existed before; a directory that already exists
//! (the user's, or a symlinked `$MCPTAPE_HOME/recordings`) keeps its mode. What is never
//! written (through a symlink, into a shared directory) is [`super::safety`]'s.

use std::fs;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::tape::TapeError;
use crate::tape::safety;

/// Where tapes live when `MCPTAPE_HOME` is not set: `~/.mcptape`.
const DEFAULT_HOME_DIR: &str = ".mcptape";
/// The subdirectory of the home that holds named tapes.
const RECORDINGS_DIR: &str = "recordings";
/// The extension of every tape.
pub const EXTENSION: &str = "ndjson";

/// The mcptape home: `MCPTAPE_HOME`, else `~/.mcptape`.
pub fn home(mcptape_home: Option<&str>) -> Result<PathBuf, TapeError> {
    match mcptape_home.filter(|h| !h.is_empty()) {
        Some(h) => Ok(PathBuf::from(h)),
        None => dirs::home_dir()
            .map(|h| h.join(DEFAULT_HOME_DIR))
            .ok_or(TapeError::NoHome),
    }
}

/// The directory of named tapes.
pub fn recordings_dir(home: &Path) -> PathBuf {
    home.join(RECORDINGS_DIR)
}

/// True when a SESSION argument is a path rather than a name.
pub fn is_path(arg: &str) -> bool {
    arg.contains('/') || arg.ends_with(&format!(".{EXTENSION}"))
}

/// Checks a session name (not a path).
pub fn check_name(name: &str) -> Result<(), TapeError> {
    let reason = if name.is_empty() {
        Some("it is empty")
    } else if name.contains('\\') {
        Some("it contains a path separator")
    } else if name.contains("..") {
        Some("it contains `..`")
    } else if name.starts_with('.') {
        Some("it starts with `.`")
    } else if name.chars().any(char::is_control) {
        Some("it contains a control character")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(TapeError::InvalidName {
            name: name.escape_debug().to_string(),
            reason,
        }),
        None => Ok(()),
    }
}

/// Resolves a SESSION argument to an absolute tape path.
///
/// `home` is the mcptape home; `cwd` the directory a relative path is relative to.
pub fn resolve(arg: &str, home: &Path, cwd: &Path) -> Result<PathBuf, TapeError> {
    if is_path(arg) {
        let path = Path::new(arg);
        return Ok(if path.is_absolute() {
            path.to_path_buf()
        } else {
            cwd.join(path)
        });
    }
    check_name(arg)?;
    let dir = recordings_dir(home);
    let dir = if dir.is_absolute() {
        dir
    } else {
        cwd.join(dir)
    };
    Ok(dir.join(format!("{arg}.{EXTENSION}")))
}

/// The path a previous tape is kept at: `x.ndjson` → `x.prev.ndjson`.
pub fn prev_path(tape: &Path) -> PathBuf {
    let name = tape
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(&format!(".{EXTENSION}")).unwrap_or(&name);
    tape.with_file_name(format!("{stem}.prev.{EXTENSION}"))
}

/// Makes sure the directory of a tape exists; new directories are 0700.
pub fn ensure_dir(tape: &Path) -> Result<(), TapeError> {
    let Some(dir) = tape.parent() else {
        return Ok(());
    };
    if dir.as_os_str().is_empty() {
        return Ok(());
    }
    let dir_err = |source| TapeError::Dir {
        path: dir.to_path_buf(),
        source,
    };
    // Only what we create gets our mode; an existing directory is not ours to change.
    if !dir.is_dir() {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(dir_err)?;
    }
    Ok(())
}

/// What [`start_fresh`] moved aside, so that [`undo_fresh`] can put it back.
#[derive(Debug, Default)]
pub struct Fresh {
    /// Where the previous tape went (`.prev`), if there was one.
    pub kept: Option<PathBuf>,
    /// Where the `.prev` it replaced waits (`.prev.ndjson.undo`) until the recording is
    /// known to have reached the fresh tape.
    older: Option<PathBuf>,
    /// Bytes `record` itself wrote into the fresh tape before its command ran (its
    /// `--note`): a tape holding only those is still one nothing reached.
    pub own_bytes: u64,
}

/// Starts a fresh tape for `record`: keeps the previous one as `.prev` (the `.prev` it
/// replaces waits beside it until [`undo_fresh`] settles), creates an empty 0600 file,
/// and proves the directory is writable before anything runs.
pub fn start_fresh(tape: &Path) -> Result<Fresh, TapeError> {
    ensure_dir(tape)?;
    // A link is refused before anything moves: neither it nor its target is rotated.
    safety::check_replace(tape)?;
    let mut fresh = Fresh::default();
    if fs::symlink_metadata(tape).is_ok_and(|m| m.is_file() && m.len() > 0) {
        let prev = prev_path(tape);
        safety::check_replace(&prev)?;
        if fs::symlink_metadata(&prev).is_ok_and(|m| m.is_file()) {
            let older = undo_path(&prev);
            safety::check_replace(&older)?;
            fs::rename(&prev, &older).map_err(open_err(&prev))?;
            fresh.older = Some(older);
        }
        fs::rename(tape, &prev).map_err(open_err(&prev))?;
        fresh.kept = Some(prev);
    }
    match crate::tape::TapeWriter::open(tape) {
        Ok(writer) => drop(writer),
        Err(e) => {
            // Nothing of the old tapes is left moved aside (the error said is the open's).
            if fresh.kept.is_some() {
                let _ = restore(tape, &fresh);
            }
            return Err(e);
        }
    }
    Ok(fresh)
}

/// Settles [`start_fresh`] for good: the older `.prev` it kept aside goes.
pub fn settle_fresh(fresh: &Fresh) -> Result<(), TapeError> {
    match &fresh.older {
        Some(older) => fs::remove_file(older).map_err(open_err(older)),
        None => Ok(()),
    }
}

/// The error of a file operation on `path`, as [`TapeError::Open`].
fn open_err(path: &Path) -> impl FnOnce(std::io::Error) -> TapeError {
    let path = path.to_path_buf();
    move |source| TapeError::Open { path, source }
}

/// Puts back what [`start_fresh`] moved aside: the previous tape over the fresh one, and
/// the older `.prev` over `.prev`; with nothing moved, removes the fresh tape.
fn restore(tape: &Path, fresh: &Fresh) -> Result<(), TapeError> {
    match &fresh.kept {
        Some(prev) => {
            fs::rename(prev, tape).map_err(open_err(prev))?;
            if let Some(older) = &fresh.older {
                fs::rename(older, prev).map_err(open_err(older))?;
            }
            Ok(())
        }
        None => fs::remove_file(tape).map_err(open_err(tape)),
    }
}

/// Where a `.prev` waits while a fresh recording may still be undone.
fn undo_path(prev: &Path) -> PathBuf {
    let mut name = prev.as_os_str().to_owned();
    name.push(".undo");
    PathBuf::from(name)
}

/// Settles [`start_fresh`] once the recording is over. When nothing reached the fresh
/// tape (its command was not found, or no proxy ran under it) it is undone: the previous
/// tape comes back from `.prev` and the older `.prev` from beside it, or the empty tape is
/// removed. Otherwise the older `.prev` goes. A tape that holds anything, or is no longer
/// an empty regular file, is left as it is. Returns whether it undid anything.
pub fn undo_fresh(tape: &Path, fresh: &Fresh) -> Result<bool, TapeError> {
    let empty = fs::symlink_metadata(tape).is_ok_and(|m| m.is_file() && m.len() == fresh.own_bytes);
    if !empty {
        settle_fresh(fresh)?;
        return Ok(false);
    }
    restore(tape, fresh)?;
    Ok(true)
}

/// One tape in the recordings directory.
#[derive(Debug)]
pub struct Listed {
    /// The session name.
    pub name: String,
    /// The tape's path.
    pub path: PathBuf,
}

/// The tapes in the recordings directory, sorted by name.
pub fn list(home: &Path) -> Result<Vec<Listed>, TapeError> {
    let dir = recordings_dir(home);
    let read = match fs::read_dir(&dir) {
        Ok(read) => read,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(TapeError::Dir { path: dir, source }),
    };
    let mut out = Vec::new();
    for item in read {
        let item = item.map_err(|source| TapeError::Dir {
            path: dir.clone(),
            source,
        })?;
        let name = item.file_name().to_string_lossy().into_owned();
        if let Some(stem) = name.strip_suffix(&format!(".{EXTENSION}")) {
            out.push(Listed {
                name: stem.to_owned(),
                path: item.path(),
            });
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Replaces a file's content through a temporary file in the same directory, renamed
/// over it, with the original file's mode. A file that is a symlink is refused (renaming
/// over it would replace the link and leave its target as it was).
pub fn replace_file(path: &Path, bytes: &[u8]) -> Result<(), TapeError> {
    let write_err = |source| TapeError::Write {
        path: path.to_path_buf(),
        source,
    };
    safety::check_replace(path)?;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mode = std::fs::symlink_metadata(path)
        .map_err(write_err)?
        .permissions()
        .mode();
    // Created with O_EXCL under a random name: never an existing file or link.
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(write_err)?;
    std::io::Write::write_all(&mut tmp, bytes).map_err(write_err)?;
    tmp.as_file().sync_all().map_err(write_err)?;
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(mode))
        .map_err(write_err)?;
    tmp.persist(path).map_err(|e| write_err(e.error))?;
    Ok(())
}

/// Keeps a copy of a tape's content as its `.prev` (0600), never through a symlink;
/// returns where.
pub fn keep_prev_copy(tape: &Path, bytes: &[u8]) -> Result<PathBuf, TapeError> {
    let prev = prev_path(tape);
    safety::write_file(&prev, bytes, 0o600).map_err(|e| match e.for_tape(&prev) {
        TapeError::Open { path, source } => TapeError::Write { path, source },
        other => other,
    })?;
    Ok(prev)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_paths() {
        let home = Path::new("/h");
        let cwd = Path::new("/w");
        assert_eq!(
            resolve("demo", home, cwd).expect("name"),
            PathBuf::from("/h/recordings/demo.ndjson")
        );
        assert_eq!(
            resolve("fixtures/a", home, cwd).expect("path"),
            PathBuf::from("/w/fixtures/a")
        );
        assert_eq!(
            resolve("x.ndjson", home, cwd).expect("path"),
            PathBuf::from("/w/x.ndjson")
        );
        assert_eq!(
            resolve("../x", home, cwd).expect("path"),
            PathBuf::from("/w/../x")
        );
    }

    #[test]
    fn hostile_names_are_refused() {
        for bad in ["", "..", "a..b", "a\\b", ".hidden", "a\nb", "\u{1b}[31m"] {
            let err = resolve(bad, Path::new("/h"), Path::new("/w")).expect_err(bad);
            assert!(err.to_string().contains("invalid session name"), "{err}");
        }
    }

    #[test]
    fn prev_names() {
        assert_eq!(
            prev_path(Path::new("/a/s.ndjson")),
            PathBuf::from("/a/s.prev.ndjson")
        );
        assert_eq!(
            prev_path(Path::new("/a/tape")),
            PathBuf::from("/a/tape.prev.ndjson")
        );
    }
}
