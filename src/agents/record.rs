//! The install record: per config file, each wrapped entry's original bytes and the value
//! install wrote, kept beside the backups (`$MCPTAPE_HOME/backups/<file>-<hash>.install.json`,
//! 0600). `uninstall` restores an entry's original bytes only while it still equals what
//! was installed (as JSON values, so an agent that re-serialized the file still counts).

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::agents::error::AgentError;
use crate::agents::write;

/// The record format's version.
const VERSION: u32 = 1;

/// One wrapped entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedEntry {
    /// The key path of the entry (container, then its key).
    pub path: Vec<String>,
    /// The entry's text as it was before install, byte for byte.
    pub original: String,
    /// The entry's value as install wrote it.
    pub installed: Value,
}

/// What install did to one config file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstallRecord {
    /// The record format's version.
    pub version: u32,
    /// The config file.
    pub file: PathBuf,
    /// Its wrapped entries.
    pub entries: Vec<RecordedEntry>,
}

impl InstallRecord {
    /// An empty record of `file`.
    pub fn new(file: &Path) -> InstallRecord {
        InstallRecord {
            version: VERSION,
            file: file.to_path_buf(),
            entries: Vec::new(),
        }
    }

    /// Adds `entries`, each replacing the entry at its path: one pass over the record,
    /// however many there are.
    pub fn put_all(&mut self, entries: Vec<RecordedEntry>) {
        let new: std::collections::HashSet<&[String]> =
            entries.iter().map(|e| e.path.as_slice()).collect();
        self.entries.retain(|e| !new.contains(e.path.as_slice()));
        self.entries.extend(entries);
    }
}

/// Where the record of config `file` is kept.
pub fn path_of(backups: &Path, file: &Path) -> PathBuf {
    backups.join(format!("{}.install.json", write::file_key(file)))
}

/// The record at `path`; `None` when there is none.
pub fn load(path: &Path) -> Result<Option<InstallRecord>, AgentError> {
    let err = |source| AgentError::Record {
        path: path.to_path_buf(),
        source,
    };
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(err(e)),
        Ok(m) if !m.is_file() => {
            return Err(err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file",
            )));
        }
        Ok(_) => {}
    }
    let text = std::fs::read_to_string(path).map_err(err)?;
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| err(io::Error::new(io::ErrorKind::InvalidData, e)))
}

/// Saves `record` at `path` (removes the file when the record is empty).
pub fn save(path: &Path, record: &InstallRecord) -> Result<(), AgentError> {
    let err = |source| AgentError::Record {
        path: path.to_path_buf(),
        source,
    };
    if record.entries.is_empty() {
        return match std::fs::remove_file(path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(err(e)),
            _ => Ok(()),
        };
    }
    if let Some(dir) = path.parent() {
        write::ensure_private_dir(dir).map_err(err)?;
    }
    let text = serde_json::to_string_pretty(record).map_err(|e| err(io::Error::other(e)))?;
    write::write_private(path, text.as_bytes()).map_err(err)
}
