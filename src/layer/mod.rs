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

use std::future::Future;
use std::pin::Pin;

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
    /// Server messages a layer decides on later (a delay), with that layer's place.
    pending: FuturesUnordered<Later<Decided>>,
    /// The injected disconnect, once a layer said one.
    gone: Option<Disconnect>,
}

/// A decision a layer took later on a server message: the layer (its place in the
/// stack), the request the message answers, and the step.
pub struct Decided {
    layer: usize,
    id: Option<String>,
    step: Step,
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
    /// through the layers above it. A layer's decision later on a client message is
    /// awaited here (it holds up what the client sends next, as an approval must).
    pub async fn client(&mut self, msg: Message) -> Flow {
        let mut msg = msg;
        for i in 0..self.stack.len() {
            let id = request_id(&msg);
            let step = settle(self.stack[i].client(msg)).await;
            self.tell_above(i);
            match step {
                Step::Pass(m) => msg = m,
                Step::Answer(answers) => return Flow::Back(self.up_from(i, answers)),
                Step::Drop | Step::Later(_) => return Flow::Dropped,
                Step::Disconnect(status) => {
                    self.gone = Some(Disconnect { status, id });
                    return Flow::Gone;
                }
            }
        }
        Flow::Up(msg)
    }

    /// Takes a server message up the stack, from the layer furthest from the client;
    /// returns what reaches the client now, in order. What a layer decides later (a
    /// delay) is kept pending ([`Layers::decided`]) and holds up nothing else.
    pub fn server(&mut self, msg: Message) -> Vec<Message> {
        let n = self.stack.len();
        self.up_from(n, vec![msg])
    }

    /// The next decision a layer took later on a server message; pending while none is
    /// (forever when none is awaited). Cancel-safe: an undecided one stays here.
    pub async fn decided(&mut self) -> Decided {
        match self.pending.next().await {
            Some(decided) => decided,
            None => std::future::pending().await,
        }
    }

    /// Forgets the decisions still to come on server messages (a shutdown does not wait
    /// for a delayed answer).
    pub fn abandon(&mut self) {
        self.pending.clear();
    }

    /// True while some layer is still to decide on a server message.
    pub fn is_deciding(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Continues a decision taken later up through the layers nearer the client than
    /// the one that took it; returns what reaches the client.
    pub fn resume(&mut self, decided: Decided) -> Vec<Message> {
        let Decided { layer, id, step } = decided;
        let mut here = Vec::new();
        self.take(layer, step, id, &mut here);
        self.up_from(layer, here)
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
            Step::Later(later) => self.pending.push(Box::pin(async move {
                Decided {
                    layer: i,
                    id,
                    step: later.await,
                }
            })),
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

/// A step, once it is decided.
async fn settle(step: Step) -> Step {
    let mut step = step;
    while let Step::Later(later) = step {
        step = later.await;
    }
    step
}

#[cfg(test)]
mod tests;
