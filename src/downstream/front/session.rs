//! One HTTP session of the front: one task that owns its [`Link`] and routes what comes
//! back to the answer streams of the POSTs that wait for it.
//!
//! Handlers talk to the task through a [`SessionHandle`] (not generic over the link):
//! [`SessionHandle::post`] hands a client message on, with the stream that waits for its
//! answer when it is a request; [`SessionHandle::end`] ends the session. The task loops
//! on one `select!` over those commands and [`Link::next`]. Routing: a response goes to
//! the stream that waits for its id and ends it; a `notifications/progress` goes to the
//! stream of the request whose `params._meta.progressToken` it names, and a server
//! message that came on the upstream's answer to a request ([`Message::answered`]) to
//! that request's stream, while that one waits (whichever stream is newer); a server
//! message that came on the
//! upstream's GET stream (or, replaying, was recorded on one or tied to no request), and
//! any other while no POST stream is open, goes to the client's GET stream when it is
//! open ([`get`], which holds it for the next one when none is open and no POST stream
//! is either); any other goes to the newest open stream; a refusal of a request goes to
//! that request's stream. A refused
//! `initialize`, or any `404`, ends the session (the upstream never accepted it, or has
//! forgotten it).
//!
//! Ending first ends the recording — its `$transport/close`, then its finish on a
//! blocking thread (the tap's writer joined and the tape synced there, never on the
//! runtime's thread) — and only then closes the link (`DELETE` upstream, or the replay's
//! verdict). The front may give up on that close ([`GiveUp`]), never on the recording.

use std::collections::{HashMap, HashSet};

use bytes::Bytes;

use tokio::sync::{mpsc, oneshot, watch};

use crate::downstream::front::get::{self, GetStream};
use crate::downstream::front::guard::Rejection;
use crate::downstream::front::idle::Activity;
use crate::error::HttpError;
use crate::message::{Kind, Message};
use crate::record::session::RecordSession;
use crate::record::tap::TapHandle;
use crate::tape::close::{Close, CloseReason, CloseStatus};
use crate::tape::lifecycle::Lifecycle;
use crate::upstream::http::Offer;
use crate::upstream::{Closed, Disconnect, Incoming, Link};
use crate::verdict::Verdict;

/// What reaches a request's answer stream.
#[derive(Debug)]
pub enum Item {
    /// One SSE event carrying one server message.
    Event(Bytes),
    /// One SSE event a fault marked slow (`slow-stream`): written in small pieces
    /// ([`crate::downstream::slow`]).
    Slow(Bytes),
    /// An injected disconnect ended the session on this request: its handler answers
    /// this status (before the stream started) or ends the stream (after).
    Disconnect(u16),
    /// The upstream refused the request: its handler answers the status (before the
    /// stream started) or a JSON-RPC error (after).
    Refused(HttpError),
    /// The link is gone: the message could not be handed on.
    Gone,
}

/// The status of the request an injected `disconnect` without a status ends on: `404`,
/// the answer that tells a Streamable HTTP client its session is over, so that it starts
/// a new one (the transport spec's session management, 2025-06-18 and 2025-11-25).
pub const DISCONNECT_STATUS: u16 = 404;

/// The sending end of one request's answer stream.
pub type Stream = mpsc::UnboundedSender<Item>;

/// What a handler asks of a session's task.
enum Command {
    /// A client message, with the stream waiting for its answer (requests only).
    Post(Message, Option<Stream>),
    /// The client of a request's stream went away before its answer (the live id).
    Cancelled(String),
    /// The client opens the GET stream, resuming after this event id when given.
    Listen(
        Option<String>,
        oneshot::Sender<Result<get::Events, Rejection>>,
    ),
    /// End the session; `done` hears when it has (its link closed, its recording
    /// finished).
    End(CloseReason, Option<oneshot::Sender<()>>),
}

/// How a session ended: what its parts found.
#[derive(Debug, Default)]
pub struct Ended {
    /// The replayed connection's verdict (replay only).
    pub verdict: Option<Verdict>,
    /// Why the recording is incomplete, when it is (forwarding with a tape only).
    pub tape_error: Option<String>,
}

/// A handler's way to one session's task.
#[derive(Clone)]
pub struct SessionHandle {
    commands: mpsc::UnboundedSender<Command>,
    activity: std::sync::Arc<Activity>,
    /// What the upstream said to its GET stream (forwarding only).
    offer: Option<watch::Receiver<Offer>>,
}

