//! [`Layered`]: a [`Link`] behind a stack of [`Layers`], a `Link` itself.
//!
//! Invariants:
//! - [`Link::next`] is cancel-safe: a message taken from the upstream reaches `ready`
//!   (or the layers' pending decisions) before anything is awaited; the wait for room
//!   is kept in `self`; and a message a layer decides on later, either way, waits in the
//!   layers ([`Layers::decided`]), polled alongside the upstream, so it holds up no other
//!   message and a `next` dropped in a `select!` loses nothing. What a decision taken
//!   later sends on is queued in `self` as soon as it is known — toward the client in
//!   `ready`, toward the upstream in `upward` — never only in a future.
//! - A client message a layer holds (a call waiting for approval) holds up nothing:
//!   [`Link::send`] returns at once, what the client sends after it flows past it, and
//!   their answers come. Once it is decided it goes on from the next layer down: let
//!   through, it is queued in `upward` and sent to the upstream by the next `next` or
//!   `send`, whichever comes first, before anything the client sends after that (the
//!   queue is sent first, in order); answered by the layer (a refusal), the answer goes
//!   up to the client through the layers above it; those layers are told the holder's
//!   facts (a `$policy/decision`) before they see the answer.
//! - [`Link::end_input`] while a client message is held is put off: the upstream's
//!   input is closed once no message is held any more (each let through is sent first),
//!   so a client that sends a call and closes its side at once (a script piping
//!   requests) still has the call decided and answered. `next` goes on meanwhile.
//! - An injected disconnect ([`crate::layer::Step::Disconnect`]) ends the connection as
//!   if the server went away: what was already given to the client still reaches it,
//!   then `next` ends, `send` says the server is gone, and the close names it
//!   ([`CloseReason::InjectedDisconnect`]) — the upstream is still closed its own way (a
//!   child's stdin closed, a remote's `DELETE`).
//! - Once the upstream has ended, `next` still gives what the layers decide later on
//!   server messages (a delayed answer), then ends; the client messages still held are
//!   forgotten then (there is no upstream left for them). A shutdown
//!   ([`Link::interrupt`]) and [`Link::close`] forget every decision still to come:
//!   a held call's future is dropped, which withdraws it (its approval request goes).

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
    /// Client messages a layer held and then let through, not yet sent to the upstream:
    /// sent first by the next `next` or `send`.
    upward: VecDeque<Message>,
    /// The upstream's `next` ended while a layer still had to decide on a server message:
    /// only that decision is awaited, then `next` ends as the upstream's did.
    drained: bool,
    /// The client has said everything while a message was held: the upstream's input
    /// is closed once none is.
    end_owed: bool,
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
            upward: VecDeque::new(),
            drained: false,
            end_owed: false,
        }
    }

    /// The upstream, for what only it can tell.
    pub fn inner(&self) -> &L {
        &self.link
    }

    /// True while a layer is still to decide on a message (a delayed answer, a call held
    /// for approval): more is owed to the client even when the upstream has nothing.
    pub fn is_deciding(&self) -> bool {
        self.layers.is_deciding() || !self.upward.is_empty()
    }

    /// Sends the upstream the held messages let through since, in order; then closes
    /// its input when that was put off and nothing is held any more. A message is taken
    /// off the queue before it is sent: were a `next` dropped in the middle of its send
    /// (no upstream's `send` waits before it has the message), it is sent at most once —
    /// a call approved is never run twice.
    async fn flush(&mut self) -> Result<(), LinkError> {
        while let Some(msg) = self.upward.pop_front() {
            self.drained = false;
            if let Err(e) = self.link.send(msg).await {
                // The upstream is gone: so is what was queued for it (its end shows in
                // `next`).
                self.upward.clear();
                return Err(e);
            }
        }
        if self.end_owed && !self.layers.is_holding() {
            self.link.end_input().await;
            self.end_owed = false;
        }
        Ok(())
    }

    /// Acts on where a decision taken later sent its message.
    fn resumed(&mut self, flow: Flow) {
        match flow {
            Flow::Up(msg) => self.upward.push_back(msg),
            Flow::Back(out) => self.ready.extend(out),
            Flow::Dropped | Flow::Gone | Flow::Held => {}
        }
        self.wait = self.layers.room_wait();
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
        // What was held and let through goes first: the upstream sees the client's
        // messages in the order they were let through.
        let flushed = self.flush().await;
        let sent = match self.layers.client(msg) {
            Flow::Up(msg) => {
                self.drained = false;
                self.link.send(msg).await
            }
            Flow::Back(answers) => {
                self.ready.extend(answers);
                Ok(())
            }
            Flow::Dropped | Flow::Gone | Flow::Held => Ok(()),
        };
        self.layers.room().await;
        flushed.and(sent)
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
            // A failure shows as the upstream's end, below.
            let _ = self.flush().await;
            if self.drained && !self.layers.is_deciding() {
                self.drained = false;
                return None;
            }
            let (link, layers) = (&mut self.link, &mut self.layers);
            tokio::select! {
                biased;
                decided = layers.decided() => {
                    let flow = layers.resume(decided);
                    self.resumed(flow);
                }
                incoming = link.next(), if !self.drained => match incoming {
                    Some(Incoming::Message(msg)) => {
                        let out = layers.server(msg);
                        self.ready.extend(out);
                        self.wait = layers.room_wait();
                    }
                    Some(Incoming::Event(event)) => layers.event(&event),
                    Some(refused @ Incoming::Refused { .. }) => return Some(refused),
                    None => {
                        // Nowhere left to pass a held call to.
                        layers.forget_held();
                        self.upward.clear();
                        self.end_owed = false;
                        // Still owed a decision (a delayed answer): the upstream is not
                        // asked again until it is given.
                        if !layers.is_deciding() {
                            return None;
                        }
                        self.drained = true;
                    }
                },
            }
        }
    }

    async fn oversize(&mut self, len: usize, prefix: Bytes) {
        self.layers.oversize(Direction::Send, len, &prefix);
        self.link.oversize(len, prefix).await;
    }

    async fn end_input(&mut self) {
        if self.layers.is_holding() {
            // Put off until the held messages are decided (`flush`).
            self.end_owed = true;
            return;
        }
        let _ = self.flush().await;
        self.link.end_input().await;
    }

    async fn cancel(&mut self, id: &str) {
        // A layer holding it withdraws it; the upstream stops reading an answer it owes.
        self.layers.cancelled(id);
        self.link.cancel(id).await;
    }

    async fn interrupt(&mut self, reason: &CloseReason) -> bool {
        // A shutdown is not held off by a delayed answer (nor a never-answered one), nor
        // by a call held for approval (it is withdrawn).
        self.layers.abandon();
        self.upward.clear();
        self.end_owed = false;
        self.link.interrupt(reason).await
    }

    fn disconnected(&self) -> Option<Disconnect> {
        self.layers.gone().cloned()
    }

    async fn close(mut self, reason: CloseReason) -> Result<Closed> {
        // Nothing is held through the upstream's close (a held call is withdrawn now, not
        // once a child's grace is over).
        self.layers.abandon();
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
mod held_tests;
#[cfg(test)]
mod tests;
