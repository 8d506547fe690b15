//! What a POST or the GET stream gives back, read as a stream: [`Answer::next`] yields
//! the server's messages (one line each) and the HTTP facts for the tape, in the order
//! they came.
//!
//! A request's event stream that closes (or is cut) before its answer is resumed inside
//! the stream — `GET` with `Last-Event-ID`, after the server's `retry:` — as the spec's
//! resumability asks of a client
//! (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#resumability-and-redelivery>);
//! a request whose answer never comes ends with [`HttpError::Unanswered`], so the client
//! does not wait forever. Each message is classified once, here, and passed on as a
//! [`Message`]; one that came on the GET stream is marked so ([`Message::on`]), for the
//! tap to record and the HTTP front to route.

use std::collections::VecDeque;

use bytes::{Bytes, BytesMut};

use crate::error::HttpError;
use crate::message::{Kind, Message};
use crate::tape::lifecycle::{Lifecycle, StreamState};
use crate::tape::stream::Stream;
use crate::upstream::Incoming;
use crate::upstream::http::{Event, MAX_ANSWER_BYTES, RESUMPTIONS, Remote, Resumption, Sse};

/// How the server took a POST.
pub enum Posted {
    /// `202 Accepted`: nothing to read. `session` is the new session's fact, if the
    /// answer gave one.
    Accepted {
        /// `$http/session`, when this answer named a new session.
        session: Option<Event>,
    },
    /// A 2xx with messages to read.
    Answer(Box<Answer>),
}

/// One answer under way: a JSON body or an event stream, read message by message.
pub struct Answer {
    remote: Remote,
    /// The request's id when this answers a request (and so must bring its response).
    waiting: Option<String>,
    /// The id of the request this answers, for the whole stream (the HTTP front gives
    /// what came on it to that request's client stream).
    request: Option<std::sync::Arc<str>>,
    /// The answer to `initialize` carries the protocol version to send from then on.
    initialize: bool,
    body: Body,
    ready: VecDeque<Result<Incoming, HttpError>>,
    /// Where the stream can be resumed from.
    from: Option<Resumption>,
    resumptions: usize,
    /// The GET stream: it is not resumed inside, but where it left off is kept.
    listening: bool,
}

/// The part of the answer being read.
enum Body {
    /// A JSON body, gathered whole.
    Json(reqwest::Response, BytesMut),
    /// An event stream.
    Events(reqwest::Response, Sse),
    /// The stream closed: resume it, or end.
    Closed,
    /// Nothing more.
    Done,
}

impl Answer {
    /// The answer to `request`, its status and headers read.
    pub(super) fn new(
        remote: Remote,
        request: &Message,
        resp: reqwest::Response,
        session: Option<Event>,
    ) -> Answer {
        let mut answer = Answer {
            remote,
            waiting: (request.kind() == Kind::Request)
                .then(|| request.id().map(str::to_owned))
                .flatten(),
            request: (request.kind() == Kind::Request)
                .then(|| request.id().map(std::sync::Arc::from))
                .flatten(),
            initialize: request.method() == Some("initialize"),
            body: Body::Done,
            ready: session
                .into_iter()
                .map(|e| Ok(Incoming::Event(e)))
                .collect(),
            from: None,
            resumptions: 0,
            listening: false,
        };
        answer.open(resp);
        answer
    }

    /// The GET stream, opened (after `facts`) from `from`.
    pub(super) fn listening(
        remote: Remote,
        resp: reqwest::Response,
        facts: Vec<Event>,
        from: Option<Resumption>,
    ) -> Answer {
        let mut answer = Answer {
            remote,
            waiting: None,
            request: None,
            initialize: false,
            body: Body::Done,
            ready: facts.into_iter().map(|e| Ok(Incoming::Event(e))).collect(),
            from,
            resumptions: 0,
            listening: true,
        };
        answer.open(resp);
        answer
    }

