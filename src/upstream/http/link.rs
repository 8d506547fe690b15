//! A remote Streamable HTTP session as a [`Link`].
//!
//! `send` only queues: a worker task owns the client's order. It POSTs notifications
//! and answers one after another, and starts each request's POST in a task of its own
//! once what was before it was taken (a server may refuse requests before
//! `initialized`), so requests run concurrently and `send` never awaits a POST. What
//! every POST brings — messages and facts, as they arrive — comes out of one channel
//! ([`Link::next`], cancel-safe). A failure is an [`Incoming::Refused`] naming the client
//! message. A `notifications/cancelled` aborts the POST of the request it names (how the
//! stateless revision cancels: closing the stream) besides being forwarded.
//!
//! After [`Link::end_input`] what in-flight requests still bring comes out, for at most
//! [`DRAIN_GRACE`]; [`Link::close`] ends the session with `DELETE`.
//!
//! What came back and was not taken yet is bounded: the POST tasks and the GET stream
//! take its size from a budget of [`MAX_HELD_BYTES`] before they pass a server message on,
//! and `next` gives it back. A consumer that is behind (the tap's writer on a stalled
//! disk, a client that does not read) therefore stops the socket reads, and TCP flow
//! control then slows the server. Two things keep that free of deadlock: `send` never
//! waits for the worker (its queue is the client's input, already read), so the worker
//! may wait for the consumer and never the reverse; and what a POST's outcome says of its
//! client message — its refusal, a new session — goes out at once, outside the budget (at
//! most two items per client message), so the worker is not held by a refused
//! notification and a `notifications/cancelled` reaches it while the budget is spent.
//! (The worker waits for room only while it reads the answer to a notification or an
//! answer that brings messages, which a server should answer `202`.)

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::task::{AbortHandle, JoinSet};
use tokio::time::Instant;

use crate::error::{HttpError, LinkError, Result};
use crate::message::{Kind, Message};
use crate::tape::close::CloseReason;
use crate::tape::lifecycle::{Lifecycle, Start};
use crate::upstream::http::{DRAIN_GRACE, Event, GET_STREAM_OPENINGS, Posted, Remote};
use crate::upstream::{Closed, Incoming, Link};

/// The most bytes of server messages an [`HttpLink`] holds that its consumer has not
/// taken yet; past it the socket reads wait. A few hundred messages of a few kB each:
/// plenty while the consumer keeps up, and a session's memory stays flat while it does
/// not. A message larger than this still passes, alone.
pub const MAX_HELD_BYTES: usize = 1024 * 1024;

/// What one held item costs beyond its message's bytes (its slot, the message's parsed
/// head), so that many tiny messages are bounded too: at most 4,096 items.
pub const HELD_ITEM_BYTES: usize = 256;

/// One remote session as an upstream.
pub struct HttpLink {
    remote: Remote,
    /// What `$transport/start` says of this session.
    start: Start,
    listen: bool,
    /// The client's messages, in order, to the worker; `None` once input ended.
    queue: Option<mpsc::UnboundedSender<Work>>,
    /// The worker's receiving end, until the first `send` starts it.
    waiting: Option<mpsc::UnboundedReceiver<Work>>,
    /// What came back, each holding its share of the budget until `next` hands it out.
    incoming: mpsc::UnboundedReceiver<Held>,
    /// Held until the worker starts, which then holds it.
    out: Option<Out>,
    /// The budget, for tests to see what is held.
    #[cfg(test)]
    budget: Budget,
    worker: Option<tokio::task::JoinHandle<()>>,
    /// After `end_input`: when draining gives up.
    deadline: Option<Instant>,
}

impl HttpLink {
    /// A link over `remote`; its start fact names the URL (`{"url": url}`).
    pub fn new(remote: Remote) -> HttpLink {
        let (queue, waiting) = mpsc::unbounded_channel();
        let (tx, incoming) = mpsc::unbounded_channel();
        let budget = Budget::new();
        HttpLink {
            start: Start {
                url: Some(remote.url().to_owned()),
                ..Start::default()
            },
            remote,
            listen: false,
            queue: Some(queue),
            waiting: Some(waiting),
            incoming,
            out: Some(Out {
                tx,
                budget: budget.clone(),
            }),
            #[cfg(test)]
            budget,
            worker: None,
            deadline: None,
        }
    }

    /// With this `$transport/start` (the HTTP front marks it `front`).
    pub fn with_start(mut self, start: Start) -> HttpLink {
        self.start = start;
        self
    }

