//! What can go wrong at the approvals desk: each error names the desk's directory, the
//! file, or the id, and says how to fix what a person can fix.

use std::path::PathBuf;

use thiserror::Error;

/// An error of the approvals desk ([`super::Desk`]).
#[derive(Debug, Error)]
pub enum ApprovalError {
    /// The desk's directory cannot be made or read.
    #[error("cannot use the approvals directory `{}`", path.display())]
    Dir {
        /// The directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The desk's directory is not one only this user can reach.
    #[error("the approvals directory `{}` {why}; {fix}", path.display())]
    Unsafe {
        /// The directory.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
        /// How to make it right.
        fix: String,
    },
    /// A file of the desk cannot be written or read.
    #[error("cannot {what} `{}`", path.display())]
    File {
        /// `write`, `read`, `remove`.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// No call of that id is waiting.
    #[error("no call `{id}` is waiting for a decision; {}", waiting_now(waiting))]
    Unknown {
        /// The id given (escaped for the terminal).
        id: String,
        /// The ids that are waiting.
        waiting: Vec<String>,
    },
    /// The call was decided already (by a person, or it timed out, or was withdrawn).
    #[error("call `{id}` is no longer waiting: {what}; {}", waiting_now(waiting))]
    Decided {
        /// The id.
        id: String,
        /// What became of it.
        what: String,
        /// The ids that are waiting.
        waiting: Vec<String>,
    },
    /// The process that held the call is gone.
    #[error(
        "call `{id}` is no longer waiting: the process that held it (pid {pid}) is gone; {}",
        waiting_now(waiting)
    )]
    Stale {
        /// The id.
        id: String,
        /// The holder's pid.
        pid: u32,
        /// The ids that are waiting.
        waiting: Vec<String>,
    },
    /// A `--reason` too long to pass on.
    #[error("--reason is {len} bytes long; at most {max} are passed on to the agent")]
    ReasonTooLong {
        /// Its length.
        len: usize,
        /// The most there may be.
        max: usize,
    },
    /// No random id could be drawn.
    #[error(transparent)]
    Id(#[from] crate::ids::IdError),
}

/// "waiting: a, b" or "none is waiting".
fn waiting_now(waiting: &[String]) -> String {
    if waiting.is_empty() {
        "no call is waiting (`mcptape approvals` lists them)".to_owned()
    } else {
        format!("waiting: {}", waiting.join(", "))
    }
}
