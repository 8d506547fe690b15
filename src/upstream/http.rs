//! A remote Streamable HTTP server as an upstream
//! (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http>).
//!
//! Each message the client sends is POSTed to the URL as it is (`Accept: application/json,
//! text/event-stream`); the answer — one JSON message, an SSE stream of messages (server
//! requests and notifications before the response included; comments and data-less
//! priming events are not messages), or `202 Accepted` — goes back to the client one
//! message each, byte for byte. The session id the server gives with a success
//! (`Mcp-Session-Id`; never one that comes with a refusal) and the negotiated
//! `MCP-Protocol-Version` go on every later request (a stateless, 2026-07-28, request
//! carries the version its body names instead), and the session is ended with `DELETE`
//! when the client hangs up. Requests run concurrently.
//!
//! HTTP-level facts that matter go into the tape as lifecycle entries: `$http/session`
//! (the session id, redacted by name like any credential), `$http/status` for any status
//! other than 200/202, `$http/error` when the server cannot be reached. Request headers
//! (`--header`, which may carry credentials) are never written to the tape. A failed
//! request is an [`crate::upstream::Incoming::Refused`]: a JSON-RPC client is given a
//! JSON-RPC error for it ([`crate::upstream::refusals`]), the HTTP front the status.
//!
//! Requests run concurrently; notifications and answers are sent in the client's order.
//! Every POST also carries the stateless protocol's (2026-07-28) `Mcp-Method` and
//! `Mcp-Name`; the optional GET stream is opened once a session exists
//! ([`HttpLink::listening`]), its messages marked as having come on it
//! ([`crate::tape::stream`]), and what the server said to it kept ([`Offer`]). A message
//! that arrives pretty-printed is put on one line ([`one_line`]).
//!
//! Parts: [`Remote`] (here) says where the server is and what every request carries, and
//! POSTs one message ([`Remote::post`]); [`answer::Answer`] is what a POST or the GET
//! stream gives back, read as a stream of messages and facts, resumed inside it when it
//! closes before a request's answer; [`link::HttpLink`] is the [`Link`](crate::upstream::Link)
//! over one `Remote`. Every error is an [`HttpError`].

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;

use crate::error::{Error, HttpError};
use crate::message::Message;
use crate::tape::lifecycle::Lifecycle;
pub use crate::upstream::Event;
pub use crate::upstream::sse::{Resumption, Sse};

pub mod answer;
pub mod link;

pub use answer::{Answer, Posted};
pub use link::HttpLink;

/// JSON-RPC error code for a request the upstream could not answer over HTTP.
pub const UPSTREAM_ERROR_CODE: i64 = -32000;
/// The largest answer (a JSON body, or one SSE event) taken from a server.
pub const MAX_ANSWER_BYTES: usize = crate::framing::MAX_LINE_BYTES;
/// How many times a link (re)opens the optional GET stream (the stdio and HTTP fronts,
/// `verify --url`).
pub const GET_STREAM_OPENINGS: usize = 8;
/// How many times a POST's event stream that closed before its answer is resumed
/// (`GET` with `Last-Event-ID`) before the request is given up.
pub const RESUMPTIONS: usize = 8;
/// The longest wait a server's `retry:` field can ask for before a resumption.
pub const MAX_RETRY_WAIT: Duration = Duration::from_secs(5);
/// How long in-flight requests may take to finish once the client has hung up.
pub const DRAIN_GRACE: Duration = Duration::from_secs(5);
/// How much of a failed answer's body is kept (for the tape and the client).
pub const FAILED_BODY_BYTES: usize = 1024;

/// A remote server: where it is, what every request carries, what the session is.
/// Cloning it is cheap and shares the session.
#[derive(Clone)]
pub struct Remote {
    inner: Arc<Inner>,
}

struct Inner {
    client: reqwest::Client,
    url: String,
    headers: Vec<(String, String)>,
    session: Mutex<Option<String>>,
    protocol: Mutex<Option<String>>,
    /// Where the GET stream left off (its last event id), to resume it from.
    listened: Mutex<Option<Resumption>>,
    /// What the server said when the GET stream was last opened.
    offer: tokio::sync::watch::Sender<Offer>,
}

/// What a server said to the GET stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offer {
    /// Not asked yet.
    Unknown,
    /// It opened one.
    Offered,
    /// It answered this status instead (`405`: it offers none; `502`: it could not be
    /// reached).
    Refused(u16),
}

