//! Verify: play the client's side of a recorded connection against a live server and
//! classify every answer.
//!
//! For one recorded connection: start the server, send each recorded client message in
//! order (requests wait for their answer, with a per-call timeout), answer the server's
//! own requests (sampling, elicitation, roots, ping) with the client answers the tape
//! recorded for the same method, and stop the server the MCP way. Each recorded request
//! is then `same`, `changed` (every differing path), `new-error`, `gone-error`,
//! `skipped` (a tool that may write, without `--allow-writes`) or `not-played` (the
//! server was gone). `initialize` is the handshake: played, not classified.
//!
//! Comparison: `result._meta` is left out unless `--match-meta` (MCP metadata), JSON
//! carried in strings is parsed in place, the ignore globs are removed from both sides,
//! a recorded `"[REDACTED]"` (or `[REDACTED]` span) matches anything.
//! A JSON-RPC error and a tool result with `isError: true` are both errors; two errors
//! compare by code, then by message.
//!
//! Parts: `compare` classifies one answer ([`Class`], [`Played`], [`compare()`]);
//! `answers` holds the tape's client answers to server requests; `player` plays one
//! connection ([`run_connection`]): a downstream driving the live server as an
//! [`crate::layer::AnyLink`] (a child process or an HTTP session, with no layers). It
//! only sends, receives and stops through the [`crate::upstream::Link`].

use std::collections::HashSet;
use std::time::Duration;

use serde_json::Value;

use crate::matcher::Glob;
use crate::tape::{Direction, Tape};

mod answers;
pub mod compare;
mod faulted;
mod gated;
mod player;

pub use compare::{Class, Played};
pub use player::mrtr::Chains;
pub use player::run_connection;

/// What verifying one connection found.
#[derive(Debug, Default)]
pub struct Run {
    /// One per recorded request (the handshake aside).
    pub outcomes: Vec<Played>,
    /// What kept the run from being complete (a crash, an unanswerable server request…).
    pub problems: Vec<String>,
    /// The server could not be started or went away: the run is incomplete (exit 3).
    pub broken: bool,
    /// The server went away on its own (closed its output, stopped reading): its exit
    /// status and last stderr lines are then a problem of the run.
    pub server_gone: bool,
}

/// How to verify.
#[derive(Debug, Clone)]
pub struct Options {
    /// Paths left out of the comparison.
    pub ignore: Vec<Glob>,
    /// Play tool calls that may write.
    pub allow_writes: bool,
    /// Per-call timeout.
    pub timeout: Duration,
    /// Framing limit for the server's lines.
    pub max_line: usize,
    /// Compare `result._meta` too (`--match-meta`); left out by default.
    pub match_meta: bool,
    /// The run's multi-round-trip chains, shared by its connections.
    pub chains: player::mrtr::Chains,
    /// Counts each recorded request played (or skipped), for a person's progress bar.
    pub progress: crate::progress::Progress,
    /// The rules the report's text from outside is redacted with (the server's command
    /// line, its last stderr lines): a report may be shared, like a tape.
    pub redactor: crate::redact::Redactor,
}

/// The tools the tape's recorded `tools/list` answers mark `readOnlyHint: true`.
pub fn read_only_tools(tape: &Tape, server: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    for e in tape
        .entries
        .iter()
        .filter(|e| e.meta.server == server && e.meta.dir == Direction::Recv)
    {
        let v = e.message.value();
        for tool in v["result"]["tools"].as_array().into_iter().flatten() {
            if tool["annotations"]["readOnlyHint"] == Value::Bool(true)
                && let Some(name) = tool["name"].as_str()
            {
                out.insert(name.to_owned());
            }
        }
    }
    out
}

/// Where the live server is.
#[derive(Debug, Clone)]
pub enum Target {
    /// A command to start fresh for each connection.
    Command(Vec<String>),
    /// A Streamable HTTP server, with headers for every request.
    Url(String, Vec<(String, String)>),
}

#[cfg(test)]
mod tests;
