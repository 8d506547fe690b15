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

use std::collections::HashMap;

use tokio::sync::mpsc;
use tokio::task::{AbortHandle, JoinSet};
use tokio::time::Instant;

use crate::error::{HttpError, LinkError, Result};
use crate::message::{Kind, Message};
use crate::tape::close::CloseReason;
use crate::tape::lifecycle::{Lifecycle, Start};
use crate::upstream::http::{DRAIN_GRACE, Event, GET_STREAM_OPENINGS, Posted, Remote};
use crate::upstream::{Closed, Incoming, Link};

/// One remote session as an upstream.
pub struct HttpLink {
    remote: Remote,
    /// What `$transport/start` says of this session.
    start: Start,
    listen: bool,
    /// The client's messages, in order, to the worker; `None` once input ended.
    queue: Option<mpsc::UnboundedSender<Message>>,
    /// The worker's receiving end, until the first `send` starts it.
    waiting: Option<mpsc::UnboundedReceiver<Message>>,
    incoming: mpsc::UnboundedReceiver<Incoming>,
    /// Held until the worker starts, which then holds it.
    out: Option<mpsc::UnboundedSender<Incoming>>,
    worker: Option<tokio::task::JoinHandle<()>>,
    /// After `end_input`: when draining gives up.
    deadline: Option<Instant>,
}

impl HttpLink {
    /// A link over `remote`; its start fact names the URL (`{"url": url}`).
    pub fn new(remote: Remote) -> HttpLink {
        let (queue, waiting) = mpsc::unbounded_channel();
        let (out, incoming) = mpsc::unbounded_channel();
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
            out: Some(out),
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
    /// offered). Off by default.
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
        queue.send(msg).map_err(|_| LinkError::Gone)
    }

    fn started(&self) -> Option<Event> {
        Some(Lifecycle::Start(self.start.clone()).event())
    }

    async fn next(&mut self) -> Option<Incoming> {
        match self.deadline {
            None => self.incoming.recv().await,
            Some(at) => tokio::time::timeout_at(at, self.incoming.recv())
                .await
                .ok()
                .flatten(),
        }
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

/// The task that owns the client's order, and the tasks it started.
struct Worker {
    remote: Remote,
    out: mpsc::UnboundedSender<Incoming>,
    listen: bool,
    /// Requests under way, and the GET stream.
    tasks: JoinSet<()>,
    /// Requests under way, by id, for a cancellation to abort.
    by_id: HashMap<String, AbortHandle>,
    listener: Option<AbortHandle>,
}

impl Worker {
    async fn run(mut self, mut queue: mpsc::UnboundedReceiver<Message>) {
        loop {
            tokio::select! {
                msg = queue.recv() => match msg {
                    Some(msg) => self.take(msg).await,
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

    /// One client message, in the client's order.
    async fn take(&mut self, msg: Message) {
        self.by_id.retain(|_, task| !task.is_finished());
        if msg.method() == Some("notifications/cancelled")
            && let Some(id) = crate::message::raw_member(msg.text(), &["params", "requestId"])
            && let Some(task) = self.by_id.remove(id)
        {
            task.abort();
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
async fn post(remote: Remote, request: Message, out: mpsc::UnboundedSender<Incoming>) {
    let refuse = |error: HttpError| {
        if let Some(fact) = super::fact(&error) {
            let _ = out.send(Incoming::Event(fact));
        }
        let _ = out.send(Incoming::Refused {
            request: request.clone(),
            error,
        });
    };
    let mut answer = match remote.post(&request).await {
        Err(error) => return refuse(error),
        Ok(Posted::Accepted { session }) => {
            if let Some(session) = session {
                let _ = out.send(Incoming::Event(session));
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
            Ok(incoming) => drop(out.send(incoming)),
            Err(error) => {
                // The answer already told the tape what it keeps of it.
                let _ = out.send(Incoming::Refused {
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
async fn listen(remote: Remote, out: mpsc::UnboundedSender<Incoming>) {
    for _ in 0..GET_STREAM_OPENINGS {
        let Some(mut stream) = remote.listen().await else {
            return;
        };
        while let Some(Ok(incoming)) = stream.next().await {
            let _ = out.send(incoming);
        }
    }
}

#[cfg(test)]
mod tests;
