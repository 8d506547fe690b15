//! Any upstream, chosen at run time: what the built-in client and verify's player drive
//! when the command line decides between a child process, a remote server and the replay
//! engine. It only delegates — each transport's logic lives in its own [`Link`].

use bytes::Bytes;

use crate::error::{LinkError, Result};
use crate::layer::Layered;
use crate::message::Message;
use crate::tape::close::CloseReason;
use crate::upstream::child::ChildLink;
use crate::upstream::http::HttpLink;
use crate::upstream::refusals::Refusals;
use crate::upstream::replay::ReplayLink;
use crate::upstream::{Closed, Disconnect, Event, Incoming, Link};

/// One of the three upstreams (the live ones behind their layers; a remote's refusals
/// read as the JSON-RPC errors a client is given, [`Refusals`]).
// One per connection: the size difference between the variants costs nothing.
#[allow(clippy::large_enum_variant)]
pub enum AnyLink {
    /// A server process.
    Child(Layered<ChildLink>),
    /// A remote Streamable HTTP server.
    Http(Layered<Refusals<HttpLink>>),
    /// The replay engine, behind its layers (faults).
    Replay(Layered<ReplayLink>),
}

/// Runs `$body` with `$link` bound to whichever upstream `$any` holds.
macro_rules! each {
    ($any:expr, $link:ident => $body:expr) => {
        match $any {
            AnyLink::Child($link) => $body,
            AnyLink::Http($link) => $body,
            AnyLink::Replay($link) => $body,
        }
    };
}

impl Link for AnyLink {
    fn started(&self) -> Option<Event> {
        each!(self, link => link.started())
    }

    async fn send(&mut self, msg: Message) -> Result<(), LinkError> {
        each!(self, link => link.send(msg).await)
    }

    async fn next(&mut self) -> Option<Incoming> {
        each!(self, link => link.next().await)
    }

    async fn oversize(&mut self, len: usize, prefix: Bytes) {
        each!(self, link => link.oversize(len, prefix).await)
    }

    async fn cancel(&mut self, id: &str) {
        each!(self, link => link.cancel(id).await)
    }

    async fn end_input(&mut self) {
        each!(self, link => link.end_input().await)
    }

    async fn interrupt(&mut self, reason: &CloseReason) -> bool {
        each!(self, link => link.interrupt(reason).await)
    }

    fn disconnected(&self) -> Option<Disconnect> {
        each!(self, link => link.disconnected())
    }

    async fn close(self, reason: CloseReason) -> Result<Closed> {
        each!(self, link => link.close(reason).await)
    }
}