impl Remote {
    /// A remote server at `url`; every request carries `headers`. The HTTP client is
    /// rustls with ring and the platform's roots.
    pub fn new(url: &str, headers: Vec<(String, String)>) -> Result<Remote, HttpError> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| HttpError::Setup(crate::error::chain(&e)))?;
        Ok(Remote {
            inner: Arc::new(Inner {
                client,
                url: url.to_owned(),
                headers,
                session: Mutex::new(None),
                listened: Mutex::new(None),
                protocol: Mutex::new(None),
                offer: tokio::sync::watch::Sender::new(Offer::Unknown),
            }),
        })
    }

    /// The server's URL.
    pub fn url(&self) -> &str {
        &self.inner.url
    }

    /// Notes the negotiated protocol version from the answer to `initialize`.
    fn learn(&self, answer: &Message) {
        if let Some(v) = crate::message::raw_member(answer.text(), &["result", "protocolVersion"])
            && crate::message::raw_member(answer.text(), &["result", "serverInfo"]).is_some()
            && let Ok(version) = serde_json::from_str::<String>(v)
            && let Ok(mut p) = self.inner.protocol.lock()
        {
            *p = Some(version);
        }
    }

    /// POSTs one client message. `Accepted` is a `202`; otherwise the answer (a JSON
    /// body or an event stream) is read with [`Answer::next`]. `Err` is a server that
    /// cannot be reached or a status other than 2xx ([`fact`] gives what the tape keeps
    /// of it).
    pub async fn post(&self, msg: &Message) -> Result<Posted, HttpError> {
        let mut req = self
            .inner
            .client
            .post(self.url())
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .body(msg.bytes());
        req = self.common_headers(req, crate::era::body_version(msg).as_deref());
        // The stateless protocol (2026-07-28) routes on headers that repeat the body;
        // earlier servers ignore them.
        if let Some(method) = msg.method() {
            req = req.header("Mcp-Method", method);
            if let Some(name) = routed_name(msg, method) {
                req = req.header("Mcp-Name", name);
            }
        }
        let resp = req.send().await.map_err(|e| self.unreachable(&e))?;
        let status = resp.status();
        // A refusal's session id is not the client's session (FastMCP answers an old-era
        // probe 400 with a fresh one): only a success names it.
        let session = status
            .is_success()
            .then(|| self.note_session(&resp))
            .flatten();
        if status.as_u16() == 202 {
            return Ok(Posted::Accepted { session });
        }
        if !status.is_success() {
            let body = resp.bytes().await.unwrap_or_default();
            return Err(HttpError::Status {
                url: self.url().to_owned(),
                status: status.as_u16(),
                body: body.slice(..body.len().min(FAILED_BODY_BYTES)),
            });
        }
        let answer = Answer::new(self.clone(), msg, resp, session);
        Ok(Posted::Answer(Box::new(answer)))
    }

    /// The server could not be reached: the HTTP client's words, with their causes.
    /// Both are redacted ([`crate::redact::Redactor::shown`]): a URL may carry a
    /// credential (`user:password@`, `?access_token=`), and the error is printed, reported
    /// and put on tapes.
    fn unreachable(&self, e: &reqwest::Error) -> HttpError {
        let redactor = crate::redact::Redactor::for_messages();
        HttpError::Unreachable {
            url: redactor.shown(self.url()),
            why: redactor.shown(&crate::error::chain(e)),
        }
    }

    /// Keeps the session id an answer gives; the fact for the tape when it is new.
    fn note_session(&self, resp: &reqwest::Response) -> Option<Event> {
        let id = resp.headers().get("mcp-session-id")?.to_str().ok()?;
        let mut known = self.inner.session.lock().ok()?;
        if known.as_deref() == Some(id) {
            return None;
        }
        *known = Some(id.to_owned());
        Some(
            Lifecycle::HttpSession {
                session_id: id.to_owned(),
            }
            .event(),
        )
    }

    /// Opens the optional GET stream for messages the server sends outside any request,
    /// resuming from where the last one left off. `None` if the server offers none
    /// (405) or cannot be reached: it is optional.
    pub async fn listen(&self) -> Option<Answer> {
        let from = self.inner.listened.lock().ok().and_then(|l| l.clone());
        let mut facts = Vec::new();
        let opened = self.open_stream(from.as_ref(), &mut facts).await;
        self.inner.offer.send_replace(match &opened {
            Ok(_) => Offer::Offered,
            Err(status) => Offer::Refused(status.unwrap_or(502)),
        });
        Some(Answer::listening(self.clone(), opened.ok()?, facts, from))
    }

    /// What the server said when the GET stream was last opened ([`Remote::listen`]),
    /// as it changes: the HTTP front answers a client's GET the same.
    pub fn offer(&self) -> tokio::sync::watch::Receiver<Offer> {
        self.inner.offer.subscribe()
    }

    /// Where the GET stream left off, for its next opening.
    fn listened_to(&self, left_off: Resumption) {
        if let Ok(mut listened) = self.inner.listened.lock() {
            *listened = Some(left_off);
        }
    }

    /// GETs an event stream: the server's own, or (with `from`) a stream resumed after its
    /// last event id, once the server's `retry:` has passed. `Err` if refused, with the
    /// status when there was one.
    async fn open_stream(
        &self,
        from: Option<&Resumption>,
        facts: &mut Vec<Event>,
    ) -> Result<reqwest::Response, Option<u16>> {
        let mut req = self
            .inner
            .client
            .get(self.url())
            .header("Accept", "text/event-stream");
        if let Some(from) = from {
            tokio::time::sleep(from.retry.unwrap_or_default().min(MAX_RETRY_WAIT)).await;
            let resume = Lifecycle::HttpResume {
                last_event_id: from.id.clone(),
            };
            facts.push(resume.event());
            req = req.header("Last-Event-ID", &from.id);
        }
        let resp = self
            .common_headers(req, None)
            .send()
            .await
            .map_err(|_| None)?;
        match resp.status() {
            ok if ok.is_success() => Ok(resp),
            refused => Err(Some(refused.as_u16())),
        }
    }

    /// What every request carries: the user's headers, the session id, and the protocol
    /// version — the one the message itself names (a stateless request), else the
    /// negotiated one once known.
    fn common_headers(
        &self,
        mut req: reqwest::RequestBuilder,
        version: Option<&str>,
    ) -> reqwest::RequestBuilder {
        for (k, v) in &self.inner.headers {
            req = req.header(k, v);
        }
        if let Some(id) = self.inner.session.lock().ok().and_then(|s| s.clone()) {
            req = req.header("Mcp-Session-Id", id);
        }
        let negotiated = || self.inner.protocol.lock().ok().and_then(|p| p.clone());
        if let Some(v) = version.map(str::to_owned).or_else(negotiated) {
            req = req.header("MCP-Protocol-Version", v);
        }
        req
    }

    /// True once the server has given a session id.
    pub fn has_session(&self) -> bool {
        self.inner.session.lock().is_ok_and(|s| s.is_some())
    }

    /// Ends the session (`DELETE`), if the server gave one.
    pub async fn end(&self) {
        if self.has_session() {
            let req = self.common_headers(self.inner.client.delete(self.url()), None);
            let _ = tokio::time::timeout(DRAIN_GRACE, req.send()).await;
        }
    }
}