impl SessionHandle {
    /// Hands `msg` to the session; `stream` gets what answers it. False when the session
    /// has ended.
    pub fn post(&self, msg: Message, stream: Option<Stream>) -> bool {
        self.commands.send(Command::Post(msg, stream)).is_ok()
    }

    /// Opens the session's GET stream ([`get`]), resuming after `last_event_id`; `None`
    /// when the session has ended.
    pub async fn listen(
        &self,
        last_event_id: Option<String>,
    ) -> Option<Result<get::Events, Rejection>> {
        let (tx, rx) = oneshot::channel();
        self.commands
            .send(Command::Listen(last_event_id, tx))
            .ok()?;
        rx.await.ok()
    }

    /// With what the upstream says to its GET stream, which a client's GET is answered
    /// by.
    pub fn with_offer(mut self, offer: watch::Receiver<Offer>) -> SessionHandle {
        self.offer = Some(offer);
        self
    }

    /// What the upstream says to its GET stream; `None` with no upstream (replay).
    pub fn offer(&self) -> Option<watch::Receiver<Offer>> {
        self.offer.clone()
    }

    /// Says that the stream of the request `id` lost its client.
    pub fn cancelled(&self, id: String) {
        let _ = self.commands.send(Command::Cancelled(id));
    }

    /// Ends the session (its task closes the link and finishes the recording).
    pub fn end(&self, reason: CloseReason) {
        let _ = self.commands.send(Command::End(reason, None));
    }

    /// Ends the session and waits until it has ended: a client's `DELETE` is answered
    /// once the upstream session is deleted and the recording has its close.
    pub async fn end_and_wait(&self, reason: CloseReason) {
        let (done, ended) = oneshot::channel();
        if self.commands.send(Command::End(reason, Some(done))).is_ok() {
            let _ = ended.await;
        }
    }

    /// True once the session has ended or is ending.
    pub fn is_over(&self) -> bool {
        self.commands.is_closed()
    }

    /// When the session was last busy; [`Activity::hold`] keeps it busy.
    pub fn activity(&self) -> &Activity {
        &self.activity
    }
}

/// The session's recording, when there is one: finished when the session ends.
pub struct Recording {
    /// The recording.
    pub session: RecordSession,
    /// Its tap, for what only the front knows (`$http/cancelled`).
    pub tap: TapHandle,
}

impl Recording {
    /// Writes the close and finishes the recording off the runtime's thread; why it is
    /// incomplete, when it is.
    async fn end(self, reason: &CloseReason) -> Option<String> {
        // The front records HTTP sessions only, whose close has no exit status: the entry
        // need not wait for the `DELETE`. The layers' own close, after that, finds the
        // tap finished and writes nothing.
        self.tap
            .close(&Close::new(reason.clone(), CloseStatus::Unknown));
        let session = self.session;
        match tokio::task::spawn_blocking(move || session.finish()).await {
            Ok(Ok(_)) => None,
            Ok(Err(e)) => Some(crate::error::chain(&e)),
            Err(_) => Some("the tape writer panicked".to_owned()),
        }
    }
}

/// The front's word that it waits no longer for its sessions' links to close (its grace
/// is over, or a second signal came): true once said. A session's task then ends without
/// its link's close; its recording has ended before that close began. A sender that is
/// gone never gives up.
pub type GiveUp = watch::Receiver<bool>;

/// Starts the task of one session over `link` (behind its layers already); `recording`
/// is finished when the session ends, before the link is closed; the wait for that close
/// ends when `give_up` says so. Must be called inside the runtime.
pub fn spawn<L: Link + 'static>(
    link: L,
    recording: Option<RecordSession>,
    give_up: GiveUp,
) -> (SessionHandle, tokio::task::JoinHandle<Ended>) {
    let (commands, rx) = mpsc::unbounded_channel();
    let recording = recording.map(|session| Recording {
        tap: session.handle(),
        session,
    });
    let task = Task {
        link,
        commands: rx,
        waiting: HashMap::new(),
        newest: None,
        tokens: HashMap::new(),
        cancelled: HashSet::new(),
        recording,
        drained: false,
        give_up,
        get: GetStream::default(),
    };
    let handle = SessionHandle {
        commands,
        activity: std::sync::Arc::new(Activity::new()),
        offer: None,
    };
    (handle, tokio::spawn(task.run()))
}