    /// Opens the optional GET stream once a session exists, and reopens it when the
    /// server closes it (at most [`GET_STREAM_OPENINGS`] times; a 405 means none is
    /// offered). What comes on it is marked so ([`Message::stream`]). Off by default.
    pub fn listening(mut self) -> HttpLink {
        self.listen = true;
        self
    }

    /// The remote server.
    pub fn remote(&self) -> &Remote {
        &self.remote
    }

    /// Starts the worker on the first message (so a link never used spawns nothing).
    fn worker(&mut self) {
        if let (Some(queue), Some(out)) = (self.waiting.take(), self.out.take()) {
            let worker = Worker {
                remote: self.remote.clone(),
                out,
                listen: self.listen,
                tasks: JoinSet::new(),
                by_id: HashMap::new(),
                listener: None,
            };
            self.worker = Some(tokio::spawn(worker.run(queue)));
        }
    }
}

impl Link for HttpLink {
    async fn send(&mut self, msg: Message) -> Result<(), LinkError> {
        self.worker();
        let queue = self.queue.as_ref().ok_or(LinkError::Gone)?;
        queue.send(Work::Send(msg)).map_err(|_| LinkError::Gone)
    }

    async fn cancel(&mut self, id: &str) {
        if let Some(queue) = &self.queue {
            let _ = queue.send(Work::Cancel(id.to_owned()));
        }
    }

    fn started(&self) -> Option<Event> {
        Some(Lifecycle::Start(self.start.clone()).event())
    }

    async fn next(&mut self) -> Option<Incoming> {
        // Cancel-safe: `recv` is, and the budget goes back with the item, after it.
        let held = match self.deadline {
            None => self.incoming.recv().await,
            Some(at) => tokio::time::timeout_at(at, self.incoming.recv())
                .await
                .ok()
                .flatten(),
        }?;
        Some(held.incoming)
    }

    async fn oversize(&mut self, len: usize, _prefix: bytes::Bytes) {
        // Too long to hold: never sent whole.
        crate::term::eprintln_escaped!(
            "mcptape: warning: a client line of {len} bytes, over the maximum, was not sent to `{}`",
            self.remote.url()
        );
    }

    async fn end_input(&mut self) {
        // The worker finishes the queue, then waits for what is under way.
        self.queue = None;
        self.waiting = None;
        self.out = None;
        self.deadline = Some(Instant::now() + DRAIN_GRACE);
    }

    async fn interrupt(&mut self, _reason: &CloseReason) -> bool {
        // What is under way may still finish, within the drain's grace.
        self.end_input().await;
        true
    }

    async fn close(self, _reason: CloseReason) -> Result<Closed> {
        if let Some(worker) = self.worker {
            // Its tasks go with it (their set is dropped).
            worker.abort();
            let _ = worker.await;
        }
        self.remote.end().await;
        Ok(Closed::Remote)
    }
}

/// Bytes of the budget that what came back holds, until `next` hands it out.
#[derive(Clone)]
struct Budget {
    bytes: Arc<Semaphore>,
    /// Told each time a producer finds the budget spent and waits.
    #[cfg(test)]
    waited: Arc<tokio::sync::Notify>,
}

impl Budget {
    fn new() -> Budget {
        Budget {
            bytes: Arc::new(Semaphore::new(MAX_HELD_BYTES)),
            #[cfg(test)]
            waited: Arc::new(tokio::sync::Notify::new()),
        }
    }

    /// Waits until `incoming`'s share is free, and takes it.
    async fn take(&self, incoming: &Incoming) -> Option<OwnedSemaphorePermit> {
        let bytes = match incoming {
            Incoming::Message(m) => m.bytes().len(),
            Incoming::Event(_) => 0,
            Incoming::Refused { request, .. } => request.bytes().len(),
        };
        let share = u32::try_from((bytes + HELD_ITEM_BYTES).min(MAX_HELD_BYTES))
            .expect("the budget fits in u32");
        match Arc::clone(&self.bytes).try_acquire_many_owned(share) {
            Ok(permit) => Some(permit),
            Err(_) => {
                #[cfg(test)]
                self.waited.notify_one();
                // The semaphore is never closed: `Err` cannot happen.
                Arc::clone(&self.bytes).acquire_many_owned(share).await.ok()
            }
        }
    }

    /// Bytes held now.
    #[cfg(test)]
    fn held(&self) -> usize {
        MAX_HELD_BYTES - self.bytes.available_permits()
    }
}

/// One item on its way to `next`, with its share of the budget (none for what the
/// worker says itself).
struct Held {
    incoming: Incoming,
    _share: Option<OwnedSemaphorePermit>,
}

