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

use std::collections::VecDeque;
use std::convert::Infallible;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use hyper::{Request, Response};
use tokio::sync::mpsc;

use crate::downstream::front::guard::Rejection;
use crate::upstream::http::Offer;

use super::handler::Body;
use super::session::SessionHandle;
use super::state::Front;

/// The most events of a GET stream kept for a client that resumes it.
pub const MAX_KEPT_EVENTS: usize = 1024;
/// The most bytes of events of a GET stream kept for a client that resumes it.
pub const MAX_KEPT_BYTES: usize = 4 * 1024 * 1024;
/// How long a client's GET waits to hear whether the upstream offers a GET stream (the
/// link opens it once the session exists); past it, the stream is opened anyway.
pub const OFFER_WAIT: Duration = Duration::from_secs(10);

/// What the client's GET stream is given: SSE events, each one message.
pub type Events = mpsc::UnboundedReceiver<Bytes>;

/// A session's GET stream: the open one, and what was given on it or held for it.
#[derive(Debug, Default)]
pub struct GetStream {
    open: Option<mpsc::UnboundedSender<Bytes>>,
    /// The events kept for a resumption, oldest first, with their ids.
    kept: VecDeque<(u64, Bytes)>,
    kept_bytes: usize,
    /// The id of the last event made.
    last: u64,
    /// The id of the last event an open stream was given.
    given: u64,
}

impl GetStream {
    /// True while a client's GET stream is open.
    pub fn is_open(&self) -> bool {
        self.open.as_ref().is_some_and(|tx| !tx.is_closed())
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
        let (tx, rx) = mpsc::unbounded_channel();
        for (id, event) in self.kept.iter().filter(|(id, _)| *id > after) {
            if tx.send(event.clone()).is_ok() {
                self.given = *id;
            }
        }
        self.given = self.given.max(after);
        self.open = Some(tx);
        Ok(rx)
    }

    /// Gives the server message `line` to the GET stream: at once when one is open, and
    /// kept for a resumption (or, when none is open, for the next opening).
    pub fn give(&mut self, line: &[u8]) {
        self.last += 1;
        let event = event(self.last, line);
        self.kept_bytes += event.len();
        self.kept.push_back((self.last, event.clone()));
        while self.kept.len() > MAX_KEPT_EVENTS
            || (self.kept_bytes > MAX_KEPT_BYTES && self.kept.len() > 1)
        {
            if let Some((_, old)) = self.kept.pop_front() {
                self.kept_bytes -= old.len();
            }
        }
        if let Some(tx) = &self.open {
            if tx.send(event).is_ok() {
                self.given = self.last;
            } else {
                self.open = None;
            }
        }
    }

    /// Ends the client's GET stream (the session ended).
    pub fn close(&mut self) {
        self.open = None;
    }
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
    let busy = session.activity().hold();
    let body = futures_util::stream::unfold((events, busy), |(mut events, busy)| async move {
        let event = events.recv().await?;
        Some((Ok::<_, Infallible>(Frame::data(event)), (events, busy)))
    });
    let mut resp = Response::new(BodyExt::boxed(StreamBody::new(body)));
    let headers = resp.headers_mut();
    headers.insert(
        "content-type",
        hyper::header::HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(
        "cache-control",
        hyper::header::HeaderValue::from_static("no-cache"),
    );
    resp
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
}
