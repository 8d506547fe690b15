//! What can go wrong reading an agent's transcript: the file, a line, its size. Every
//! message names the file, and the line where there is one.

use std::path::PathBuf;

use thiserror::Error;

/// Errors about transcript files (Claude Code sessions, Codex rollouts).
#[derive(Debug, Error)]
pub enum TranscriptError {
    /// The file (or a directory holding transcripts) cannot be read.
    #[error("cannot read transcript `{}`", path.display())]
    Read {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A path that is not a regular file or directory (a device, a FIFO, a socket).
    #[error("transcript `{}` is not a regular file", path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
    },
    /// A line that is not what the agent writes there.
    #[error("`{}` line {line}: {reason}", path.display())]
    Line {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong, in the parser's words.
        reason: String,
    },
    /// A line longer than a transcript line may be.
    #[error("`{}` line {line} is longer than {max} bytes", path.display())]
    LineTooLong {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The limit, in bytes.
        max: usize,
    },
    /// A file that is not a transcript of this agent at all.
    #[error("`{}` is not a {agent} transcript: {reason}", path.display())]
    NotTranscript {
        /// The file.
        path: PathBuf,
        /// Whose transcript it was read as.
        agent: &'static str,
        /// Why not.
        reason: String,
    },
}