/// Where what comes back goes: to `next`, within the budget.
#[derive(Clone)]
struct Out {
    tx: mpsc::UnboundedSender<Held>,
    budget: Budget,
}

impl Out {
    /// A server message or a stream's fact: waits for its share of the budget first.
    async fn send(&self, incoming: Incoming) {
        let share = self.budget.take(&incoming).await;
        let _ = self.tx.send(Held {
            incoming,
            _share: share,
        });
    }

    /// What a POST's outcome says of its client message: at once, outside the budget.
    fn now(&self, incoming: Incoming) {
        let _ = self.tx.send(Held {
            incoming,
            _share: None,
        });
    }
}

/// What the worker is given, in the client's order.
enum Work {
    /// A client message to POST.
    Send(Message),
    /// The client gave up on the request with this id without a word.
    Cancel(String),
}

/// The task that owns the client's order, and the tasks it started.
struct Worker {
    remote: Remote,
    out: Out,
    listen: bool,
    /// Requests under way, and the GET stream.
    tasks: JoinSet<()>,
    /// Requests under way, by id, for a cancellation to abort.
    by_id: HashMap<String, AbortHandle>,
    listener: Option<AbortHandle>,
}

impl Worker {
    async fn run(mut self, mut queue: mpsc::UnboundedReceiver<Work>) {
        loop {
            tokio::select! {
                work = queue.recv() => match work {
                    Some(Work::Send(msg)) => self.take(msg).await,
                    Some(Work::Cancel(id)) => self.abort(&id),
                    None => break,
                },
                Some(_) = self.tasks.join_next(), if !self.tasks.is_empty() => {}
            }
        }
        // The GET stream never ends by itself; what is under way may finish.
        if let Some(listener) = self.listener.take() {
            listener.abort();
        }
        while self.tasks.join_next().await.is_some() {}
    }

    /// Stops reading the answer to request `id` (closing its stream, which is how the
    /// stateless revision cancels).
    fn abort(&mut self, id: &str) {
        if let Some(task) = self.by_id.remove(id) {
            task.abort();
        }
    }

    /// One client message, in the client's order.
    async fn take(&mut self, msg: Message) {
        self.by_id.retain(|_, task| !task.is_finished());
        if msg.method() == Some("notifications/cancelled")
            && let Some(id) = crate::message::raw_member(msg.text(), &["params", "requestId"])
        {
            self.abort(id);
        }
        if msg.kind() == Kind::Request {
            let id = msg.id().map(str::to_owned);
            let task = self
                .tasks
                .spawn(post(self.remote.clone(), msg, self.out.clone()));
            if let Some(id) = id {
                self.by_id.insert(id, task);
            }
        } else {
            post(self.remote.clone(), msg, self.out.clone()).await;
        }
        if self.listen && self.listener.is_none() && self.remote.has_session() {
            let task = self
                .tasks
                .spawn(listen(self.remote.clone(), self.out.clone()));
            self.listener = Some(task);
        }
    }
}

/// POSTs one message and passes on what its answer brings.
///
/// The refusal and the session fact go out at once; what the answer brings waits for
/// room (for the worker too: only a server that answers a notification with messages
/// makes it wait, and `send` never waits for the worker).
async fn post(remote: Remote, request: Message, out: Out) {
    let refuse = |error: HttpError| {
        if let Some(fact) = super::fact(&error) {
            out.now(Incoming::Event(fact));
        }
        out.now(Incoming::Refused {
            request: request.clone(),
            error,
        });
    };
    let mut answer = match remote.post(&request).await {
        Err(error) => return refuse(error),
        Ok(Posted::Accepted { session }) => {
            if let Some(session) = session {
                out.now(Incoming::Event(session));
            }
            if request.kind() == Kind::Request {
                let url = remote.url().to_owned();
                refuse(HttpError::Unanswered { url });
            }
            return;
        }
        Ok(Posted::Answer(answer)) => answer,
    };
    while let Some(item) = answer.next().await {
        match item {
            Ok(incoming) => out.send(incoming).await,
            Err(error) => {
                // The answer already told the tape what it keeps of it.
                out.now(Incoming::Refused {
                    request: request.clone(),
                    error,
                });
                return;
            }
        }
    }
}

/// The GET stream: the server may close it at any time; it is reopened a few times. A
/// server that refuses it (405) is not asked again.
async fn listen(remote: Remote, out: Out) {
    for _ in 0..GET_STREAM_OPENINGS {
        let Some(mut stream) = remote.listen().await else {
            return;
        };
        while let Some(Ok(incoming)) = stream.next().await {
            out.send(incoming).await;
        }
    }
}

#[cfg(test)]
mod tests;