    /// Starts reading `resp` as what its content type says.
    fn open(&mut self, resp: reqwest::Response) {
        if resp
            .content_length()
            .is_some_and(|n| n > MAX_ANSWER_BYTES as u64)
        {
            self.fail(self.too_large());
            return;
        }
        let sse = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.to_ascii_lowercase().starts_with("text/event-stream"));
        self.body = if sse {
            self.fact(Lifecycle::HttpStream(StreamState::Open).event());
            Body::Events(resp, Sse::default())
        } else {
            Body::Json(resp, BytesMut::new())
        };
    }

    /// The next message or fact; an `Err` ends the answer (a request unanswered, a body
    /// too large or cut); `None` once it is over.
    ///
    /// Drive it from one task: a resumption in progress is lost if the future is dropped.
    pub async fn next(&mut self) -> Option<Result<Incoming, HttpError>> {
        loop {
            if let Some(ready) = self.ready.pop_front() {
                return Some(ready);
            }
            match &mut self.body {
                Body::Done => return None,
                Body::Json(resp, body) => match resp.chunk().await {
                    Ok(Some(chunk)) if body.len() + chunk.len() > MAX_ANSWER_BYTES => {
                        self.fail(self.too_large());
                    }
                    Ok(Some(chunk)) => body.extend_from_slice(&chunk),
                    Ok(None) => {
                        let whole = std::mem::take(body).freeze();
                        self.body = Body::Closed;
                        let text = trimmed(whole);
                        if !text.is_empty() {
                            self.message(text);
                        }
                    }
                    Err(e) => {
                        let why = crate::error::chain(&e);
                        self.fail(self.cut(why));
                    }
                },
                Body::Events(resp, sse) => match resp.chunk().await {
                    Ok(Some(chunk)) => self.events(&chunk),
                    Ok(None) => {
                        self.left_off();
                        self.fact(Lifecycle::HttpStream(StreamState::Closed).event());
                        self.body = Body::Closed;
                    }
                    Err(_) => {
                        let resumable = sse.resumption().is_some() || self.from.is_some();
                        self.left_off();
                        let cut = Lifecycle::HttpError {
                            url: self.remote.url().to_owned(),
                            error: "the event stream was cut".into(),
                        };
                        self.fact(cut.event());
                        if resumable {
                            self.body = Body::Closed;
                        } else {
                            self.fail(self.cut("the event stream was cut".into()));
                        }
                    }
                },
                Body::Closed => self.resume().await,
            }
        }
    }

    /// The events a chunk completes, as messages.
    fn events(&mut self, chunk: &[u8]) {
        let Body::Events(_, sse) = &mut self.body else {
            return;
        };
        let datas = sse.push(chunk);
        let over = sse.pending_len() > MAX_ANSWER_BYTES;
        for data in datas {
            self.message(data);
        }
        if over {
            self.fail(self.too_large());
        }
    }

    /// Keeps where the event stream left off (a resumed stream that gives no new id
    /// resumes from the same place).
    fn left_off(&mut self) {
        if let Body::Events(_, sse) = &self.body
            && let Some(from) = sse.resumption()
        {
            self.from = Some(from);
        }
        if self.listening
            && let Some(from) = &self.from
        {
            self.remote.listened_to(from.clone());
        }
    }

    /// One server message, put on one line and classified once.
    fn message(&mut self, data: impl Into<Bytes>) {
        let data: Bytes = data.into();
        let line = match super::one_line(&data) {
            std::borrow::Cow::Borrowed(_) => data,
            std::borrow::Cow::Owned(line) => Bytes::from(line),
        };
        let msg = Message::new(line)
            .on(self.listening.then_some(Stream::Get))
            .answering(self.request.clone());
        if let Some(id) = &self.waiting
            && matches!(msg.kind(), Kind::Response | Kind::Error)
            && msg.id() == Some(id.as_str())
        {
            self.waiting = None;
            if self.initialize {
                self.remote.learn(&msg);
            }
        }
        self.ready.push_back(Ok(Incoming::Message(msg)));
    }

    /// The stream closed: a request still waiting for its answer resumes it; otherwise
    /// the answer is over.
    async fn resume(&mut self) {
        self.body = Body::Done;
        if self.waiting.is_none() {
            return;
        }
        if self.resumptions < RESUMPTIONS
            && let Some(from) = self.from.clone()
        {
            self.resumptions += 1;
            let mut facts = Vec::new();
            let resp = self.remote.open_stream(Some(&from), &mut facts).await.ok();
            for fact in facts {
                self.fact(fact);
            }
            if let Some(resp) = resp {
                self.open(resp);
                return;
            }
        }
        // The client must not wait forever for an answer that will not come.
        let url = self.remote.url().to_owned();
        self.fail(HttpError::Unanswered { url });
    }

    fn fact(&mut self, event: Event) {
        self.ready.push_back(Ok(Incoming::Event(event)));
    }

    /// Ends the answer with `error`, after what was already read (and its fact, if the
    /// tape keeps one).
    fn fail(&mut self, error: HttpError) {
        if let Some(fact) = super::fact(&error) {
            self.fact(fact);
        }
        self.ready.push_back(Err(error));
        self.body = Body::Done;
    }

    fn too_large(&self) -> HttpError {
        HttpError::TooLarge {
            url: self.remote.url().to_owned(),
            max: MAX_ANSWER_BYTES,
        }
    }

    fn cut(&self, why: String) -> HttpError {
        HttpError::Cut {
            url: self.remote.url().to_owned(),
            why,
        }
    }
}

/// The body without the whitespace around it, shared.
fn trimmed(body: Bytes) -> Bytes {
    let start = body.len() - body.trim_ascii_start().len();
    let end = body.trim_ascii_end().len();
    if start >= end {
        return Bytes::new();
    }
    body.slice(start..end)
}
