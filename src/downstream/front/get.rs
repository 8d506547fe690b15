//! The GET stream of a front session: where the server's messages that belong to no
//! request go, as the spec's "Listening for Messages from the Server" has it
//! (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#listening-for-messages-from-the-server>).
//!
//! A client opens it with `GET /mcp`, its `Mcp-Session-Id` and `Accept:
//! text/event-stream`. When forwarding, the session's link has opened the upstream's GET
//! stream ([`HttpLink::listening`](crate::upstream::http::HttpLink::listening)); if the
//! upstream answered that with a refusal (`405`: it offers none), the client gets the
//! same status. When replaying there is no upstream and a GET stream is always offered.
//!
//! What goes on it (the routing is [`super::session`]'s): a server message that came on
//! the upstream's GET stream (`_meta.stream` in a tape), and any other server request or
//! notification while no POST stream of the session is open. Without an open GET stream
//! such a message goes to the newest open POST stream, as it did before GET streams
//! existed; with neither, it is held for the next GET stream.
//!
//! Every event on it carries an SSE `id` (a counter per session), and the last
//! [`MAX_KEPT_EVENTS`] events (at most [`MAX_KEPT_BYTES`]) are kept, so a client that
//! reconnects with `Last-Event-ID` gets what it missed after that id
//! (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#resumability-and-redelivery>);
//! a GET without it gets what no stream was given yet. One GET stream per session: a
//! second one without `Last-Event-ID` while one is open is `409 Conflict`; one with
//! `Last-Event-ID` is the client resuming, and replaces the old one.
//! POST streams carry no event ids and are not resumed.
//!
//! What waits to be written to an open GET stream is bounded: at most
//! [`MAX_QUEUED_EVENTS`] events and [`MAX_QUEUED_BYTES`] bytes (one event larger than
//! that is let through when nothing else waits). A client that stops reading while the
//! server keeps sending passes that bound; the front then closes its GET stream — the
//! client gets what was queued, then the end of the stream — and no longer counts the
//! session busy for it, so the idle reaper can end an abandoned session. What came after
//! is kept as any event is, for the client to resume with `Last-Event-ID`.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::Frame;
use hyper::{Request, Response};
use tokio::sync::mpsc;

use crate::downstream::front::guard::Rejection;
use crate::upstream::http::Offer;

use super::handler::Body;
use super::idle::Busy;
use super::session::SessionHandle;
use super::state::Front;

/// The most events of a GET stream kept for a client that resumes it.
pub const MAX_KEPT_EVENTS: usize = 1024;
/// The most bytes of events of a GET stream kept for a client that resumes it.
pub const MAX_KEPT_BYTES: usize = 4 * 1024 * 1024;
/// How long a client's GET waits to hear whether the upstream offers a GET stream (the
/// link opens it once the session exists); past it, the stream is opened anyway.
pub const OFFER_WAIT: Duration = Duration::from_secs(10);

/// The most events queued for an open GET stream, not yet written to its client; past
/// it the stream is closed.
pub const MAX_QUEUED_EVENTS: usize = MAX_KEPT_EVENTS;
/// The most bytes of events queued for an open GET stream, not yet written to its
/// client; past it the stream is closed.
pub const MAX_QUEUED_BYTES: usize = MAX_KEPT_BYTES;

/// What an open GET stream and the session share: the bytes queued on it, and what holds
/// the session busy while it is open.
#[derive(Debug, Default)]
struct Shared {
    queued: AtomicUsize,
    busy: Mutex<Held>,
}

/// What holds the session busy for an open GET stream; once the stream is closed (or its
/// client went), nothing does, also a hold that comes after.
#[derive(Debug, Default)]
struct Held {
    busy: Option<Busy>,
    closed: bool,
}

impl Shared {
    /// Lets the session go idle (the stream's client went, or the stream was closed).
    fn release(&self) {
        if let Ok(mut held) = self.busy.lock() {
            held.closed = true;
            held.busy = None;
        }
    }
}

/// What the client's GET stream is given: SSE events, each one message.
#[derive(Debug)]
pub struct Events {
    rx: mpsc::Receiver<Bytes>,
    shared: Arc<Shared>,
}

impl Events {
    /// The next event; `None` once the stream is closed and all queued was taken.
    pub async fn recv(&mut self) -> Option<Bytes> {
        let event = self.rx.recv().await?;
        self.shared.queued.fetch_sub(event.len(), Ordering::Relaxed);
        Some(event)
    }

    /// The next event if one is queued now (tests).
    #[cfg(test)]
    pub fn try_recv(&mut self) -> Result<Bytes, mpsc::error::TryRecvError> {
        let event = self.rx.try_recv()?;
        self.shared.queued.fetch_sub(event.len(), Ordering::Relaxed);
        Ok(event)
    }

