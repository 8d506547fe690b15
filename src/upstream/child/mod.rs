//! A server process as the upstream, over its stdin and stdout: [`ChildLink`], the
//! process as a [`crate::upstream::Link`], line by line. (The stdio proxy's fast path,
//! the byte relay, is [`crate::downstream::relay`]: there the downstream and this
//! upstream are one loop.)
//!
//! Both stop the server the MCP way
//! (<https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#stdio>):
//! its stdin is closed, then SIGTERM and SIGKILL follow after the graces of
//! [`crate::process`]; both pass the server's exit status on.

use crate::error::ProcessError;
use crate::tape::close::{Close, CloseReason, CloseStatus};
use crate::tape::lifecycle::{Lifecycle, Start};
use crate::upstream::Event;

mod link;

pub use link::ChildLink;

/// Read buffer size for each direction.
pub const READ_BUFFER_BYTES: usize = 64 * 1024;

/// The `$transport/start` fact of a server: its command line, and its pid once it runs.
pub fn start_event(argv: &[String], pid: Option<u32>) -> Event {
    Lifecycle::Start(Start {
        command: Some(argv.to_vec()),
        pid,
        ..Start::default()
    })
    .event()
}

/// What the tape says of a server that could not be started: its start without a pid,
/// and a close that says why.
pub fn start_failure(argv: &[String], error: &ProcessError) -> (Event, Close) {
    (
        start_event(argv, None),
        Close::new(
            CloseReason::StartFailed(crate::error::chain(error)),
            CloseStatus::Unknown,
        ),
    )
}

#[cfg(test)]
mod tests;
