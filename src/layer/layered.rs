//! [`Layered`]: a [`Link`] behind a stack of [`Layers`], a `Link` itself.
//!
//! Invariants:
//! - [`Link::next`] is cancel-safe: a message taken from the upstream reaches `ready`
//!   (or the layers' pending decisions) before anything is awaited; the wait for room
//!   is kept in `self`; and a server message a layer decides on later (a `delay` fault)
//!   waits in the layers ([`Layers::decided`]), polled alongside the upstream, so it
//!   holds up no other message and a `next` dropped in a `select!` loses nothing.
//! - An injected disconnect ([`crate::layer::Step::Disconnect`]) ends the connection as
//!   if the server went away: what was already given to the client still reaches it,
//!   then `next` ends, `send` says the server is gone, and the close names it
//!   ([`CloseReason::InjectedDisconnect`]) — the upstream is still closed its own way (a
//!   child's stdin closed, a remote's `DELETE`).
//! - Once the upstream has ended, `next` still gives what the layers decide later (a
//!   delayed answer), then ends; a shutdown ([`Link::interrupt`]) forgets those.
//! - A client message a layer decides on later stays blocking (an approval holds what
//!   the client sends next).

use std::collections::VecDeque;

use bytes::Bytes;

use crate::error::{LinkError, Result};
use crate::layer::{Flow, Later, Layers};
use crate::message::Message;
use crate::tape::Direction;
use crate::tape::close::{Close, CloseReason, CloseStatus};
use crate::upstream::{Closed, Disconnect, Event, Incoming, Link};

/// A [`Link`] behind a stack of layers: a `Link` itself.
pub struct Layered<L> {
    link: L,
    layers: Layers,
    /// Messages for the client that did not come from the upstream (a layer's answers),
    /// or came with others (one server message a layer turned into several).
    ready: VecDeque<Message>,
    /// The layers' wait for room before more is taken from the upstream, kept here so
    /// that a `next` cancelled in the middle of it loses nothing.
    wait: Option<Later<()>>,
    /// The upstream's `next` ended while a layer still had to decide on a server message:
    /// only that decision is awaited, then `next` ends as the upstream's did.
    drained: bool,
}

impl<L: Link> Layered<L> {
    /// `link` behind `layers`; the layers are told of the link's start.
    pub fn new(link: L, mut layers: Layers) -> Layered<L> {
        if let Some(start) = link.started() {
            layers.event(&start);
        }
        Layered {
            link,
            layers,
            ready: VecDeque::new(),
            wait: None,
            drained: false,
        }
    }

    /// The upstream, for what only it can tell.
    pub fn inner(&self) -> &L {
        &self.link
    }

    /// True while a layer is still to decide on a server message (a delayed answer):
    /// more is owed to the client even when the upstream has nothing.
    pub fn is_deciding(&self) -> bool {
        self.layers.is_deciding()
    }
}

impl<L: Link> Link for Layered<L> {
    fn started(&self) -> Option<Event> {
        // Already told to this stack's layers; a stack above gets its own from its link.
        self.link.started()
    }

    async fn send(&mut self, msg: Message) -> Result<(), LinkError> {
        if self.layers.gone().is_some() {
            return Err(LinkError::Gone);
        }
        let flow = self.layers.client(msg).await;
        let sent = match flow {
            Flow::Up(msg) => {
                self.drained = false;
                self.link.send(msg).await
            }
            Flow::Back(answers) => {
                self.ready.extend(answers);
                Ok(())
            }
            Flow::Dropped | Flow::Gone => Ok(()),
        };
        self.layers.room().await;
        sent
    }

    async fn next(&mut self) -> Option<Incoming> {
        loop {
            if let Some(msg) = self.ready.pop_front() {
                return Some(Incoming::Message(msg));
            }
            if self.layers.gone().is_some() {
                return None;
            }
            if let Some(wait) = &mut self.wait {
                wait.await;
                self.wait = None;
            }
            if self.drained && !self.layers.is_deciding() {
                self.drained = false;
                return None;
            }
            let (link, layers) = (&mut self.link, &mut self.layers);
            tokio::select! {
                biased;
                decided = layers.decided() => {
                    let out = layers.resume(decided);
                    self.ready.extend(out);
                    self.wait = layers.room_wait();
                }
                incoming = link.next(), if !self.drained => match incoming {
                    Some(Incoming::Message(msg)) => {
                        let out = layers.server(msg);
                        self.ready.extend(out);
                        self.wait = layers.room_wait();
                    }
                    Some(Incoming::Event(event)) => layers.event(&event),
                    Some(refused @ Incoming::Refused { .. }) => return Some(refused),
                    // Still owed a decision (a delayed answer): the upstream is not
                    // asked again until it is given.
                    None if layers.is_deciding() => self.drained = true,
                    None => return None,
                },
            }
        }
    }

    async fn oversize(&mut self, len: usize, prefix: Bytes) {
        self.layers.oversize(Direction::Send, len, &prefix);
        self.link.oversize(len, prefix).await;
    }

    async fn end_input(&mut self) {
        self.link.end_input().await;
    }

    async fn cancel(&mut self, id: &str) {
        self.link.cancel(id).await;
    }

    async fn interrupt(&mut self, reason: &CloseReason) -> bool {
        // A shutdown is not held off by a delayed answer (nor a never-answered one).
        self.layers.abandon();
        self.link.interrupt(reason).await
    }

    fn disconnected(&self) -> Option<Disconnect> {
        self.layers.gone().cloned()
    }

    async fn close(mut self, reason: CloseReason) -> Result<Closed> {
        let reason = match self.layers.gone() {
            Some(_) => CloseReason::InjectedDisconnect,
            None => reason,
        };
        let closed = self.link.close(reason.clone()).await;
        let status = match &closed {
            Ok(c) => c.status(),
            Err(_) => CloseStatus::Unknown,
        };
        self.layers.close(&Close::new(reason, status));
        closed
    }
}

#[cfg(test)]
mod tests;