    /// Holds the session busy while this stream is open: until it is dropped, or the
    /// session closes the stream (also when it did before this hold).
    pub fn hold(&self, busy: Busy) {
        if let Ok(mut held) = self.shared.busy.lock()
            && !held.closed
        {
            held.busy = Some(busy);
        }
    }
}

impl Drop for Events {
    fn drop(&mut self) {
        self.shared.release();
    }
}

/// The session's end of an open GET stream.
#[derive(Debug)]
struct Open {
    tx: mpsc::Sender<Bytes>,
    shared: Arc<Shared>,
}

impl Open {
    /// Queues `event` unless that passes the bound (or the client went): false then.
    fn offer(&self, event: Bytes) -> bool {
        let queued = self.shared.queued.load(Ordering::Relaxed);
        if queued > 0 && queued + event.len() > MAX_QUEUED_BYTES {
            return false;
        }
        let len = event.len();
        match self.tx.try_send(event) {
            Ok(()) => {
                self.shared.queued.fetch_add(len, Ordering::Relaxed);
                true
            }
            Err(_) => false,
        }
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        self.shared.release();
    }
}

/// A session's GET stream: the open one, and what was given on it or held for it.
#[derive(Debug, Default)]
pub struct GetStream {
    open: Option<Open>,
    /// The events kept for a resumption, oldest first, with their ids (and whether each
    /// carries a server request).
    kept: VecDeque<Kept>,
    kept_bytes: usize,
    /// Events dropped from what is kept before any stream was given them.
    lost: u64,
    /// The id of the last event made.
    last: u64,
    /// The id of the last event an open stream was given.
    given: u64,
}

impl GetStream {
    /// True while a client's GET stream is open.
    pub fn is_open(&self) -> bool {
        self.open.as_ref().is_some_and(|o| !o.tx.is_closed())
    }

    /// Opens the client's GET stream, resuming after `last_event_id` when given: what it
    /// is owed comes first. `409` while one is open and this is no resumption.
    pub fn open(&mut self, last_event_id: Option<&str>) -> Result<Events, Rejection> {
        if self.is_open() && last_event_id.is_none() {
            return Err(Rejection::GetStreamOpen);
        }
        let after = last_event_id
            .and_then(|id| id.trim().parse::<u64>().ok())
            .filter(|&id| id <= self.last)
            .unwrap_or(self.given);
        let (tx, rx) = mpsc::channel(MAX_QUEUED_EVENTS);
        let shared = Arc::new(Shared::default());
        let open = Open {
            tx,
            shared: Arc::clone(&shared),
        };
        self.given = self.given.max(after);
        let mut whole = true;
        for kept in self.kept.iter().filter(|k| k.id > after) {
            if !open.offer(kept.event.clone()) {
                whole = false;
                break;
            }
            self.given = kept.id;
        }
        // What does not fit waits for the client's next resumption.
        self.open = whole.then_some(open);
        Ok(Events { rx, shared })
    }

    /// Gives the server message `line` to the GET stream: at once when one is open, and
    /// kept for a resumption (or, when none is open, for the next opening).
    pub fn give(&mut self, line: &[u8]) {
        self.last += 1;
        let event = event(self.last, line);
        self.kept_bytes += event.len();
        let request = crate::message::Message::new(Bytes::copy_from_slice(line)).kind()
            == crate::message::Kind::Request;
        self.kept.push_back(Kept {
            id: self.last,
            event: event.clone(),
            request,
        });
        self.evict();
        if let Some(open) = &self.open {
            if open.offer(event) {
                self.given = self.last;
            } else {
                // The client went, or stopped reading past the bound: the stream ends
                // after what was queued, and the session is no longer busy for it.
                if !open.tx.is_closed() {
                    eprintln!(
                        "mcptape: a GET stream's client reads too slowly: closed it before \
                         event {} (it resumes with Last-Event-ID)",
                        self.last
                    );
                }
                self.open = None;
            }
        }
    }

    /// Keeps what is kept within its bounds: the oldest events go first, but never a server
    /// request no stream was given (the server waits for its answer) while another event
    /// can go instead. Dropping an event no stream was given is said (once a session).
    fn evict(&mut self) {
        let over = |s: &GetStream| {
            s.kept.len() > MAX_KEPT_EVENTS || (s.kept_bytes > MAX_KEPT_BYTES && s.kept.len() > 1)
        };
        while over(self) {
            let given = self.given;
            let at = self
                .kept
                .iter()
                .position(|k| !(k.request && k.id > given))
                .unwrap_or(0);
            let Some(old) = self.kept.remove(at) else {
                break;
            };
            self.kept_bytes -= old.event.len();
            if old.id > given {
                if self.lost == 0 {
                    eprintln!(
                        "mcptape: no GET stream took the server's messages: event {} and later ones are no longer kept",
                        old.id
                    );
                }
                self.lost += 1;
            }
        }
    }

