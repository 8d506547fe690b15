//! A remote Streamable HTTP server as the upstream of a stdio proxy
//! (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http>).
//!
//! Each line the client writes is POSTed to the URL as it is (`Accept: application/json,
//! text/event-stream`); the answer — one JSON message, an SSE stream of messages (server
//! requests and notifications before the response included; comments and data-less
//! priming events are not messages), or `202 Accepted` — goes back to the client one
//! line per message, byte for byte. The session id the server gives (`Mcp-Session-Id`)
//! and the negotiated `MCP-Protocol-Version` go on every later request, and the session
//! is ended with `DELETE` when the client hangs up. Requests run concurrently.
//!
//! HTTP-level facts that matter go into the tape as lifecycle entries: `$http/session`
//! (the session id, redacted by name like any credential), `$http/status` for any status
//! other than 200/202, `$http/error` when the server cannot be reached. Request headers
//! (`--header`, which may carry credentials) are never written to the tape. A failed
//! request is answered to the client as a JSON-RPC error, since a stdio client cannot see
//! HTTP statuses.
//!
//! Requests run concurrently; notifications and answers are sent in the client's order.
//! Every POST also carries the stateless protocol's (2026-07-28) `Mcp-Method` and
//! `Mcp-Name`; the optional GET stream is opened once a session exists. A message that
//! arrives pretty-printed is put on one line ([`one_line`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;
use tokio_util::codec::FramedRead;

use crate::downstream::stdio;
use crate::error::{Error, Result};
use crate::framing::{self, Frame, LineCodec};
use crate::message::{Kind, Message};
use crate::process::Signals;
use crate::tape::Direction;
use crate::tape::lifecycle::LifecycleKind;
use crate::upstream::child::READ_BUFFER_BYTES;
pub use crate::upstream::sse::{Resumption, Sse};

/// JSON-RPC error code for a request the upstream could not answer over HTTP.
pub const UPSTREAM_ERROR_CODE: i64 = -32000;
/// The largest answer (a JSON body, or one SSE event) taken from a server.
pub const MAX_ANSWER_BYTES: usize = crate::framing::MAX_LINE_BYTES;
/// How many times the stdio front (re)opens the optional GET stream.
pub const GET_STREAM_OPENINGS: usize = 8;
/// How many times a POST's event stream that closed before its answer is resumed
/// (`GET` with `Last-Event-ID`) before the request is given up.
pub const RESUMPTIONS: usize = 8;
/// The longest wait a server's `retry:` field can ask for before a resumption.
pub const MAX_RETRY_WAIT: Duration = Duration::from_secs(5);
/// How long in-flight requests may take to finish once the client has hung up.
pub const DRAIN_GRACE: Duration = Duration::from_secs(5);

/// A remote server: where it is, what every request carries, what the session is.
pub struct Remote {
    client: reqwest::Client,
    url: String,
    headers: Vec<(String, String)>,
    session: Mutex<Option<String>>,
    protocol: Mutex<Option<String>>,
    /// Where the GET stream left off (its last event id), to resume it from.
    listened: Mutex<Option<Resumption>>,
}

/// Parses `--header 'Name: value'`.
pub fn parse_header(text: &str) -> Result<(String, String)> {
    let (name, value) = text
        .split_once(':')
        .filter(|(n, _)| !n.trim().is_empty())
        .ok_or_else(|| Error::Usage(format!("invalid --header `{text}`: write 'Name: value'")))?;
    Ok((name.trim().to_owned(), value.trim().to_owned()))
}

/// How the server took a POST.
pub enum Answer {
    /// `202 Accepted`: nothing to read.
    Accepted,
    /// A status other than 2xx, with the start of its body.
    Failed {
        /// The status code.
        status: u16,
        /// Its first 1024 bytes.
        body: Bytes,
    },
    /// A 2xx with messages to read ([`Remote::read`]).
    Messages(reqwest::Response),
}

/// An HTTP-level fact for the tape: a lifecycle event and its params.
pub type Event = (LifecycleKind, serde_json::Value);

