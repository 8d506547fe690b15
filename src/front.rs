//! The HTTP front: a local Streamable HTTP endpoint an agent points at
//! (`mcptape proxy --listen 127.0.0.1:PORT`), forwarding to a remote server
//! (`--url`) or, in replay mode, answering from the tape with no upstream at all.
//!
//! Every HTTP session (`Mcp-Session-Id`, given by the front on `initialize`) is one
//! connection of the tape. A POSTed request is answered with an SSE stream that carries
//! what belongs to it — server requests and notifications first, then its response —
//! and ends after the response; a POSTed notification or response gets `202 Accepted`.
//! `DELETE` ends the session. Only POST and DELETE are served (no GET stream yet).
//! What is refused before a session sees a request (`Origin`, `Host`, a slow or large
//! body) is [`crate::guard`]; the connection bound, the `EMFILE` pause and the header
//! timeout are [`crate::listen`]; when a session counts as abandoned is [`crate::idle`].

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, StreamBody, combinators::BoxBody};
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response, StatusCode};
use serde_json::json;
use tokio::sync::mpsc;

use crate::endings::{END_GRACE, Endings};
use crate::error::HttpError;
use crate::error::{Error, Result};
use crate::guard::{Guard, Rejection};
use crate::idle::{Activity, Reaper};
use crate::listen::{Acceptor, Limits};
use crate::message::{Kind, Message};
use crate::process::Signals;
use crate::record::tap::{Tap, TapHandle, new_conn_id};
use crate::tape::close::{Close, CloseReason, CloseStatus};
use crate::tape::lifecycle::LifecycleKind;
use crate::tape::{Direction, ServerTape, TapeWriter};
use crate::upstream::Incoming as Upstream;
use crate::upstream::http::{Posted, Remote, error_for};
use crate::upstream::pick::Picker;
use crate::upstream::replay::Options;
use crate::verdict::Verdict;

pub use crate::guard::MAX_BODY_BYTES;

type Body = BoxBody<Bytes, Infallible>;

/// Where answers come from.
pub enum Source {
    /// A remote server; recorded into `tape` when given.
    Forward {
        /// The server's URL.
        url: String,
        /// Headers for every request to it.
        headers: Vec<(String, String)>,
        /// Recording: the tape and how to write it.
        record: Option<(std::path::PathBuf, crate::mode::Recording)>,
    },
    /// The tape, with no upstream.
    Replay {
        /// The loaded tape.
        tape: Arc<ServerTape>,
        /// How to match.
        options: Options,
        /// Where verdicts go.
        report: Option<std::path::PathBuf>,
    },
}

/// One HTTP session.
struct Session {
    remote: Option<Arc<Remote>>,
    picker: Option<Picker>,
    tap: Option<Tap>,
    /// Streams waiting for the response to a request, by live request id.
    waiting: HashMap<String, mpsc::UnboundedSender<Bytes>>,
    /// The newest open stream: where server requests and notifications go.
    newest: Option<mpsc::UnboundedSender<Bytes>>,
    activity: Activity,
}

struct State {
    server: String,
    source: Source,
    /// Claims of recorded connections among this front's sessions, when no `replay`
    /// parent gave a report directory: each session gets its own recorded connection.
    claims: Option<tempfile::TempDir>,
    sessions: Mutex<HashMap<String, Arc<Mutex<Session>>>>,
    verdicts: Mutex<Vec<Verdict>>,
    limits: Limits,
    guard: Guard,
    /// Why a session's recording is incomplete, one line each.
    tape_errors: Mutex<Vec<String>>,
    /// The upstream `DELETE`s under way, awaited before [`serve`] returns.
    endings: Endings,
}

/// What the front leaves when it stops.
#[must_use = "a recording's result must reach the exit status"]
pub struct Served {
    /// The verdicts of the replayed sessions (empty when forwarding).
    pub verdicts: Vec<Verdict>,
    /// Why recordings are incomplete (empty when they are whole, or none was made).
    pub tape_errors: Vec<String>,
}

fn full(status: StatusCode, body: &str) -> Response<Body> {
    let mut r = Response::new(
        Full::new(Bytes::from(body.to_owned()))
            .map_err(|e| match e {})
            .boxed(),
    );
    *r.status_mut() = status;
    r
}

