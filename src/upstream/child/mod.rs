//! A server process as the upstream, over its stdin and stdout, in one of two modes:
//!
//! - [`relay`]: the byte relay, the stdio proxy's fast path when no layer must read a
//!   message before it is forwarded. Bytes are copied as they come, whole lines or not,
//!   and only then cut into lines for the layers ([`crate::layer::Layers::watch`]).
//! - [`ChildLink`]: the process as a [`crate::upstream::Link`], line by line, for when
//!   a layer must see each message first (or `MCPTAPE_RELAY=lines` asks for it).
//!
//! Both stop the server the MCP way
//! (<https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#stdio>):
//! its stdin is closed, then SIGTERM and SIGKILL follow after the graces of
//! [`crate::process`]; both pass the server's exit status on.

use crate::error::ProcessError;
use crate::layer::Layers;
use crate::tape::close::{Close, CloseReason, CloseStatus};
use crate::tape::lifecycle::{Lifecycle, Start};
use crate::upstream::Event;

mod link;
mod relay;

pub use link::ChildLink;
pub use relay::relay;

/// Read buffer size for each direction.
pub const READ_BUFFER_BYTES: usize = 64 * 1024;

/// The `$transport/start` fact of a server: its command line, and its pid once it runs.
fn start_event(argv: &[String], pid: Option<u32>) -> Event {
    Lifecycle::Start(Start {
        command: Some(argv.to_vec()),
        pid,
        ..Start::default()
    })
    .event()
}

/// Tells the layers of a server that could not be started: its start without a pid, and
/// a close that says why.
pub fn start_failed(layers: &mut Layers, argv: &[String], error: &ProcessError) {
    layers.event(&start_event(argv, None));
    layers.close(&Close::new(
        CloseReason::StartFailed(crate::error::chain(error)),
        CloseStatus::Unknown,
    ));
}

#[cfg(test)]
mod tests;
