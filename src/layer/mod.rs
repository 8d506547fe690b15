//! Layers: what sits between a downstream and a [`Link`], written once for every front
//! and every upstream.
//!
//! A [`Layer`] sees each client message on its way up ([`Layer::client`]) and each
//! server message on its way down ([`Layer::server`]), and every transport fact and the
//! close. It passes a message on, answers it itself (a policy's refusal, a fault), drops
//! it, or decides later (a call held for a person's approval, a delayed answer). A
//! decision taken later holds up nothing else: the message waits in the stack
//! ([`Layers::decided`]) while the others flow, then goes on from the layer after the
//! one that held it (a client message on down toward the upstream, or its answer back
//! up; a server message on up), and the layers nearer the client are told what that
//! layer has to say about it ([`Layer::events`]). The stack is ordered from
//! the client: layer 0 is nearest to the downstream, and sees what the client sent and
//! what the client is given. The tap ([`crate::record::layer::TapLayer`]) is the first layer; it only
//! watches.
//!
//! [`Layered`] puts a [`Layers`] stack in front of any `Link` and is a `Link` itself, so a
//! downstream drives a layered upstream exactly as a bare one. The stdio proxy's byte
//! relay drives the stack without messages passing through it: when no layer
//! [`reads_first`](Layer::reads_first), bytes are forwarded as they come and the layers
//! are shown each line afterwards ([`Layers::watch`]).

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;

use crate::message::{Kind, Message};
use crate::tape::Direction;
use crate::tape::close::Close;
use crate::upstream::{Disconnect, Event};

pub mod any;
pub mod layered;
pub mod stack;

pub use any::AnyLink;
pub use layered::Layered;
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
    /// injected, a `$policy/decision`), taken after each message it was shown, after
    /// each decision it took later, and after decisions still to come were forgotten
    /// ([`Layers::abandon`]): the tap records them next to what they changed, before
    /// the changed message.
    fn events(&mut self) -> Vec<Event> {
        Vec::new()
    }

    /// The client gave up on request `id` (its JSON text) without a word: an HTTP
    /// client closed the request's stream, which is how the stateless revision cancels.
    /// A layer holding that request withdraws it (a `notifications/cancelled` comes to
    /// [`Layer::client`] as any message).
    fn cancelled(&mut self, id: &str) {
        let _ = id;
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
    /// Server messages a layer decides on later (a delay), with that layer's place.
    pending: FuturesUnordered<Later<Decided>>,
    /// Client messages a layer decides on later (a call held for approval), with that
    /// layer's place: apart from `pending`, because a held call is forgotten when the
    /// upstream it would go to is gone, and a delayed answer is not.
    held: FuturesUnordered<Later<Decided>>,
    /// The injected disconnect, once a layer said one.
    gone: Option<Disconnect>,
}

/// A decision a layer took later: the layer (its place in the stack), which way the
/// message was going, the request it is or answers, and the step.
pub struct Decided {
    layer: usize,
    side: Side,
    id: Option<String>,
    step: Step,
}

/// Which way a message a layer decided on later was going.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    /// From the client, toward the upstream.
    Client,
    /// From the server, toward the client.
    Server,
}

/// `later`, once it resolves, as the decision of layer `layer` on a message going
/// `side` (`id`: the request it is or answers).
fn deciding(layer: usize, side: Side, id: Option<String>, later: Later<Step>) -> Later<Decided> {
    Box::pin(async move {
        Decided {
            layer,
            side,
            id,
            step: later.await,
        }
    })
}

/// The id of a request or a response (its JSON text), for naming a disconnect.
fn request_id(msg: &Message) -> Option<String> {
    match msg.kind() {
        Kind::Request | Kind::Response | Kind::Error => msg.id().map(str::to_owned),
        _ => None,
    }
}

/// Where a client message went.
pub enum Flow {
    /// On to the upstream.
    Up(Message),
    /// Back to the client (a layer answered it).
    Back(Vec<Message>),
    /// Nowhere.
    Dropped,
    /// Nowhere, and the connection ends: a layer injected a disconnect
    /// ([`Layers::gone`]).
    Gone,
    /// Nowhere yet: a layer decides later ([`Layers::decided`]), and the message goes
    /// on from there ([`Layers::resume`]).
    Held,
}

/// What a layer's step on a client message leaves to do.
enum Onward {
    /// Take it on down, to the next layer.
    Down(Message),
    /// Nothing: it went there.
    Went(Flow),
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
    /// through the layers above it. A layer's decision later on it (a call held for
    /// approval) is kept pending ([`Layers::decided`]): it holds up nothing the client
    /// sends after it.
    pub fn client(&mut self, msg: Message) -> Flow {
        self.down_from(0, msg)
    }

    /// Runs `msg` down through layers `from ..`: where it went.
    fn down_from(&mut self, from: usize, msg: Message) -> Flow {
        let mut msg = msg;
        for i in from..self.stack.len() {
            let id = request_id(&msg);
            let step = self.stack[i].client(msg);
            self.tell_above(i);
            match self.take_client(i, step, id) {
                Onward::Down(m) => msg = m,
                Onward::Went(flow) => return flow,
            }
        }
        Flow::Up(msg)
    }