impl State {
    fn new_session(&self) -> Result<Session> {
        let (remote, tap) = match &self.source {
            Source::Forward {
                url,
                headers,
                record,
            } => {
                let tap = match record {
                    Some((path, recording)) => {
                        let writer = TapeWriter::open(path)
                            .inspect_err(|e| self.tape_failed(e))?
                            .limit(recording.max_bytes);
                        let tap = Tap::start(
                            writer,
                            self.server.clone(),
                            new_conn_id()?,
                            recording.redactor.clone(),
                        );
                        tap.handle()
                            .lifecycle(LifecycleKind::Start, json!({"url": url, "front": "http"}));
                        Some(tap)
                    }
                    None => None,
                };
                (
                    Some(Arc::new(
                        Remote::new(url, headers.clone())
                            .map_err(crate::upstream::http::http_usage)?,
                    )),
                    tap,
                )
            }
            Source::Replay { .. } => (None, None),
        };
        let picker = match &self.source {
            Source::Replay {
                tape,
                options,
                report,
            } => Some(Picker::new(
                Arc::clone(tape),
                &self.server,
                report
                    .as_deref()
                    .or(self.claims.as_ref().map(tempfile::TempDir::path)),
                options,
            )),
            Source::Forward { .. } => None,
        };
        Ok(Session {
            remote,
            picker,
            tap,
            waiting: HashMap::new(),
            newest: None,
            activity: Activity::new(),
        })
    }

    /// Ends the sessions idle for longer than `limit`.
    fn expire_idle(&self, limit: std::time::Duration) {
        for id in crate::idle::expired(&self.sessions, limit, |s: &Session| &s.activity) {
            self.end_session(&id, CloseReason::SessionIdle(limit));
        }
    }

    fn end_session(&self, id: &str, why: CloseReason) {
        let Some(session) = self.sessions.lock().ok().and_then(|mut s| s.remove(id)) else {
            return;
        };
        let Ok(mut session) = session.lock() else {
            return;
        };
        if let Some(picker) = session.picker.take() {
            let verdict = picker.finish();
            if let Ok(mut v) = self.verdicts.lock() {
                v.push(verdict);
            }
        }
        if let Some(remote) = session.remote.take() {
            // Its upstream session too (DELETE), and with it its connections.
            self.endings.end(remote);
        }
        if let Some(tap) = session.tap.take() {
            tap.handle().close(&Close::new(why, CloseStatus::Unknown));
            if let Some(e) = tap.finish().error {
                self.tape_failed(&e);
            }
        }
    }

    fn tape_failed(&self, e: &crate::error::TapeError) {
        if let Ok(mut errors) = self.tape_errors.lock() {
            errors.push(crate::error::chain(e));
        }
    }
}