    /// Ends the client's GET stream (the session ended).
    pub fn close(&mut self) {
        self.open = None;
    }
}

/// One event kept for a resumption.
#[derive(Debug)]
struct Kept {
    id: u64,
    event: Bytes,
    /// It carries a server request.
    request: bool,
}

/// One SSE event with its id, carrying one message.
fn event(id: u64, line: &[u8]) -> Bytes {
    let message = super::session::sse_event(line);
    let mut event = Vec::with_capacity(message.len() + 24);
    event.extend_from_slice(format!("id: {id}\n").as_bytes());
    event.extend_from_slice(&message);
    Bytes::from(event)
}

/// Answers a client's `GET`: its session's GET stream, or why not.
pub(super) async fn serve<B>(
    front: &Front,
    req: &Request<B>,
    session_id: Option<String>,
) -> Response<Body> {
    let header = |name: &str| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let accepts = header("accept").is_some_and(|a| {
        a.split(',').any(|t| {
            let t = t.split(';').next().unwrap_or("").trim();
            t.eq_ignore_ascii_case("text/event-stream") || t == "*/*" || t == "text/*"
        })
    });
    if !accepts {
        return Rejection::NotEventStream.response();
    }
    let Some(id) = session_id else {
        return Rejection::SessionRequired.response();
    };
    let Some(session) = front.get(&id) else {
        return Rejection::NoSession.response();
    };
    if let Some(status) = upstream_refused(&session).await {
        return Rejection::NoUpstreamGet(status).response();
    }
    match session.listen(header("last-event-id")).await {
        Some(Ok(events)) => stream(&session, events),
        Some(Err(refused)) => refused.response(),
        None => Rejection::NoSession.response(),
    }
}

/// The status the upstream refused its GET stream with, once it has answered (at most
/// [`OFFER_WAIT`]); `None` when it offers one, or when there is no upstream (replay).
async fn upstream_refused(session: &SessionHandle) -> Option<u16> {
    let mut offer = session.offer()?;
    let known = offer.wait_for(|o| *o != Offer::Unknown);
    match tokio::time::timeout(OFFER_WAIT, known).await {
        Ok(Ok(o)) => match *o {
            Offer::Refused(status) => Some(status),
            Offer::Offered | Offer::Unknown => None,
        },
        _ => None,
    }
}