/// The `Mcp-Name` of a message: the tool or prompt named, or the resource's URI, when it
/// can travel in a header.
fn routed_name(msg: &Message, method: &str) -> Option<String> {
    let path: &[&str] = match method {
        "tools/call" | "prompts/get" => &["params", "name"],
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => &["params", "uri"],
        _ => return None,
    };
    let raw = crate::message::raw_member(msg.text(), path)?;
    let name: String = serde_json::from_str(raw).ok()?;
    name.bytes()
        .all(|b| b.is_ascii_graphic() || b == b' ')
        .then_some(name)
}

/// What the tape keeps of a failure: `$http/status` for a status, `$http/error` for the
/// rest. An unanswered request is no HTTP fact (the client hears of it).
pub fn fact(error: &HttpError) -> Option<Event> {
    let fact = match error {
        HttpError::Status { status, body, .. } => Lifecycle::HttpStatus {
            status: *status,
            body: String::from_utf8_lossy(body).into_owned(),
        },
        HttpError::Unreachable { url, .. } | HttpError::TooLarge { url, .. } => {
            Lifecycle::HttpError {
                url: url.clone(),
                error: error.to_string(),
            }
        }
        HttpError::Cut { .. } | HttpError::Unanswered { .. } | HttpError::Setup(_) => {
            return None;
        }
    };
    Some(fact.event())
}

/// A message as one line: a server that pretty-prints its JSON (or sends an SSE event
/// of several `data:` lines) has newlines between tokens, which a line-framed client
/// cannot take. They become spaces — JSON strings cannot hold a raw newline, so nothing
/// else changes.
pub fn one_line(message: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if memchr::memchr2(b'\n', b'\r', message).is_none() {
        return std::borrow::Cow::Borrowed(message);
    }
    std::borrow::Cow::Owned(
        message
            .iter()
            .map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b })
            .collect(),
    )
}

/// A JSON-RPC error answering `request` (when it has an id) with `why`.
pub fn error_for(request: &Message, why: &str) -> Option<Vec<u8>> {
    let id = request.id()?;
    let error = json!({"code": UPSTREAM_ERROR_CODE, "message": why});
    Some(format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{error}}}").into_bytes())
}

/// An HTTP client that cannot be set up is a configuration problem.
pub fn http_usage(e: HttpError) -> Error {
    Error::Usage(e.to_string())
}

/// Its tests, and [`tests::as_the_tap_writes`] for the child's.
#[cfg(test)]
pub(crate) mod tests;
