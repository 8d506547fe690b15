//! What can go wrong with a tape: its name, its file, its lines, its writer.

use std::path::PathBuf;

use thiserror::Error;

/// Errors about tapes: names, files, lines.
#[derive(Debug, Error)]
pub enum TapeError {
    /// A session name that could escape the recordings directory.
    #[error("invalid session name `{name}`: {reason}")]
    InvalidName {
        /// The name as given.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// Neither `MCPTAPE_HOME` nor a home directory is known.
    #[error("cannot find the tape directory: set MCPTAPE_HOME or HOME")]
    NoHome,
    /// No random connection id could be drawn for a new recording.
    #[error(transparent)]
    Id(#[from] crate::ids::IdError),
    /// The tape directory cannot be created or used.
    #[error("cannot use tape directory `{}`", path.display())]
    Dir {
        /// The directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The tape cannot be opened or created.
    #[error("cannot open tape `{}`", path.display())]
    Open {
        /// The tape.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A tape that does not exist: its session name, its directory, and what is near
    /// ([`super::near`]).
    #[error(
        "no tape `{}` in `{}`; {hint}",
        super::near::stem(path),
        super::near::dir(path)
    )]
    Missing {
        /// Where it was looked for.
        path: PathBuf,
        /// The closest session there, a few of them, or that there are none.
        hint: String,
    },
    /// An entry could not be written.
    #[error("cannot write to tape `{}`", path.display())]
    Write {
        /// The tape.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The tape reached the size limit (`record --max-bytes`).
    #[error("tape `{}` reached its limit of {max} bytes (--max-bytes); recording stopped there", path.display())]
    Full {
        /// The tape.
        path: PathBuf,
        /// The limit.
        max: u64,
    },
    /// A file mcptape would write is refused by the rules of [`crate::tape::safety`].
    #[error("refusing to write `{}`: {why}", path.display())]
    Refused {
        /// The file.
        path: PathBuf,
        /// Which rule refuses it.
        why: super::safety::Unsafe,
    },
    /// The tape writer thread panicked: what it had not written is lost.
    #[error("the writer of tape `{}` crashed ({message}); the recording is incomplete", path.display())]
    WriterPanicked {
        /// The tape.
        path: PathBuf,
        /// The panic's message, when it had one.
        message: String,
    },
    /// The tape cannot be read.
    #[error("cannot read tape `{}`", path.display())]
    Read {
        /// The tape.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A line of a tape is not an entry.
    #[error("`{}` line {line}: {reason}", path.display())]
    BadLine {
        /// The tape.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// The tape's file is no longer what was loaded (something wrote to it since), so a
    /// rewrite of what was loaded would lose what was added.
    #[error("tape `{}` changed since it was loaded ({was} bytes, now {now}); it is left as it is", path.display())]
    Changed {
        /// The tape.
        path: PathBuf,
        /// Its size when loaded.
        was: u64,
        /// Its size now.
        now: u64,
    },
}
