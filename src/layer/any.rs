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
use crate::upstream::replay::ReplayLink;
use crate::upstream::{Closed, Event, Incoming, Link};

/// One of the three upstreams (the live ones behind their layers).
// One per connection: the size difference between the variants costs nothing.
#[allow(clippy::large_enum_variant)]
pub enum AnyLink {
    /// A server process.
    Child(Layered<ChildLink>),
    /// A remote Streamable HTTP server.
    Http(Layered<HttpLink>),
    /// The replay engine.
    Replay(ReplayLink),
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

impl AnyLink {
    /// A message given to the client in place of a refused request's answer, through the
    /// layers ([`Layered::stand_in`]); the replay engine has none and refuses nothing.
    pub async fn stand_in(&mut self, msg: Message) -> Vec<Message> {
        match self {
            AnyLink::Child(link) => link.stand_in(msg).await,
            AnyLink::Http(link) => link.stand_in(msg).await,
            AnyLink::Replay(_) => vec![msg],
        }
    }
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

    async fn end_input(&mut self) {
        each!(self, link => link.end_input().await)
    }

    async fn interrupt(&mut self, reason: &CloseReason) -> bool {
        each!(self, link => link.interrupt(reason).await)
    }

    async fn close(self, reason: CloseReason) -> Result<Closed> {
        each!(self, link => link.close(reason).await)
    }
}
