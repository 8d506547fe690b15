//! Where client messages go: one interface, the [`Link`], with one implementation per
//! kind of upstream.
//!
//! - [`child`]: a server process over its stdin/stdout, line by line (the stdio proxy's
//!   byte-exact fast path is [`crate::downstream::relay`]).
//! - [`http`]: a remote Streamable HTTP server; [`refusals`] turns its refusals into the
//!   JSON-RPC errors a JSON-RPC client is given.
//! - [`replay`]: the replay engine, an in-memory transport that answers from a tape;
//!   [`pick`] chooses the recorded connection a live client gets; [`script`] pairs
//!   answers with requests and says how a recording ended.
//!
//! A downstream (our stdio, the HTTP front, the built-in client, verify's player) drives
//! any `Link` the same way: [`Link::send`] each client message, poll [`Link::next`] for
//! what comes back, [`Link::end_input`] when the client has said everything, then
//! [`Link::close`]. Layers ([`crate::layer`]) wrap a `Link` and are a `Link` themselves.

use std::future::Future;
use std::process::ExitStatus;

use bytes::Bytes;

use crate::error::{HttpError, LinkError, Result};
use crate::message::Message;
use crate::tape::close::CloseReason;
use crate::tape::lifecycle::LifecycleKind;
use crate::verdict::Verdict;

pub mod child;
pub mod fallback;
pub mod http;
pub mod pick;
pub mod refusals;
pub mod replay;
pub mod script;
pub mod sse;

/// A transport-level fact for the tape (`$http/session`, `$http/status`, …): a lifecycle
/// kind and its params. Layers see it ([`crate::layer::Layer::event`]); the client never
/// does.
pub type Event = (LifecycleKind, serde_json::Value);

/// What comes back from an upstream.
#[derive(Debug)]
pub enum Incoming {
    /// A server message, exactly as it came (one line, without its `\n`).
    Message(Message),
    /// A fact for the tape.
    Event(Event),
    /// The upstream could not take or answer this client message (an HTTP status, an
    /// unreachable server, a stream cut before the answer). The downstream tells its
    /// client in its own terms: a JSON-RPC error on stdio, the status on the HTTP front.
    Refused {
        /// The client message.
        request: Message,
        /// Why.
        error: HttpError,
    },
}

/// An injected disconnect ([`crate::layer::Step::Disconnect`]): the server went away
/// here, on purpose. A downstream that finds one ([`Link::disconnected`]) once
/// [`Link::next`] has ended ends its client's connection the way its transport does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disconnect {
    /// The HTTP status the request gets on the HTTP front; on stdio, the proxy's exit
    /// status. None: the front's default (404), or exit 1.
    pub status: Option<u16>,
    /// The request it ended on (its id's JSON text): the client request the fault took,
    /// or the request a server answer was for; None for a notification.
    pub id: Option<String>,
}

/// How an upstream ended.
#[derive(Debug)]
pub enum Closed {
    /// The server process exited with this status.
    Exited(ExitStatus),
    /// The server did not exit when asked (its stdin closed, or a signal passed on): after
    /// the graces mcptape sent it `by` (SIGTERM, then SIGKILL), and it exited with
    /// `status`. Its status is then mcptape's doing, not the server's.
    Stopped {
        /// How it exited.
        status: ExitStatus,
        /// The last signal mcptape sent it.
        by: nix::sys::signal::Signal,
    },
    /// The replay engine's verdict, and the recorded server's exit status when the
    /// recording ended the connection itself.
    Replayed {
        /// What the replayed connection found.
        verdict: Box<Verdict>,
        /// The recorded server's exit status, when it ended the connection.
        server_exit: Option<u8>,
    },
    /// The remote session was ended.
    Remote,
}

impl Closed {
    /// The close status for the tape's `$transport/close`.
    pub fn status(&self) -> crate::tape::close::CloseStatus {
        match self {
            Closed::Exited(status) | Closed::Stopped { status, .. } => {
                crate::tape::close::CloseStatus::of(*status)
            }
            _ => crate::tape::close::CloseStatus::Unknown,
        }
    }
}

/// The upstream interface: a child process, a Streamable HTTP session, or the replay
/// engine.
///
/// `send` never waits for an answer: answers come from `next`, which is cancel-safe (it
/// may be polled in a `select!` and dropped without losing a message).
pub trait Link: Send {
    /// Hands one client message on. Returns once the upstream has taken it: at once for
    /// a request (its answer comes from [`Link::next`]).
    fn send(&mut self, msg: Message) -> impl Future<Output = Result<(), LinkError>> + Send;

    /// The fact of this upstream's start for the tape (`$transport/start` with the command
    /// and pid, or the URL), given to the layers when they are put in front of it
    /// ([`crate::layer::Layered::new`]). None for the replay engine.
    fn started(&self) -> Option<Event> {
        None
    }

    /// The next thing from the upstream; `None` once it is gone (the server exited, the
    /// recording ended the connection, or — after [`Link::end_input`] — nothing more is
    /// owed).
    fn next(&mut self) -> impl Future<Output = Option<Incoming>> + Send;

    /// The client sent a line of `len` bytes, longer than the framing maximum: `prefix`
    /// is its start. It cannot be sent whole; by default it is dropped (the replay engine
    /// counts it as a divergence).
    fn oversize(&mut self, len: usize, prefix: Bytes) -> impl Future<Output = ()> + Send {
        let _ = (len, prefix);
        async {}
    }

    /// The client gave up on request `id` (its JSON text) without a word: an HTTP client
    /// closed the request's stream, which is how the stateless revision cancels. A remote
    /// stops reading that answer; by default nothing happens (the answer still comes, and
    /// goes nowhere).
    fn cancel(&mut self, id: &str) -> impl Future<Output = ()> + Send {
        let _ = id;
        async {}
    }

    /// The client has said everything (it closed its side): a child's stdin is closed,
    /// what is under way may still finish. [`Link::next`] then ends when nothing more is
    /// owed.
    fn end_input(&mut self) -> impl Future<Output = ()> + Send {
        async {}
    }

    /// A shutdown came (a signal to us, with `reason`). True when the link still has
    /// something to give the client before it is closed — then [`Link::next`] goes on
    /// until it ends: a child is passed the signal and what it writes before it exits
    /// still reaches the client; a remote's answers under way may finish within their
    /// grace. By default nothing more is owed.
    fn interrupt(&mut self, reason: &CloseReason) -> impl Future<Output = bool> + Send {
        let _ = reason;
        async { false }
    }

    /// The injected disconnect that ended [`Link::next`], when one did (a layer's
    /// [`crate::layer::Step::Disconnect`]); None for an upstream that went away by
    /// itself, and by default.
    fn disconnected(&self) -> Option<Disconnect> {
        None
    }

    /// Ends the upstream the way its transport asks (close stdin → wait → SIGTERM →
    /// SIGKILL; `DELETE` the session; the replay's verdict). `reason` is why the
    /// downstream ended it.
    fn close(self, reason: CloseReason) -> impl Future<Output = Result<Closed>> + Send;
}
