//! The hyper handler of the front: one HTTP request in, one answer out.
//!
//! It checks the request ([`crate::downstream::front::guard`]), finds its session (or starts one for an
//! `initialize` without a session id, or one of its own for a sessionless stateless
//! request: [`crate::downstream::front::stateless`]), hands the message to the session's task, and
//! answers: `202 Accepted` for a notification or an answer; for a request, an SSE stream
//! that starts with the first item routed to it, or the upstream's status when it refused
//! the request. `GET` opens the session's GET stream ([`super::get`]). `DELETE` ends the
//! session. It never waits for the upstream otherwise: the session's task does.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, StreamBody, combinators::BoxBody};
use hyper::body::{Frame, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use tokio::sync::mpsc;

use crate::downstream::front::guard::Rejection;
use crate::downstream::front::idle::Busy;
use crate::error::HttpError;
use crate::message::{Kind, Message};
use crate::tape::close::CloseReason;

use super::session::{Item, SessionHandle, sse_event};
use super::state::Front;

/// The body of every answer.
pub type Body = BoxBody<Bytes, Infallible>;

/// A plain answer.
fn full(status: StatusCode, body: impl Into<Bytes>) -> Response<Body> {
    let mut r = Response::new(Full::new(body.into()).map_err(|e| match e {}).boxed());
    *r.status_mut() = status;
    r
}

/// Answers one HTTP request.
pub async fn handle(
    front: Arc<Front>,
    req: Request<Incoming>,
) -> std::result::Result<Response<Body>, Infallible> {
    if let Err(refused) = front.guard.check(&req) {
        return Ok(refused.response());
    }
    let session_id = req
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let version = req
        .headers()
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    if req.method() == Method::DELETE {
        return Ok(match session_id.and_then(|id| front.remove(&id)) {
            Some(session) => {
                session.end_and_wait(CloseReason::SessionEnded).await;
                full(StatusCode::OK, "")
            }
            None => Rejection::NoSession.response(),
        });
    }
    if req.method() == Method::GET {
        return Ok(super::get::serve(&front, &req, session_id).await);
    }
    if req.method() != Method::POST {
        return Ok(Rejection::Method.response());
    }
    let body = match crate::downstream::front::guard::read_body(
        req.into_body(),
        front.limits.body_timeout,
    )
    .await
    {
        Ok(body) => body,
        Err(refused) => return Ok(refused.response()),
    };
    let msg = Message::new(body);
    if !msg.is_object() {
        return Ok(Rejection::NotJsonRpc.response());
    }
    if session_id.is_none() && super::stateless::is_stateless(&msg, version.as_deref()) {
        return Ok(match front.open_exchange(&msg, version.as_deref()) {
            Ok(exchange) => post(None, &exchange, msg).await,
            Err((status, why)) => full(status, format!("mcptape: {why}\n")),
        });
    }
    let (id, session) = match session_id {
        Some(id) => match front.get(&id) {
            Some(session) => (id, session),
            None => return Ok(Rejection::NoSession.response()),
        },
        None if msg.method() == Some("initialize") => match front.open() {
            Ok(opened) => opened,
            Err((status, why)) => return Ok(full(status, format!("mcptape: {why}\n"))),
        },
        None => return Ok(Rejection::SessionRequired.response()),
    };
    Ok(post(Some(&id), &session, msg).await)
}

/// Hands `msg` to `session` (HTTP session `id`; none for a sessionless exchange, which
/// ends with its answer) and answers for it.
async fn post(id: Option<&str>, session: &SessionHandle, msg: Message) -> Response<Body> {
    let busy = session.activity().hold();
    let live = msg.id().filter(|_| msg.kind() == Kind::Request);
    let Some(live) = live.map(str::to_owned) else {
        let posted = session.post(msg, None);
        if id.is_none() {
            session.end(CloseReason::ExchangeDone);
        }
        if !posted {
            return Rejection::NoSession.response();
        }
        return full(StatusCode::ACCEPTED, "");
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    if !session.post(msg.clone(), Some(tx)) {
        return Rejection::NoSession.response();
    }
    let watch = Watch {
        session: session.clone(),
        id: Some(live),
        exchange: id.is_none(),
    };
    let mut pieces = VecDeque::new();
    let first = match rx.recv().await {
        Some(Item::Refused(error)) => return refused(error),
        Some(Item::Gone) => return full(StatusCode::BAD_GATEWAY, "mcptape: the session is gone\n"),
        Some(Item::Disconnect(status)) => return disconnected(status),
        Some(Item::Event(event)) => Some(event),
        Some(Item::Slow(event)) => {
            pieces = cut(&event);
            pieces.pop_front()
        }
        None => None,
    };
    stream(
        id,
        first,
        Answers {
            rx,
            msg,
            busy,
            watch,
            pieces,
        },
    )
}

/// The answer to a request an injected disconnect ended the session on.
fn disconnected(status: u16) -> Response<Body> {
    full(
        StatusCode::from_u16(status).unwrap_or(StatusCode::NOT_FOUND),
        "mcptape: injected disconnect: the session is over\n",
    )
}

/// A slow event's pieces ([`crate::downstream::slow`]).
fn cut(event: &Bytes) -> VecDeque<Bytes> {
    crate::downstream::slow::pieces(event.len())
        .map(|piece| event.slice(piece))
        .collect()
}

/// The answer to a refused request: the upstream's own status (the client sees what it
/// would see live, a `404` for an expired session…), or `502` with the reason.
fn refused(error: HttpError) -> Response<Body> {
    match error {
        HttpError::Status { status, body, .. } => full(
            StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY),
            body,
        ),
        // The upstream accepted a request without answering it: so do we.
        HttpError::Unanswered { .. } => full(StatusCode::ACCEPTED, ""),
        // Its text says it is mcptape's where the server could not be reached.
        why => full(StatusCode::BAD_GATEWAY, format!("{why}\n")),
    }
}

/// What an open answer stream holds: the session busy, and the watch on its client.
struct Answers {
    rx: mpsc::UnboundedReceiver<Item>,
    msg: Message,
    busy: Busy,
    watch: Watch,
    /// The rest of a slow event, written a piece at a time with a pause before each.
    pieces: VecDeque<Bytes>,
}

impl Answers {
    /// The next event of the stream (or piece of a slow one); `None` once it is over.
    async fn next(&mut self) -> Option<Bytes> {
        if let Some(piece) = self.pieces.pop_front() {
            tokio::time::sleep(crate::downstream::slow::SLOW_PAUSE).await;
            return Some(piece);
        }
        match self.rx.recv().await {
            Some(Item::Event(event)) => Some(event),
            Some(Item::Slow(event)) => {
                self.pieces = cut(&event);
                self.pieces.pop_front()
            }
            // The server went away (injected): the stream ends without an answer, as a
            // server's would; the session is over, so no cancel is said for it.
            Some(Item::Disconnect(_)) => {
                self.watch.id = None;
                None
            }
            // After the stream started, a refusal reaches the client as its answer.
            Some(Item::Refused(why)) => {
                crate::upstream::http::error_for(&self.msg, &why.to_string()).map(|e| sse_event(&e))
            }
            Some(Item::Gone) | None => {
                self.watch.id = None;
                None
            }
        }
    }
}

/// Tells the session when a request's stream is dropped before it ended; ends a
/// sessionless exchange when its stream is over either way.
struct Watch {
    session: SessionHandle,
    id: Option<String>,
    exchange: bool,
}

impl Drop for Watch {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.session.cancelled(id);
        }
        if self.exchange {
            self.session.end(CloseReason::ExchangeDone);
        }
    }
}

/// The SSE answer to a request: `first`, then what else is routed to it; with the
/// session's id, when there is a session.
fn stream(id: Option<&str>, first: Option<Bytes>, answers: Answers) -> Response<Body> {
    let first = futures_util::stream::iter(first.map(|e| Ok::<_, Infallible>(Frame::data(e))));
    let rest = futures_util::stream::unfold(answers, |mut answers| async move {
        let event = answers.next().await?;
        let _ = &answers.busy;
        Some((Ok::<_, Infallible>(Frame::data(event)), answers))
    });
    let body = futures_util::StreamExt::chain(first, rest);
    let mut resp = sse_response(body);
    if let Some(Ok(v)) = id.map(hyper::header::HeaderValue::from_str) {
        resp.headers_mut().insert("mcp-session-id", v);
    }
    resp
}

/// A `200` SSE answer whose events are `body`'s.
pub(super) fn sse_response<S>(body: S) -> Response<Body>
where
    S: futures_util::Stream<Item = Result<Frame<Bytes>, Infallible>> + Send + Sync + 'static,
{
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