/// One session's task: the link, and the streams waiting for it.
struct Task<L> {
    link: L,
    commands: mpsc::UnboundedReceiver<Command>,
    /// Streams waiting for the response to a request, by live request id.
    waiting: HashMap<String, Stream>,
    /// The newest open stream: where server requests and notifications go.
    newest: Option<Stream>,
    /// The live request id of each waiting request's `progressToken` (its JSON text).
    tokens: HashMap<String, String>,
    /// Requests whose client went away: their late answers go nowhere.
    cancelled: HashSet<String>,
    recording: Option<Recording>,
    /// The link said it has nothing more to give (until it is sent more).
    drained: bool,
    give_up: GiveUp,
    /// The client's GET stream, and what is kept for it.
    get: GetStream,
}

impl<L: Link> Task<L> {
    async fn run(mut self) -> Ended {
        loop {
            let why = tokio::select! {
                command = self.commands.recv() => match command {
                    Some(Command::Post(msg, stream)) => self.post(msg, stream).await.map(|r| (r, None)),
                    Some(Command::Cancelled(id)) => {
                        self.cancel(id).await;
                        None
                    }
                    Some(Command::Listen(last, opened)) => {
                        let _ = opened.send(self.get.open(last.as_deref()));
                        None
                    }
                    Some(Command::End(reason, done)) => Some((reason, done)),
                    None => Some((CloseReason::SessionEnded, None)),
                },
                incoming = self.link.next(), if !self.drained => match incoming {
                    Some(incoming) => self.route(incoming).map(|r| (r, None)),
                    None => match self.link.disconnected() {
                        Some(gone) => Some((self.disconnected(&gone), None)),
                        None => {
                            self.drained = true;
                            None
                        }
                    },
                },
            };
            if let Some((reason, done)) = why {
                let ended = self.end(reason).await;
                if let Some(done) = done {
                    let _ = done.send(());
                }
                return ended;
            }
        }
    }

    /// Hands a client message to the link; a request's stream waits for its answer.
    async fn post(&mut self, msg: Message, stream: Option<Stream>) -> Option<CloseReason> {
        if msg.kind() == Kind::Request
            && let (Some(id), Some(stream)) = (msg.id(), &stream)
        {
            self.cancelled.remove(id);
            self.waiting.insert(id.to_owned(), stream.clone());
            self.newest = Some(stream.clone());
            if let Some(token) = super::progress::token_of_request(msg.raw()) {
                self.tokens.insert(token, id.to_owned());
            }
        }
        if self.link.send(msg.clone()).await.is_err() {
            if let Some(id) = msg.id() {
                self.forget(id);
            }
            if let Some(stream) = stream {
                let _ = stream.send(Item::Gone);
            }
            return Some(CloseReason::SessionEnded);
        }
        // What was sent may have answers, also from a link that had nothing more: the
        // replay past its recorded server's end answers a ping, or with the divergence.
        self.drained = false;
        None
    }

    /// Routes one thing from the link; the reason to end the session, when it must.
    fn route(&mut self, incoming: Incoming) -> Option<CloseReason> {
        match incoming {
            Incoming::Message(msg) => {
                self.deliver(&msg);
                None
            }
            // The layers have seen it already; the client never does.
            Incoming::Event(_) => None,
            Incoming::Refused { request, error } => self.refused(&request, error),
        }
    }

    /// An injected disconnect: no more is taken from the client, the request it ended on
    /// gets its status ([`DISCONNECT_STATUS`] by default), and the session ends (the
    /// others' streams end without an answer).
    fn disconnected(&mut self, gone: &Disconnect) -> CloseReason {
        self.commands.close();
        let status = gone.status.unwrap_or(DISCONNECT_STATUS);
        if let Some(tx) = gone.id.as_deref().and_then(|id| self.forget(id)) {
            let _ = tx.send(Item::Disconnect(status));
        }
        CloseReason::InjectedDisconnect
    }

