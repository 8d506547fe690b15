//! Layers: what sits between a downstream and a [`Link`], written once for every front
//! and every upstream.
//!
//! A [`Layer`] sees each client message on its way up ([`Layer::client`]) and each
//! server message on its way down ([`Layer::server`]), and every transport fact and the
//! close. It passes a message on, answers it itself (a policy's refusal, a fault), drops
//! it, or decides later (a call held for a person's approval). The stack is ordered from
//! the client: layer 0 is nearest to the downstream, and sees what the client sent and
//! what the client is given. The tap ([`crate::record::layer::TapLayer`]) is the first layer; it only
//! watches.
//!
//! [`Layered`] puts a [`Layers`] stack in front of any `Link` and is a `Link` itself, so a
//! downstream drives a layered upstream exactly as a bare one. The stdio proxy's byte
//! relay drives the stack without messages passing through it: when no layer
//! [`reads_first`](Layer::reads_first), bytes are forwarded as they come and the layers
//! are shown each line afterwards ([`Layers::watch`]).

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;

use crate::error::{LinkError, Result};
use crate::message::Message;
use crate::tape::Direction;
use crate::tape::close::{Close, CloseReason};
use crate::upstream::{Closed, Event, Incoming, Link};

pub mod any;
pub mod stack;

pub use any::AnyLink;
pub use stack::Stack;

/// A future a layer hands back: its decision later, or a wait for room.
pub type Later<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// What a layer does with a message.
pub enum Step {
    /// Pass it on (as it is, or changed).
    Pass(Message),
    /// Answer it here: these messages go back the way it came, and it goes no further.
    Answer(Vec<Message>),
    /// Drop it.
    Drop,
    /// Decide later (a call held until a person decides, a delayed fault).
    Later(Later<Step>),
    /// The server goes away here (an injected disconnect): this message goes no further,
    /// and the connection ends — on the HTTP front with this HTTP status for the request
    /// (none: the front's choice), on stdio as the server's exit.
    Disconnect(Option<u16>),
}

/// One layer of the stack. Every method has a default that passes everything on.
pub trait Layer: Send {
    /// True when the layer must see a message before it is forwarded (a policy, a
    /// fault): the stdio proxy then relays line by line instead of byte by byte.
    fn reads_first(&self) -> bool {
        false
    }

    /// A client message on its way to the upstream.
    fn client(&mut self, msg: Message) -> Step {
        Step::Pass(msg)
    }

    /// A server message on its way to the client.
    fn server(&mut self, msg: Message) -> Step {
        Step::Pass(msg)
    }

    /// A client line too long to hold ([`crate::framing::MAX_LINE_BYTES`]): its length
    /// and its first bytes. It is forwarded as bytes or not at all, never as a message.
    fn oversize(&mut self, dir: Direction, len: usize, prefix: &[u8]) {
        let _ = (dir, len, prefix);
    }

    /// A transport fact ([`Event`]).
    fn event(&mut self, event: &Event) {
        let _ = event;
    }

    /// The connection ended.
    fn close(&mut self, close: &Close) {
        let _ = close;
    }

    /// Facts this layer has to tell the layers nearer the client (a `$fault` it
    /// injected), taken after each message it was shown: the tap records them next to
    /// what they changed, before the changed message.
    fn events(&mut self) -> Vec<Event> {
        Vec::new()
    }

    /// A wait before the next message, when the layer is behind (the tap's queue is
    /// full): the live path slows to the layer's pace instead of queueing without bound.
    fn room(&mut self) -> Option<Later<()>> {
        None
    }
}

/// An ordered stack of layers; layer 0 is nearest to the client.
#[derive(Default)]
pub struct Layers {
    stack: Vec<Box<dyn Layer>>,
}

/// Where a client message went.
pub enum Flow {
    /// On to the upstream.
    Up(Message),
    /// Back to the client (a layer answered it).
    Back(Vec<Message>),
    /// Nowhere.
    Dropped,
}

impl Layers {
    /// No layers.
    pub fn new() -> Layers {
        Layers::default()
    }

    /// Adds a layer below the ones already there (further from the client).
    pub fn push(mut self, layer: impl Layer + 'static) -> Layers {
        self.stack.push(Box::new(layer));
        self
    }

    /// Adds a layer when there is one.
    pub fn push_some(self, layer: Option<impl Layer + 'static>) -> Layers {
        match layer {
            Some(layer) => self.push(layer),
            None => self,
        }
    }

    /// True when there are no layers.
    pub fn is_empty(&self) -> bool {
        self.stack.is_empty()
    }

    /// True when some layer must see messages before they are forwarded.
    pub fn reads_first(&self) -> bool {
        self.stack.iter().any(|l| l.reads_first())
    }

    /// Takes a client message down the stack. An answer from layer `i` goes back up
    /// through the layers above it.
    pub async fn client(&mut self, msg: Message) -> Flow {
        let mut msg = msg;
        for i in 0..self.stack.len() {
            let step = settle(self.stack[i].client(msg)).await;
            self.tell_above(i);
            match step {
                Step::Pass(m) => msg = m,
                Step::Answer(answers) => return Flow::Back(self.up_from(i, answers).await),
                Step::Drop | Step::Later(_) | Step::Disconnect(_) => return Flow::Dropped,
            }
        }
        Flow::Up(msg)
    }