impl Remote {
    /// A remote server at `url`; every request carries `headers`. The HTTP client is
    /// rustls with ring and the platform's roots.
    pub fn new(url: &str, headers: Vec<(String, String)>) -> Result<Remote> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| Error::Usage(format!("cannot set up the HTTP client: {e}")))?;
        Ok(Remote {
            client,
            url: url.to_owned(),
            headers,
            session: Mutex::new(None),
            listened: Mutex::new(None),
            protocol: Mutex::new(None),
        })
    }

    /// The server's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Notes what a server message tells about the session (the negotiated version).
    fn learn(&self, text: &[u8]) {
        let msg = Message::new(Bytes::copy_from_slice(text));
        if let Some(v) = crate::message::raw_member(msg.text(), &["result", "protocolVersion"])
            && crate::message::raw_member(msg.text(), &["result", "serverInfo"]).is_some()
            && let Ok(version) = serde_json::from_str::<String>(v)
            && let Ok(mut p) = self.protocol.lock()
        {
            *p = Some(version);
        }
    }

    /// POSTs one client message; hands each message of the answer to `message` as it
    /// arrives, and HTTP-level facts to `event`. `Err` says why the request failed, or
    /// that its answer never came (for a JSON-RPC error to the client).
    pub async fn post(
        &self,
        body: Bytes,
        message: &mut (dyn FnMut(&[u8]) + Send),
        event: &mut (dyn FnMut(Event) + Send),
    ) -> std::result::Result<(), String> {
        let request = Message::new(body.clone());
        match self.send(body, event).await? {
            Answer::Accepted if request.kind() == Kind::Request => Err(self.unanswered()),
            Answer::Accepted => Ok(()),
            Answer::Failed { status, body } => {
                let text = String::from_utf8_lossy(&body).into_owned();
                Err(format!("HTTP {status} from `{}`: {text}", self.url))
            }
            Answer::Messages(resp) => self.read_answer(&request, resp, message, event).await,
        }
    }

    /// Reads the messages of a successful answer to `request` (JSON or SSE). A request's
    /// event stream that closes before its answer is resumed from its last event id, as
    /// the spec's resumability asks of a client; `Err` if the answer never came.
    pub async fn read_answer(
        &self,
        request: &Message,
        resp: reqwest::Response,
        message: &mut (dyn FnMut(&[u8]) + Send),
        event: &mut (dyn FnMut(Event) + Send),
    ) -> std::result::Result<(), String> {
        if request.kind() != Kind::Request {
            return self.read_stream(resp, message, event).await.map(drop);
        }
        // Shared by the callback (which must be Send) and the loop that reads it.
        let answered = AtomicBool::new(false);
        let mut tracked = |m: &[u8]| {
            if answers(request, m) {
                answered.store(true, Ordering::Relaxed);
            }
            message(m);
        };
        let mut resume = self.read_stream(resp, &mut tracked, event).await?;
        for _ in 0..RESUMPTIONS {
            let Some(from) = resume.take() else { break };
            if answered.load(Ordering::Relaxed) {
                break;
            }
            let Some(resp) = self.open_stream(Some(&from), event).await else {
                break;
            };
            // A resumed stream that gives no new id resumes from the same place.
            resume = Some(
                self.read_stream(resp, &mut tracked, event)
                    .await?
                    .unwrap_or(from),
            );
        }
        if answered.load(Ordering::Relaxed) {
            Ok(())
        } else {
            // The client must not wait forever for an answer that will not come.
            Err(self.unanswered())
        }
    }

    fn unanswered(&self) -> String {
        format!(
            "the server at `{}` closed the stream without answering",
            self.url
        )
    }

    /// POSTs one client message and reads the answer's status and headers: what
    /// [`Remote::post`] does up to the body, for a front that passes statuses on.
    pub async fn send(
        &self,
        body: Bytes,
        event: &mut (dyn FnMut(Event) + Send),
    ) -> std::result::Result<Answer, String> {
        let message = Message::new(body.clone());
        let mut req = self
            .client
            .post(&self.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .body(body);
        req = self.common_headers(req);
        // The stateless protocol (2026-07-28) routes on headers that repeat the body;
        // earlier servers ignore them.
        if let Some(method) = message.method() {
            req = req.header("Mcp-Method", method);
            let v = message.value();
            let name = match method {
                "tools/call" | "prompts/get" => v["params"]["name"].as_str().map(str::to_owned),
                "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
                    v["params"]["uri"].as_str().map(str::to_owned)
                }
                _ => None,
            };
            if let Some(name) =
                name.filter(|n| n.bytes().all(|b| b.is_ascii_graphic() || b == b' '))
            {
                req = req.header("Mcp-Name", name);
            }
        }
        let resp = match req.send().await {
            Ok(r) => r,
            Err(e) => {
                let why = format!(
                    "mcptape: cannot reach `{}`: {}",
                    self.url,
                    crate::error::chain(&e)
                );
                event((
                    LifecycleKind::HttpError,
                    json!({"url": self.url, "error": why}),
                ));
                return Err(why);
            }
        };
        let status = resp.status();
        if let Some(id) = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            && let Ok(mut known) = self.session.lock()
            && known.as_deref() != Some(id)
        {
            *known = Some(id.to_owned());
            event((LifecycleKind::HttpSession, json!({"sessionId": id})));
        }
        if status.as_u16() == 202 {
            return Ok(Answer::Accepted);
        }
        if !status.is_success() {
            let body = resp.bytes().await.unwrap_or_default();
            let body = body.slice(..body.len().min(1024));
            event((
                LifecycleKind::HttpStatus,
                json!({"status": status.as_u16(), "body": String::from_utf8_lossy(&body)}),
            ));
            return Ok(Answer::Failed {
                status: status.as_u16(),
                body,
            });
        }
        Ok(Answer::Messages(resp))
    }

    /// Reads the messages of an answer (JSON or SSE), saying where an event stream that
    /// ended could be resumed from (its last event id), if the server gave ids.
    async fn read_stream(
        &self,
        resp: reqwest::Response,
        message: &mut (dyn FnMut(&[u8]) + Send),
        event: &mut (dyn FnMut(Event) + Send),
    ) -> std::result::Result<Option<Resumption>, String> {
        let kind = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        if resp
            .content_length()
            .is_some_and(|n| n > MAX_ANSWER_BYTES as u64)
        {
            let why = format!(
                "the answer from `{}` is larger than {MAX_ANSWER_BYTES} bytes",
                self.url
            );
            event((
                LifecycleKind::HttpError,
                json!({"url": self.url, "error": why}),
            ));
            return Err(why);
        }
        if kind.starts_with("text/event-stream") {
            event((LifecycleKind::HttpStream, json!({"state": "open"})));
            let mut events = Sse::default();
            let mut stream = resp.bytes_stream();
            while let Some(chunk) = stream.next().await {
                if events.pending_len() > MAX_ANSWER_BYTES {
                    let why = format!(
                        "an event from `{}` is larger than {MAX_ANSWER_BYTES} bytes",
                        self.url
                    );
                    event((
                        LifecycleKind::HttpError,
                        json!({"url": self.url, "error": why}),
                    ));
                    return Err(why);
                }
                let Ok(chunk) = chunk else {
                    event((
                        LifecycleKind::HttpError,
                        json!({"url": self.url, "error": "the event stream was cut"}),
                    ));
                    return match events.resumption() {
                        Some(from) => Ok(Some(from)),
                        None => Err(format!("the event stream from `{}` was cut", self.url)),
                    };
                };
                for data in events.push(&chunk) {
                    self.learn(&data);
                    message(&data);
                }
            }
            event((LifecycleKind::HttpStream, json!({"state": "closed"})));
            return Ok(events.resumption());
        }
        let mut body = BytesMut::new();
        let mut stream = resp.bytes_stream();
        while let Some(chunk) = stream.next().await {
            match chunk {
                Ok(c) if body.len() + c.len() > MAX_ANSWER_BYTES => {
                    let why = format!(
                        "the answer from `{}` is larger than {MAX_ANSWER_BYTES} bytes",
                        self.url
                    );
                    event((
                        LifecycleKind::HttpError,
                        json!({"url": self.url, "error": why}),
                    ));
                    return Err(why);
                }
                Ok(c) => body.extend_from_slice(&c),
                Err(e) => return Err(format!("reading the answer from `{}`: {e}", self.url)),
            }
        }
        let body = body.trim_ascii();
        if !body.is_empty() {
            self.learn(body);
            message(body);
        }
        Ok(None)
    }

    /// Opens the optional GET stream for messages the server sends outside any request,
    /// and hands them to `message` until it ends. A server without one (405) is fine.
    /// True if the stream was opened (so it may be worth reopening once it ends). A
    /// reopening resumes from the last event id the stream gave, after its `retry:`.
    pub async fn listen(
        &self,
        message: &mut (dyn FnMut(&[u8]) + Send),
        event: &mut (dyn FnMut(Event) + Send),
    ) -> bool {
        let from = self.listened.lock().ok().and_then(|l| l.clone());
        let Some(resp) = self.open_stream(from.as_ref(), event).await else {
            return false;
        };
        if let Ok(Some(left_off)) = self.read_stream(resp, message, event).await
            && let Ok(mut listened) = self.listened.lock()
        {
            *listened = Some(left_off);
        }
        true
    }

    /// GETs an event stream: the server's own, or (with `from`) a stream resumed after its
    /// last event id, once the server's `retry:` has passed. `None` if refused.
    async fn open_stream(
        &self,
        from: Option<&Resumption>,
        event: &mut (dyn FnMut(Event) + Send),
    ) -> Option<reqwest::Response> {
        let mut req = self
            .client
            .get(&self.url)
            .header("Accept", "text/event-stream");
        if let Some(from) = from {
            tokio::time::sleep(from.retry.unwrap_or_default().min(MAX_RETRY_WAIT)).await;
            event((LifecycleKind::HttpResume, json!({"lastEventId": from.id})));
            req = req.header("Last-Event-ID", &from.id);
        }
        let resp = self.common_headers(req).send().await.ok()?;
        resp.status().is_success().then_some(resp)
    }

    /// What every request carries: the user's headers, the session id and the
    /// negotiated protocol version once known.
    fn common_headers(&self, mut req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        for (k, v) in &self.headers {
            req = req.header(k, v);
        }
        if let Some(id) = self.session.lock().ok().and_then(|s| s.clone()) {
            req = req.header("Mcp-Session-Id", id);
        }
        if let Some(v) = self.protocol.lock().ok().and_then(|p| p.clone()) {
            req = req.header("MCP-Protocol-Version", v);
        }
        req
    }

    /// True once the server has given a session id.
    pub fn has_session(&self) -> bool {
        self.session.lock().is_ok_and(|s| s.is_some())
    }

    /// Ends the session (`DELETE`), if the server gave one.
    pub async fn end(&self) {
        if self.has_session() {
            let req = self.common_headers(self.client.delete(&self.url));
            let _ = tokio::time::timeout(DRAIN_GRACE, req.send()).await;
        }
    }
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

/// True when `message` is the response to `request`.
fn answers(request: &Message, message: &[u8]) -> bool {
    let m = Message::new(Bytes::copy_from_slice(message));
    matches!(
        m.kind(),
        crate::message::Kind::Response | crate::message::Kind::Error
    ) && m.id().is_some()
        && m.id() == request.id()
}

/// A JSON-RPC error answering `request` (when it has an id) with `why`.
pub fn error_for(request: &Message, why: &str) -> Option<Vec<u8>> {
    let id = request.id()?;
    let error = json!({"code": UPSTREAM_ERROR_CODE, "message": why});
    Some(format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{error}}}").into_bytes())
}

mod relay;
pub use relay::relay;

#[cfg(test)]
mod tests;
