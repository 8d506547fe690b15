//! What can go wrong reading an agent's transcripts: every error names the file, and the
//! line where there is one.

use std::path::PathBuf;

use thiserror::Error;

/// An agent transcript that cannot be imported.
#[derive(Debug, Error)]
pub enum ImportError {
    /// The file or directory cannot be opened or read.
    #[error("cannot read transcript `{path}`")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The path names neither a transcript nor a directory of them.
    #[error("`{path}` is not a transcript file or directory: {why}")]
    NotTranscript {
        /// The path.
        path: PathBuf,
        /// What it is instead.
        why: String,
    },
    /// A line is not JSON.
    #[error("transcript `{path}` line {line} is not valid JSON: {why}")]
    BadLine {
        /// The file.
        path: PathBuf,
        /// 1-based.
        line: usize,
        /// The parser's words.
        why: String,
    },
    /// A line is JSON but not an object.
    #[error("transcript `{path}` line {line} is not a JSON object")]
    NotObject {
        /// The file.
        path: PathBuf,
        /// 1-based.
        line: usize,
    },
    /// A line is longer than any transcript line mcptape reads.
    #[error("transcript `{path}` line {line} is longer than {max} bytes")]
    TooLong {
        /// The file.
        path: PathBuf,
        /// 1-based.
        line: usize,
        /// The limit.
        max: usize,
    },
    /// The agent's default place cannot be found (no home directory).
    #[error("cannot find {agent}'s transcripts: {why}")]
    NoPlace {
        /// The agent.
        agent: &'static str,
        /// Why.
        why: String,
    },
    /// A line that is JSON, but not what the agent writes there (a member missing or of
    /// the wrong type).
    #[error("transcript `{path}` line {line}: {why}")]
    Shape {
        /// The file.
        path: PathBuf,
        /// 1-based.
        line: usize,
        /// What is wrong, in the parser's words.
        why: String,
    },
    /// A file that reads, but is no session of this agent (no session line at all).
    #[error("`{path}` is not a {agent} transcript: {why}")]
    NotSession {
        /// The file.
        path: PathBuf,
        /// Whose transcript it was read as.
        agent: &'static str,
        /// Why not.
        why: String,
    },
}