    /// A server message to the stream that waits for it; one from the GET stream, or
    /// while no POST stream is open, to the GET stream ([`get`]); else to the newest.
    fn deliver(&mut self, msg: &Message) {
        let event = sse_event(msg.raw());
        let slow = msg.is_slow();
        let event = move || match slow {
            true => Item::Slow(event),
            false => Item::Event(event),
        };
        if matches!(msg.kind(), Kind::Response | Kind::Error)
            && let Some(id) = msg.id()
        {
            if let Some(tx) = self.forget(id) {
                if tx.send(event()).is_err() {
                    // Its client went before the handler heard of it, its answer already
                    // here: no cancel a replay could ask of a client, so none is named.
                    self.record_cancelled(None);
                }
                return;
            }
            if self.cancelled.remove(id) {
                return;
            }
        }
        // An error with a null id (a parse error: the policy gate's, a remote's) on the
        // answer stream of a request answers that request.
        if msg.kind() == Kind::Error
            && msg.id().is_none()
            && let Some(tx) = msg.answered().and_then(|origin| self.forget(origin))
        {
            let _ = tx.send(event());
            return;
        }
        if let Some(tx) = self
            .progress_stream(msg)
            .or_else(|| self.origin_stream(msg))
        {
            let _ = tx.send(event());
            return;
        }
        let for_get = msg.stream().is_some() || self.newest.is_none();
        match &self.newest {
            Some(tx) if !(for_get && self.get.is_open()) => {
                let _ = tx.send(event());
            }
            _ => self.get.give(msg.raw()),
        }
    }

    /// A refusal to the request's stream; a refused `initialize` or a `404` ends the
    /// session.
    fn refused(&mut self, request: &Message, error: HttpError) -> Option<CloseReason> {
        let ends = request.method() == Some("initialize")
            || matches!(error, HttpError::Status { status: 404, .. });
        if let Some(id) = request.id().filter(|_| request.kind() == Kind::Request)
            && let Some(tx) = self.forget(id)
        {
            let _ = tx.send(Item::Refused(error));
        }
        ends.then_some(CloseReason::SessionEnded)
    }

    /// The stream of the waiting request a `notifications/progress` is for.
    fn progress_stream(&self, msg: &Message) -> Option<&Stream> {
        if msg.method() != Some("notifications/progress") {
            return None;
        }
        let token = super::progress::token_of_progress(msg.raw())?;
        self.waiting.get(self.tokens.get(&token)?)
    }

    /// The stream of the waiting request on whose upstream answer stream `msg` came,
    /// when the link says so (a remote's POST).
    fn origin_stream(&self, msg: &Message) -> Option<&Stream> {
        self.waiting.get(msg.answered()?)
    }

    /// Takes the stream waiting for `id` off the routes (it ends when dropped).
    fn forget(&mut self, id: &str) -> Option<Stream> {
        self.tokens.retain(|_, request| request != id);
        let tx = self.waiting.remove(id)?;
        if self.newest.as_ref().is_some_and(|n| n.same_channel(&tx)) {
            self.newest = None;
        }
        Some(tx)
    }

    /// The client of request `id`'s stream went away before its answer: the upstream
    /// stops reading it too (a remote's POST is dropped, as the stateless revision
    /// cancels).
    async fn cancel(&mut self, id: String) {
        if self.forget(&id).is_none() {
            return;
        }
        self.link.cancel(&id).await;
        self.record_cancelled(Some(&id));
        self.cancelled.insert(id);
    }

    /// `$http/cancelled` in the recording, when there is one.
    fn record_cancelled(&self, id: Option<&str>) {
        if let Some(recording) = &self.recording {
            recording.tap.record(&Lifecycle::HttpCancelled {
                reason: crate::upstream::replay::STREAM_CLOSED.into(),
                request_id: id.map(str::to_owned),
            });
        }
    }

    /// Ends the recording (whole, whatever the link's close does), then closes the link
    /// unless the front gives up on that first.
    async fn end(mut self, reason: CloseReason) -> Ended {
        self.commands.close();
        self.waiting.clear();
        self.tokens.clear();
        self.newest = None;
        self.get.close();
        let tape_error = match self.recording.take() {
            Some(recording) => recording.end(&reason).await,
            None => None,
        };
        let mut give_up = self.give_up;
        let closed = tokio::select! {
            closed = self.link.close(reason) => closed.ok(),
            () = given_up(&mut give_up) => None,
        };
        let verdict = match closed {
            Some(Closed::Replayed { verdict, .. }) => Some(*verdict),
            _ => None,
        };
        Ended {
            verdict,
            tape_error,
        }
    }
}

/// Resolves once `give_up` says so; never when its sender is gone.
async fn given_up(give_up: &mut GiveUp) {
    if give_up.wait_for(|given| *given).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// One SSE event carrying one message (on one line).
pub fn sse_event(line: &[u8]) -> Bytes {
    let line = crate::upstream::http::one_line(line);
    let mut event = Vec::with_capacity(line.len() + 24);
    event.extend_from_slice(b"event: message\ndata: ");
    event.extend_from_slice(&line);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}