    /// Acts on layer `i`'s step on a client message (`id`: the request it is): the
    /// message to take on down, or where it went instead.
    fn take_client(&mut self, i: usize, step: Step, id: Option<String>) -> Onward {
        match step {
            Step::Pass(m) => Onward::Down(m),
            Step::Answer(answers) => Onward::Went(Flow::Back(self.up_from(i, answers))),
            Step::Drop => Onward::Went(Flow::Dropped),
            Step::Later(later) => {
                self.held.push(deciding(i, Side::Client, id, later));
                Onward::Went(Flow::Held)
            }
            Step::Disconnect(status) => {
                self.gone = Some(Disconnect { status, id });
                Onward::Went(Flow::Gone)
            }
        }
    }

    /// Takes a server message up the stack, from the layer furthest from the client;
    /// returns what reaches the client now, in order. What a layer decides later (a
    /// delay) is kept pending ([`Layers::decided`]) and holds up nothing else.
    pub fn server(&mut self, msg: Message) -> Vec<Message> {
        let n = self.stack.len();
        self.up_from(n, vec![msg])
    }

    /// The next decision a layer took later, on a client or a server message; pending
    /// while none is (forever when none is awaited). Cancel-safe: an undecided one
    /// stays here.
    pub async fn decided(&mut self) -> Decided {
        let (held, pending) = (&mut self.held, &mut self.pending);
        std::future::poll_fn(|cx| {
            // An empty set is ready with `None` and is polled again, once it has more,
            // by the next call: nothing can be added while this one borrows the stack.
            if let Poll::Ready(Some(decided)) = held.poll_next_unpin(cx) {
                return Poll::Ready(decided);
            }
            if let Poll::Ready(Some(decided)) = pending.poll_next_unpin(cx) {
                return Poll::Ready(decided);
            }
            Poll::Pending
        })
        .await
    }

    /// Forgets every decision still to come (a shutdown does not wait for a delayed
    /// answer, and a held call is withdrawn: its future is dropped); then every layer
    /// tells what it has to about that ([`Layer::events`]).
    pub fn abandon(&mut self) {
        self.pending.clear();
        self.forget_held();
    }

    /// Forgets the client messages still held (their upstream is gone: there is nowhere
    /// left to pass them to); then every layer tells what it has to about that.
    pub fn forget_held(&mut self) {
        if self.held.is_empty() {
            return;
        }
        self.held.clear();
        for i in 0..self.stack.len() {
            self.tell_above(i);
        }
    }

    /// True while some layer is still to decide on a message, either way.
    pub fn is_deciding(&self) -> bool {
        !self.pending.is_empty() || !self.held.is_empty()
    }

    /// True while some layer still holds a client message.
    pub fn is_holding(&self) -> bool {
        !self.held.is_empty()
    }

    /// Continues a decision taken later from the layer that took it, after the layers
    /// above it are told what it has to say ([`Layer::events`]): a server message on up
    /// ([`Flow::Back`]: what reaches the client), a client message on down (to the
    /// upstream, or back to the client, or held again further down).
    pub fn resume(&mut self, decided: Decided) -> Flow {
        let Decided {
            layer,
            side,
            id,
            step,
        } = decided;
        self.tell_above(layer);
        match side {
            Side::Server => {
                let mut here = Vec::new();
                self.take(layer, step, id, &mut here);
                Flow::Back(self.up_from(layer, here))
            }
            Side::Client => match self.take_client(layer, step, id) {
                Onward::Down(msg) => self.down_from(layer + 1, msg),
                Onward::Went(flow) => flow,
            },
        }
    }

    /// Tells every layer that the client gave up on request `id` without a word
    /// ([`Layer::cancelled`]); a layer that withdraws a call it held says so in its
    /// events, told to the layers above it.
    pub fn cancelled(&mut self, id: &str) {
        for i in 0..self.stack.len() {
            self.stack[i].cancelled(id);
            self.tell_above(i);
        }
    }

    /// The injected disconnect that ended the connection, once one has.
    pub fn gone(&self) -> Option<&Disconnect> {
        self.gone.as_ref()
    }

    /// Runs `msgs` up through layers `below-1 .. 0`. A disconnect at a layer cuts what
    /// came after it there; what came before still goes on up.
    fn up_from(&mut self, below: usize, msgs: Vec<Message>) -> Vec<Message> {
        let mut msgs = msgs;
        for i in (0..below).rev() {
            let mut next = Vec::with_capacity(msgs.len());
            for m in msgs {
                let id = request_id(&m);
                let step = self.stack[i].server(m);
                self.tell_above(i);
                if self.take(i, step, id, &mut next) {
                    break;
                }
            }
            msgs = next;
        }
        msgs
    }

    /// Acts on layer `i`'s step on a server message (`id`: the request it answers):
    /// what goes on up is pushed to `next`. True when it was a disconnect.
    fn take(&mut self, i: usize, step: Step, id: Option<String>, next: &mut Vec<Message>) -> bool {
        match step {
            Step::Pass(m) => next.push(m),
            // A layer answering a server message would talk to the server; none does
            // yet, so what it gives is passed on toward the client.
            Step::Answer(more) => next.extend(more),
            Step::Drop => {}
            Step::Later(later) => self.pending.push(deciding(i, Side::Server, id, later)),
            Step::Disconnect(status) => {
                self.gone = Some(Disconnect { status, id });
                return true;
            }
        }
        false
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

#[cfg(test)]
mod tests;