/// One SSE event carrying one message (on one line).
fn sse_event(line: &[u8]) -> Bytes {
    let line = crate::upstream::http::one_line(line);
    let mut event = Vec::with_capacity(line.len() + 24);
    event.extend_from_slice(b"event: message\ndata: ");
    event.extend_from_slice(&line);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

/// Routes a message from the server side to the stream that waits for it.
fn route(session: &mut Session, line: &[u8]) {
    let msg = Message::new(Bytes::copy_from_slice(line));
    let event = sse_event(line);
    if matches!(msg.kind(), Kind::Response | Kind::Error)
        && let Some(tx) = msg.id().and_then(|id| session.waiting.remove(id))
    {
        let _ = tx.send(event);
        // The response ends its stream: nothing else may hold it open.
        if session.newest.as_ref().is_some_and(|n| n.same_channel(&tx)) {
            session.newest = None;
        }
        return;
    }
    if let Some(tx) = &session.newest {
        let _ = tx.send(event);
    }
}

async fn handle(
    state: Arc<State>,
    req: Request<Incoming>,
) -> std::result::Result<Response<Body>, Infallible> {
    if let Err(refused) = state.guard.check(&req) {
        return Ok(refused.response());
    }
    let session_id = req
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    if req.method() == hyper::Method::DELETE {
        let known = session_id
            .as_ref()
            .is_some_and(|id| state.sessions.lock().is_ok_and(|s| s.contains_key(id)));
        if !known {
            return Ok(Rejection::NoSession.response());
        }
        if let Some(id) = &session_id {
            state.end_session(id, CloseReason::SessionEnded);
        }
        return Ok(full(StatusCode::OK, ""));
    }
    if req.method() != hyper::Method::POST {
        return Ok(Rejection::Method.response());
    }
    let body = match crate::guard::read_body(req.into_body(), state.limits.body_timeout).await {
        Ok(body) => body,
        Err(refused) => return Ok(refused.response()),
    };
    let msg = Message::new(body.clone());
    if !msg.is_object() {
        return Ok(Rejection::NotJsonRpc.response());
    }
    let (id, session) = match session_id {
        Some(id) => match state.sessions.lock().ok().and_then(|s| s.get(&id).cloned()) {
            Some(s) => (id, s),
            None => return Ok(Rejection::NoSession.response()),
        },
        None if msg.method() == Some("initialize") => {
            let session = match state.new_session() {
                Ok(s) => Arc::new(Mutex::new(s)),
                Err(e) => {
                    return Ok(full(
                        StatusCode::BAD_GATEWAY,
                        &format!("mcptape: {}\n", crate::error::chain(&e)),
                    ));
                }
            };
            let Ok(id) = crate::ids::session_id()
                .inspect_err(|e| eprintln!("mcptape: error: {}", crate::error::chain(e)))
            else {
                return Ok(full(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "mcptape: no session id\n",
                ));
            };
            if let Ok(mut s) = state.sessions.lock() {
                s.insert(id.clone(), Arc::clone(&session));
            }
            (id, session)
        }
        None => return Ok(Rejection::SessionRequired.response()),
    };
    let (tx, rx) = mpsc::unbounded_channel::<Bytes>();
    let busy;
    let is_request = msg.kind() == Kind::Request;
    let remote = {
        let Ok(mut s) = session.lock() else {
            return Ok(full(StatusCode::INTERNAL_SERVER_ERROR, ""));
        };
        busy = s.activity.hold();
        if let Some(tap) = &s.tap {
            tap.handle().line(Direction::Send, body.clone());
        }
        if is_request && let Some(live) = msg.id() {
            s.waiting.insert(live.to_owned(), tx.clone());
            s.newest = Some(tx.clone());
        }
        if let Some(picker) = s.picker.as_mut() {
            for out in picker.on_client(&body) {
                route(&mut s, crate::framing::content(&out.line));
            }
        }
        s.remote.clone()
    };
    if let Some(remote) = remote {
        // Forward: the upstream's status decides ours; its messages stream back through
        // this POST.
        let tap: Option<TapHandle> = session
            .lock()
            .ok()
            .and_then(|s| s.tap.as_ref().map(Tap::handle));
        let record = |(method, params): crate::upstream::http::Event| {
            if let Some(tap) = &tap {
                tap.lifecycle(method, params);
            }
        };
        let forget = |session: &Arc<Mutex<Session>>| {
            if let (Ok(mut s), Some(live)) = (session.lock(), msg.id()) {
                s.waiting.remove(live);
                if s.newest.as_ref().is_some_and(|n| n.same_channel(&tx)) {
                    s.newest = None;
                }
            }
        };
        // A session the upstream never accepted, or has forgotten, is over here too.
        let drop_session = |status: Option<u16>| {
            if msg.method() == Some("initialize") || status == Some(404) {
                state.end_session(&id, CloseReason::SessionEnded);
            }
        };
        let answer = remote.post(&msg).await;
        if let Err(e) = &answer
            && let Some(fact) = crate::upstream::http::fact(e)
        {
            record(fact);
        }
        match answer {
            Err(HttpError::Status { status, body, .. }) => {
                // The client sees what it would see live (a 404 for an expired session…).
                forget(&session);
                drop_session(Some(status));
                let mut r = full(
                    StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY),
                    "",
                );
                *r.body_mut() = Full::new(body).map_err(|e| match e {}).boxed();
                return Ok(r);
            }
            Err(why) => {
                forget(&session);
                drop_session(None);
                return Ok(full(StatusCode::BAD_GATEWAY, &format!("mcptape: {why}\n")));
            }
            Ok(Posted::Accepted { session: fact }) => {
                fact.into_iter().for_each(record);
                forget(&session);
                return Ok(full(StatusCode::ACCEPTED, ""));
            }
            Ok(Posted::Answer(mut answer)) => {
                // What this POST's upstream stream carries belongs to this POST's stream
                // (its response, and the server requests and notifications before it).
                let own = tx.clone();
                let (session2, msg2, tap2) = (Arc::clone(&session), msg.clone(), tap.clone());
                tokio::spawn(async move {
                    if let Some(live) = msg2.id()
                        && let Ok(mut s) = session2.lock()
                    {
                        s.waiting.remove(live);
                        if s.newest.as_ref().is_some_and(|n| n.same_channel(&own)) {
                            s.newest = None;
                        }
                    }
                    let on_message = |m: &[u8]| {
                        if let Some(tap) = &tap2 {
                            let mut l = m.to_vec();
                            l.push(b'\n');
                            tap.line(Direction::Recv, Bytes::from(l));
                        }
                        if is_request {
                            let _ = own.send(sse_event(m));
                        } else if let Ok(mut s) = session2.lock() {
                            route(&mut s, m);
                        }
                    };
                    let tap3 = tap2.clone();
                    let on_event = |(method, params): crate::upstream::http::Event| {
                        if let Some(tap) = &tap3 {
                            tap.lifecycle(method, params);
                        }
                    };
                    let reading = async {
                        while let Some(item) = answer.next().await {
                            match item {
                                Ok(Upstream::Message(m)) => on_message(m.raw()),
                                Ok(Upstream::Event(e)) => on_event(e),
                                Ok(Upstream::Refused { .. }) => {}
                                Err(why) => return Err(why),
                            }
                        }
                        Ok(())
                    };
                    let gone = async {
                        if is_request {
                            own.closed().await
                        } else {
                            std::future::pending().await
                        }
                    };
                    let result = tokio::select! {
                        r = reading => r,
                        () = gone => {
                            if let Some(tap) = &tap2 {
                                tap.lifecycle(LifecycleKind::HttpCancelled, json!({"reason": "the client closed its stream"}));
                            }
                            return;
                        }
                    };
                    if let Err(why) = result
                        && let Some(error) = error_for(&msg2, &why.to_string())
                    {
                        let _ = own.send(sse_event(&error));
                    }
                });
            }
        }
    }
    drop(tx);
    if !is_request {
        return Ok(full(StatusCode::ACCEPTED, ""));
    }
    // The stream holds its session busy until it ends or its client goes.
    let stream = futures_util::stream::unfold((rx, busy), |(mut rx, busy)| async move {
        let event = rx.recv().await?;
        Some((Ok::<_, Infallible>(Frame::data(event)), (rx, busy)))
    });
    let mut resp = Response::new(BodyExt::boxed(StreamBody::new(stream)));
    let headers = resp.headers_mut();
    headers.insert(
        "content-type",
        hyper::header::HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(
        "cache-control",
        hyper::header::HeaderValue::from_static("no-cache"),
    );
    if let Ok(v) = hyper::header::HeaderValue::from_str(&id) {
        headers.insert("mcp-session-id", v);
    }
    Ok(resp)
}

/// Serves the front on `addr` until SIGTERM/SIGINT/SIGHUP; returns the verdicts of the
/// replayed sessions and what went wrong with the recorded ones. Before it returns, the
/// open sessions are ended and their upstream `DELETE`s awaited, at most [`END_GRACE`]
/// (a second signal stops the wait).
pub async fn serve(
    addr: SocketAddr,
    server: &str,
    source: Source,
    limits: Limits,
) -> Result<Served> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| Error::Io {
            what: format!("cannot listen on {addr}"),
            source,
        })?;
    let local = listener.local_addr().map_err(|source| Error::Io {
        what: format!("cannot listen on {addr}"),
        source,
    })?;
    if !local.ip().is_loopback() {
        crate::term::eprintln_escaped!(
            "mcptape: warning: listening on {local}, which is not a loopback address"
        );
    }
    crate::term::eprintln_escaped!("mcptape: listening on http://{local}/mcp (server `{server}`)");
    let claims = match &source {
        Source::Replay { report: None, .. } => tempfile::tempdir().ok(),
        _ => None,
    };
    let state = Arc::new(State {
        server: server.to_owned(),
        source,
        claims,
        sessions: Mutex::new(HashMap::new()),
        verdicts: Mutex::new(Vec::new()),
        limits,
        guard: Guard::new(local),
        tape_errors: Mutex::new(Vec::new()),
        endings: Endings::default(),
    });
    let mut signals = Signals::new()?;
    let (mut acceptor, http1) = (
        Acceptor::new(listener, &limits),
        crate::listen::http1(&limits),
    );
    let mut reaper = Reaper::new(limits.session_idle);
    loop {
        tokio::select! {
            (stream, permit) = acceptor.accept() => {
                let (state, http1) = (Arc::clone(&state), http1.clone());
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| handle(Arc::clone(&state), req));
                    let _ = http1.serve_connection(hyper_util::rt::TokioIo::new(stream), service).await;
                    drop(permit);
                });
            }
            limit = reaper.tick() => state.expire_idle(limit),
            _ = signals.recv() => break,
        }
    }
    let ids: Vec<String> = state
        .sessions
        .lock()
        .map(|s| s.keys().cloned().collect())
        .unwrap_or_default();
    for id in ids {
        state.end_session(&id, CloseReason::SessionEnded);
    }
    state.endings.finish(END_GRACE, &mut signals).await;
    let verdicts = state.verdicts.lock().map(|v| v.clone()).unwrap_or_default();
    let tape_errors = state
        .tape_errors
        .lock()
        .map(|e| e.clone())
        .unwrap_or_default();
    Ok(Served {
        verdicts,
        tape_errors,
    })
}
