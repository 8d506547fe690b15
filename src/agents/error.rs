//! The errors of `install` and `uninstall`, each naming the file (and line) it is about.

use std::path::PathBuf;

use crate::agents::document::DocError;

/// Why an agent's config could not be read, planned or written.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The file cannot be read.
    #[error("cannot read `{}`", path.display())]
    Read {
        /// The config file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not in its format.
    // `problem`, not `source`: the message already says it, and a source would be
    // printed again as `caused by:`.
    #[error("`{}`: {problem}", path.display())]
    Parse {
        /// The config file.
        path: PathBuf,
        /// Where and what.
        problem: DocError,
    },
    /// A server entry is not an object.
    #[error("`{}`: server `{name}` is not an object", path.display())]
    NotObject {
        /// The config file.
        path: PathBuf,
        /// The entry's key.
        name: String,
    },
    /// The file (or its backup) is a symbolic link, or not a regular file.
    #[error("refusing `{}`: {why}", path.display())]
    Refused {
        /// The file.
        path: PathBuf,
        /// Why (`it is a symbolic link`).
        why: &'static str,
    },
    /// The file is larger than install reads.
    #[error("`{}` is larger than {max} bytes", path.display())]
    TooLarge {
        /// The config file.
        path: PathBuf,
        /// The limit.
        max: u64,
    },
    /// The backup could not be written: nothing was changed.
    #[error("cannot back up `{}` to `{}`; nothing was changed", path.display(), backup.display())]
    Backup {
        /// The config file.
        path: PathBuf,
        /// Where the backup was to go.
        backup: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The install record could not be read or written.
    #[error("install record `{}`", path.display())]
    Record {
        /// The record file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file could not be replaced: it is as it was.
    #[error("cannot write `{}`; it was left as it was", path.display())]
    Write {
        /// The config file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl AgentError {
    /// True for errors of the user's files or arguments (exit 2), false for failures to
    /// write (exit 1).
    pub fn is_usage(&self) -> bool {
        !matches!(
            self,
            AgentError::Backup { .. } | AgentError::Write { .. } | AgentError::Record { .. }
        )
    }
}