/// The SSE answer to a GET: what the session gives its GET stream, for as long as it is
/// open; the session counts as busy meanwhile.
fn stream(session: &SessionHandle, events: Events) -> Response<Body> {
    events.hold(session.activity().hold());
    let body = futures_util::stream::unfold(events, |mut events| async move {
        let event = events.recv().await?;
        Some((Ok::<_, Infallible>(Frame::data(event)), events))
    });
    super::handler::sse_response(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(rx: &mut Events) -> Vec<String> {
        std::iter::from_fn(|| rx.try_recv().ok())
            .map(|e| String::from_utf8_lossy(&e).into_owned())
            .collect()
    }

    #[test]
    fn what_no_stream_took_is_given_to_the_next_one_with_ids() {
        let mut get = GetStream::default();
        get.give(br#"{"id":0,"method":"roots/list"}"#);
        let mut rx = get.open(None).expect("opens");
        get.give(br#"{"method":"notifications/message"}"#);
        let events = drain(&mut rx);
        assert_eq!(events.len(), 2);
        assert!(
            events[0].starts_with("id: 1\nevent: message\ndata: {\"id\":0"),
            "{events:?}"
        );
        assert!(events[1].starts_with("id: 2\n"), "{events:?}");
    }

    #[test]
    fn a_second_stream_is_a_conflict_and_a_resumption_gets_what_was_missed() {
        let mut get = GetStream::default();
        let first = get.open(None).expect("opens");
        assert_eq!(get.open(None).err(), Some(Rejection::GetStreamOpen));
        assert_eq!(
            Rejection::GetStreamOpen.status(),
            hyper::StatusCode::CONFLICT
        );
        for n in 0..3 {
            get.give(format!(r#"{{"method":"n{n}"}}"#).as_bytes());
        }
        // The client saw event 1, then lost its connection.
        drop(first);
        let mut again = get.open(Some("1")).expect("a resumption");
        let events = drain(&mut again);
        assert_eq!(events.len(), 2, "{events:?}");
        assert!(events[0].starts_with("id: 2\n") && events[0].contains("n1"));
        assert!(events[1].starts_with("id: 3\n") && events[1].contains("n2"));
        // A fresh GET after that one closed is owed nothing more.
        drop(again);
        let mut fresh = get.open(None).expect("opens");
        assert!(drain(&mut fresh).is_empty());
    }

    #[test]
    fn what_is_kept_for_a_resumption_is_bounded() {
        let mut get = GetStream::default();
        for _ in 0..MAX_KEPT_EVENTS + 10 {
            get.give(b"{}");
        }
        assert_eq!(get.kept.len(), MAX_KEPT_EVENTS);
        let mut rx = get.open(Some("0")).expect("opens");
        let events = drain(&mut rx);
        assert_eq!(events.len(), MAX_KEPT_EVENTS);
        assert!(events[0].starts_with("id: 11\n"), "{}", events[0]);
    }

    #[test]
    fn a_server_request_held_for_the_next_get_outlives_a_flood_of_notifications() {
        let mut get = GetStream::default();
        get.give(br#"{"jsonrpc":"2.0","id":0,"method":"roots/list"}"#);
        for _ in 0..MAX_KEPT_EVENTS + 10 {
            get.give(br#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#);
        }
        assert_eq!(get.kept.len(), MAX_KEPT_EVENTS);
        assert!(get.lost > 0, "notifications were dropped, and said so");
        let mut rx = get.open(None).expect("opens");
        let events = drain(&mut rx);
        assert!(
            events[0].starts_with("id: 1\n") && events[0].contains("roots/list"),
            "the server waits for this one's answer: {}",
            events[0]
        );
    }

    #[test]
    fn a_client_that_stops_reading_has_its_stream_closed_past_the_bound_and_resumes() {
        let mut get = GetStream::default();
        let activity = super::super::idle::Activity::new();
        let mut rx = get.open(None).expect("opens");
        rx.hold(activity.hold());
        // The client never reads: the upstream keeps logging.
        for n in 0..MAX_QUEUED_EVENTS + 100 {
            get.give(format!(r#"{{"method":"notifications/message","n":{n}}}"#).as_bytes());
        }
        assert!(!get.is_open(), "closed once the bound was passed");
        assert_eq!(
            rx.rx.len(),
            MAX_QUEUED_EVENTS,
            "no more was queued than the bound"
        );
        let later = tokio::time::Instant::now() + Duration::from_secs(1);
        assert!(
            activity.idle_past(later, Duration::from_millis(1)),
            "the closed stream holds the session busy no longer"
        );
        // The client reads what was queued, then the stream's end.
        let queued = drain(&mut rx);
        assert_eq!(queued.len(), MAX_QUEUED_EVENTS);
        assert!(rx.rx.is_closed() && rx.rx.is_empty(), "the stream ended");
        let last_seen = MAX_QUEUED_EVENTS;
        assert!(queued[last_seen - 1].starts_with(&format!("id: {last_seen}\n")));
        // It resumes after the last id it saw and gets what was kept since.
        let mut again = get
            .open(Some(&last_seen.to_string()))
            .expect("a resumption");
        let rest = drain(&mut again);
        assert_eq!(rest.len(), 100, "{:?}", rest.first());
        assert!(rest[0].starts_with(&format!("id: {}\n", last_seen + 1)));
        assert!(get.is_open());
    }

    #[test]
    fn the_bytes_queued_are_bounded_too() {
        let mut get = GetStream::default();
        let _rx = get.open(None).expect("opens");
        let big = format!(r#"{{"pad":"{}"}}"#, "x".repeat(MAX_QUEUED_BYTES / 4));
        for _ in 0..3 {
            get.give(big.as_bytes());
        }
        assert!(get.is_open(), "three quarters fit");
        get.give(big.as_bytes());
        assert!(!get.is_open(), "the fourth passes the byte bound");
        assert!(get.open(None).is_ok(), "a new GET is no conflict");
    }

    #[test]
    fn a_stream_closed_before_it_was_held_holds_the_session_busy_never() {
        let mut get = GetStream::default();
        let activity = super::super::idle::Activity::new();
        let rx = get.open(None).expect("opens");
        let big = format!(r#"{{"pad":"{}"}}"#, "x".repeat(MAX_QUEUED_BYTES / 2));
        for _ in 0..2 {
            get.give(big.as_bytes());
        }
        assert!(!get.is_open(), "closed before the handler held it");
        rx.hold(activity.hold());
        let later = tokio::time::Instant::now() + Duration::from_secs(1);
        assert!(activity.idle_past(later, Duration::from_millis(1)));
    }
}
