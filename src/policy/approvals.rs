//! The approvals desk: where a call a policy's `ask` holds waits for a person.
//!
//! (Issue 17, being built: the interface the policy layer codes against is fixed here;
//! the bodies are the `hold` branch's.)

#![allow(dead_code, unused_variables)] // until the desk is built (issue 17)

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use crate::error::Result;

/// What a held call shows a person (`mcptape approvals`).
#[derive(Debug, Clone)]
pub struct Request {
    /// The server's name.
    pub server: String,
    /// The method (`tools/call`, or another a rule names).
    pub method: String,
    /// The tool, for a `tools/call`.
    pub tool: Option<String>,
    /// The arguments, already redacted.
    pub arguments: Value,
    /// The ids of the rules that said `ask`.
    pub rules: Vec<String>,
}

/// What a person (or the clock) decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// `mcptape approve ID`.
    Approved {
        /// Who (`user@host`).
        by: String,
    },
    /// `mcptape deny ID [--reason]`.
    Denied {
        /// Who (`user@host`).
        by: String,
        /// `--reason`.
        reason: Option<String>,
    },
    /// Nobody decided within the timeout.
    TimedOut,
}

/// The desk: a directory only the user can reach.
#[derive(Debug, Clone)]
pub struct Desk {
    dir: PathBuf,
}

/// A call on the desk. Dropping it withdraws it (the client cancelled, the connection
/// ended): it is no longer listed, and a later `approve` says it is gone.
#[derive(Debug)]
pub struct Held {
    /// The id a person names (`mcptape approve ID`).
    pub id: String,
}

impl Desk {
    /// The desk of this user's mcptape home (`$MCPTAPE_HOME`).
    pub fn open() -> Result<Desk> {
        todo!("the hold branch")
    }

    /// A desk in `dir` (tests).
    pub fn at(dir: PathBuf) -> Desk {
        Desk { dir }
    }

    /// Puts a call on the desk.
    pub fn hold(&self, request: Request) -> Result<Held> {
        todo!("the hold branch")
    }
}

impl Held {
    /// Waits for a decision, at most `timeout`.
    pub async fn wait(&mut self, timeout: Duration) -> Answer {
        todo!("the hold branch")
    }
}