    /// Takes a server message up the stack, from the layer furthest from the client;
    /// returns what reaches the client, in order.
    pub async fn server(&mut self, msg: Message) -> Vec<Message> {
        let n = self.stack.len();
        self.up_from(n, vec![msg]).await
    }

    /// Runs `msgs` up through layers `below-1 .. 0`.
    async fn up_from(&mut self, below: usize, msgs: Vec<Message>) -> Vec<Message> {
        let mut msgs = msgs;
        for i in (0..below).rev() {
            let mut next = Vec::with_capacity(msgs.len());
            for m in msgs {
                let step = settle(self.stack[i].server(m)).await;
                self.tell_above(i);
                match step {
                    Step::Pass(m) => next.push(m),
                    // A layer answering a server message would talk to the server; none
                    // does yet, so what it gives is passed on toward the client.
                    Step::Answer(more) => next.extend(more),
                    Step::Drop | Step::Later(_) | Step::Disconnect(_) => {}
                }
            }
            msgs = next;
        }
        msgs
    }

    /// Gives the facts layer `i` has to tell ([`Layer::events`]) to the layers nearer the
    /// client than it.
    fn tell_above(&mut self, i: usize) {
        let events = self.stack[i].events();
        for event in &events {
            for layer in &mut self.stack[..i] {
                layer.event(event);
            }
        }
    }

    /// Shows every layer a line that was already forwarded as bytes (the byte relay):
    /// only watching layers are ever driven this way, so their steps are not used.
    pub fn watch(&mut self, dir: Direction, line: Bytes) {
        let msg = Message::new(line);
        for layer in &mut self.stack {
            let _ = match dir {
                Direction::Send => layer.client(msg.clone()),
                _ => layer.server(msg.clone()),
            };
        }
    }

    /// Tells every layer of a line too long to hold.
    pub fn oversize(&mut self, dir: Direction, len: usize, prefix: &[u8]) {
        for layer in &mut self.stack {
            layer.oversize(dir, len, prefix);
        }
    }

    /// Tells every layer of a transport fact.
    pub fn event(&mut self, event: &Event) {
        for layer in &mut self.stack {
            layer.event(event);
        }
    }

    /// Tells every layer of an upstream that never started: its start fact, then its
    /// close.
    pub fn failed_start(&mut self, (start, close): (Event, Close)) {
        self.event(&start);
        self.close(&close);
    }

    /// Tells every layer the connection ended.
    pub fn close(&mut self, close: &Close) {
        for layer in &mut self.stack {
            layer.close(close);
        }
    }

    /// What [`Layers::room`] would wait for, taken now, so that a caller sharing the
    /// stack (the byte relay's two directions) can wait without holding it. None when no
    /// layer is behind: the live path then does not wait at all.
    pub fn room_wait(&mut self) -> Option<Later<()>> {
        let waits: Vec<Later<()>> = self.stack.iter_mut().filter_map(|l| l.room()).collect();
        if waits.is_empty() {
            return None;
        }
        Some(Box::pin(async move {
            for wait in waits {
                wait.await;
            }
        }))
    }

    /// Waits until every layer has room for more.
    pub async fn room(&mut self) {
        if let Some(wait) = self.room_wait() {
            wait.await;
        }
    }
}

/// A step, once it is decided.
async fn settle(step: Step) -> Step {
    let mut step = step;
    while let Step::Later(later) = step {
        step = later.await;
    }
    step
}

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
        }
    }

    /// The upstream, for what only it can tell.
    pub fn inner(&self) -> &L {
        &self.link
    }
}

impl<L: Link> Link for Layered<L> {
    fn started(&self) -> Option<Event> {
        // Already told to this stack's layers; a stack above gets its own from its link.
        self.link.started()
    }

    async fn send(&mut self, msg: Message) -> Result<(), LinkError> {
        let flow = self.layers.client(msg).await;
        let sent = match flow {
            Flow::Up(msg) => self.link.send(msg).await,
            Flow::Back(answers) => {
                self.ready.extend(answers);
                Ok(())
            }
            Flow::Dropped => Ok(()),
        };
        self.layers.room().await;
        sent
    }

    /// Cancel-safe as long as no layer decides later on a server message (none does): a
    /// message taken from the upstream reaches `ready` before anything is awaited, and the
    /// wait for room is kept in `self`.
    async fn next(&mut self) -> Option<Incoming> {
        loop {
            if let Some(msg) = self.ready.pop_front() {
                return Some(Incoming::Message(msg));
            }
            if let Some(wait) = &mut self.wait {
                wait.await;
                self.wait = None;
            }
            match self.link.next().await? {
                Incoming::Message(msg) => {
                    let out = self.layers.server(msg).await;
                    self.ready.extend(out);
                    self.wait = self.layers.room_wait();
                }
                Incoming::Event(event) => self.layers.event(&event),
                refused @ Incoming::Refused { .. } => return Some(refused),
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
        self.link.interrupt(reason).await
    }

    async fn close(mut self, reason: CloseReason) -> Result<Closed> {
        let closed = self.link.close(reason.clone()).await;
        let status = match &closed {
            Ok(c) => c.status(),
            Err(_) => crate::tape::close::CloseStatus::Unknown,
        };
        self.layers.close(&Close::new(reason, status));
        closed
    }
}

#[cfg(test)]
mod tests;
