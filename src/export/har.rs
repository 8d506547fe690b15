//! `--format har`: HAR 1.2 (<http://www.softwareishard.com/blog/har-12-spec/>), a page
//! per connection.
//!
//! - **Streamable HTTP** (a `$transport/start` with `url`, the HTTP front, `$http/*`
//!   entries): every client message is the `POST` that carried it, to the server's URL
//!   (`http://localhost/mcp` when the tape does not say: the front's own address is not
//!   recorded), with the headers the protocol implies — `Content-Type`, `Accept`,
//!   `Mcp-Session-Id` once the server gave one (as the tape keeps it: redacted),
//!   `MCP-Protocol-Version` once negotiated. No other header is on a tape, so none is
//!   written. A request's response is `200` with its answer: `application/json`, or
//!   `text/event-stream` (one `event: message` per message) when server messages came
//!   between the request and its answer (on its stream, as the tape orders them); an
//!   unanswered request takes the `$http/status` recorded after it, or status `0` and
//!   `_error`. A client notification or answer is `202` with an empty body. A server
//!   message on no request's stream is a `GET` of the event stream with that one event.
//! - **stdio**: one pseudo-request per JSON-RPC exchange, `POST
//!   stdio://<server>/<method>` (percent-encoded), the request as `postData` and the
//!   answer as the content (`200`); a notification either way is `202` with an empty
//!   response; an unanswered request is status `0` with `_error`. `comment` says who
//!   sent it. Made up: the method, URL, `httpVersion` `stdio` and the status codes.
//!
//! `time` is the answer's delay (ms) as recorded, all of it `timings.wait` (send and
//! receive `0`: a tape has one time per message). An entry with no time on the tape
//! starts at the Unix epoch and says so in its `comment`. Notes go in `log.comment`.

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::facts::Facts;
use super::raw;
use crate::exchange::{Exchange, Exchanges, Status, time};
use crate::message::Kind;
use crate::tape::lifecycle::Lifecycle;
use crate::tape::stream::Stream;
use crate::tape::{Direction, Tape};

/// The URL of an HTTP connection whose tape does not give it.
pub const UNKNOWN_URL: &str = "http://localhost/mcp";

/// The HAR document of a whole tape.
pub fn document(tape: &Tape, x: &Exchanges) -> Document {
    let mut pages = Vec::new();
    let mut entries: Vec<(usize, Box<RawValue>)> = Vec::new();
    for (c, conn) in x.connections.iter().enumerate() {
        let facts = Facts::of(tape, x, c);
        let started = facts
            .first
            .map_or_else(epoch, crate::tape::format::timestamp);
        pages.push(json!({
            "startedDateTime": started,
            "id": conn.id,
            "title": format!("{} ({})", conn.server, conn.id),
            "pageTimings": {},
            "comment": if facts.http { "Streamable HTTP" } else { "stdio" },
        }));
        let page = Page { tape, x, c, facts };
        entries.extend(page.entries());
    }
    entries.sort_by_key(|(i, _)| *i);
    let notes: Vec<String> = tape
        .notes()
        .into_iter()
        .filter_map(|i| match Lifecycle::of(&tape.entries[i]) {
            Some(Lifecycle::Note(n)) => {
                Some(format!("note (line {}): {}", tape.entries[i].line, n.text))
            }
            _ => None,
        })
        .collect();
    Document {
        log: Log {
            version: "1.2",
            creator: json!({"name": "mcptape", "version": env!("CARGO_PKG_VERSION")}),
            pages,
            entries: entries.into_iter().map(|(_, e)| e).collect(),
            comment: (!notes.is_empty()).then(|| notes.join("\n")),
        },
    }
}

/// A HAR document. Its entries are kept as JSON text, each written as soon as it is
/// made: a large tape's export holds one entry's tree at a time, not all of them.
#[derive(Serialize)]
pub struct Document {
    log: Log,
}

#[derive(Serialize)]
struct Log {
    version: &'static str,
    creator: Value,
    pages: Vec<Value>,
    entries: Vec<Box<RawValue>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    comment: Option<String>,
}

fn epoch() -> String {
    "1970-01-01T00:00:00.000Z".to_owned()
}

/// One connection being written.
struct Page<'a> {
    tape: &'a Tape,
    x: &'a Exchanges,
    c: usize,
    facts: Facts,
}

/// What a HAR response carries.
struct Answer {
    status: u16,
    status_text: &'static str,
    mime: &'static str,
    text: String,
    error: Option<String>,
}

impl Answer {
    fn accepted() -> Answer {
        Answer {
            status: 202,
            status_text: "Accepted",
            mime: "",
            text: String::new(),
            error: None,
        }
    }
}

impl Page<'_> {
    fn conn_id(&self) -> &str {
        &self.x.connections[self.c].id
    }

    /// Every HAR entry of the connection, each with the index of its first tape entry.
    fn entries(&self) -> Vec<(usize, Box<RawValue>)> {
        let mine: Vec<&Exchange> = self
            .x
            .exchanges
            .iter()
            .filter(|e| e.conn == self.c)
            .collect();
        // Server messages that rode on a client request's event stream (HTTP): the
        // latest request still open when each came.
        let mut on_stream: std::collections::HashMap<usize, Vec<usize>> = Default::default();
        let mut claimed = std::collections::HashSet::new();
        if self.facts.http {
            // One sweep in tape order: the client requests open at each server message
            // (sent before it, answered after it), the latest of them its host.
            let mut starts: Vec<(usize, usize)> = mine
                .iter()
                .filter(|x| x.from == Direction::Send)
                .filter_map(|x| Some((x.request, x.answer?)))
                .collect();
            starts.sort_unstable();
            let mut ends: Vec<(usize, usize)> = starts.iter().map(|&(r, a)| (a, r)).collect();
            ends.sort_unstable();
            let (mut s, mut e) = (0, 0);
            let mut open = std::collections::BTreeSet::new();
            for m in self.server_messages(&mine) {
                while s < starts.len() && starts[s].0 < m {
                    open.insert(starts[s].0);
                    s += 1;
                }
                while e < ends.len() && ends[e].0 <= m {
                    open.remove(&ends[e].1);
                    e += 1;
                }
                if self.tape.entries[m].meta.stream == Some(Stream::Get) {
                    continue;
                }
                if let Some(&host) = open.last() {
                    on_stream.entry(host).or_default().push(m);
                    claimed.insert(m);
                }
            }
        }
        let mut out = Vec::new();
        for ex in &mine {
            match (self.facts.http, ex.from) {
                (true, Direction::Recv) => {
                    // The server's request went on a stream; the client's answer is a POST.
                    if !claimed.contains(&ex.request) {
                        out.push((ex.request, raw(&self.get(ex.request))));
                    }
                    if let Some(a) = ex.answer {
                        out.push((
                            a,
                            raw(&self.entry(a, None, Answer::accepted(), "client → server answer")),
                        ));
                    }
                }
                (true, _) => {
                    let answer = self.http_answer(
                        ex,
                        on_stream.get(&ex.request).map(Vec::as_slice).unwrap_or(&[]),
                    );
                    out.push((
                        ex.request,
                        raw(&self.entry(ex.request, Some(ex), answer, "client → server request")),
                    ));
                }
                (false, from) => {
                    let answer = self.stdio_answer(ex);
                    let who = if from == Direction::Recv {
                        "server → client request"
                    } else {
                        "client → server request"
                    };
                    out.push((
                        ex.request,
                        raw(&self.entry(ex.request, Some(ex), answer, who)),
                    ));
                }
            }
        }
        for &m in &self.x.marks[self.c] {
            let e = &self.tape.entries[m];
            if e.meta.dir == Direction::Lifecycle {
                continue;
            }
            let kind = e.message.kind();
            let who = match (e.meta.dir, kind) {
                (Direction::Send, Kind::Notification) => "client → server notification",
                (Direction::Send, _) => "client → server message",
                (_, Kind::Notification) => "server → client notification",
                _ => "server → client message",
            };
            if self.facts.http && e.meta.dir != Direction::Send {
                if !claimed.contains(&m) {
                    out.push((m, raw(&self.get(m))));
                }
            } else {
                out.push((m, raw(&self.entry(m, None, Answer::accepted(), who))));
            }
        }
        out
    }

    /// The server's own messages of the connection: its requests and notifications.
    fn server_messages(&self, mine: &[&Exchange]) -> Vec<usize> {
        let mut v: Vec<usize> = mine
            .iter()
            .filter(|e| e.from == Direction::Recv)
            .map(|e| e.request)
            .collect();
        v.extend(
            self.x.marks[self.c]
                .iter()
                .copied()
                .filter(|&m| self.tape.entries[m].meta.dir == Direction::Recv),
        );
        v.sort_unstable();
        v
    }

    fn http_answer(&self, ex: &Exchange, streamed: &[usize]) -> Answer {
        let Some(a) = ex.answer else {
            return self.unanswered(ex);
        };
        let answer = self.tape.entries[a].message.text();
        if streamed.is_empty() {
            return Answer {
                status: 200,
                status_text: "OK",
                mime: "application/json",
                text: answer.to_owned(),
                error: None,
            };
        }
        let mut text = String::new();
        for &m in streamed.iter().chain(std::iter::once(&a)) {
            text.push_str("event: message\ndata: ");
            text.push_str(self.tape.entries[m].message.text());
            text.push_str("\n\n");
        }
        Answer {
            status: 200,
            status_text: "OK",
            mime: "text/event-stream",
            text,
            error: None,
        }
    }

    /// No answer: the `$http/status` recorded after the request (before the client's
    /// next message), else status 0.
    fn unanswered(&self, ex: &Exchange) -> Answer {
        if let Some((status, body)) = super::facts::http_status(self.tape, self.x, ex) {
            return Answer {
                status,
                status_text: "",
                mime: "text/plain",
                text: body,
                error: None,
            };
        }
        let why = match ex.status {
            Status::Fault => "an injected fault withheld the answer",
            _ => "no answer on the tape",
        };
        Answer {
            status: 0,
            status_text: "",
            mime: "",
            text: String::new(),
            error: Some(why.to_owned()),
        }
    }

    fn stdio_answer(&self, ex: &Exchange) -> Answer {
        match ex.answer {
            Some(a) => Answer {
                status: 200,
                status_text: "OK",
                mime: "application/json",
                text: self.tape.entries[a].message.text().to_owned(),
                error: None,
            },
            None => self.unanswered(ex),
        }
    }

    fn url(&self, method: &str) -> String {
        if self.facts.http {
            return self
                .facts
                .url
                .clone()
                .unwrap_or_else(|| UNKNOWN_URL.to_owned());
        }
        let server = &self.x.connections[self.c].server;
        format!("stdio://{}/{}", encode(server, false), encode(method, true))
    }

    /// The protocol's request headers known at entry `i` (HTTP only).
    fn headers(&self, i: usize, accept: &str) -> Vec<Value> {
        if !self.facts.http {
            return Vec::new();
        }
        let mut h = vec![json!({"name": "Accept", "value": accept})];
        if accept != "text/event-stream" {
            h.insert(
                0,
                json!({"name": "Content-Type", "value": "application/json"}),
            );
        }
        if let Some(s) = self.facts.session_at(i) {
            h.push(json!({"name": "Mcp-Session-Id", "value": s}));
        }
        if let Some(p) = self.facts.protocol_at(i) {
            h.push(json!({"name": "MCP-Protocol-Version", "value": p}));
        }
        h
    }

    fn started(&self, i: usize) -> (String, Option<&'static str>) {
        match time(&self.tape.entries[i]) {
            Some(t) => (crate::tape::format::timestamp(t), None),
            None => (epoch(), Some("no time on the tape")),
        }
    }

    /// A HAR entry for the message at `i` (a POST), answered by `answer`.
    fn entry(&self, i: usize, ex: Option<&Exchange>, answer: Answer, who: &str) -> Value {
        let e = &self.tape.entries[i];
        let method = e
            .message
            .method()
            .map(str::to_owned)
            .or_else(|| ex.map(|x| x.method.clone()))
            .unwrap_or_default();
        let body = e.message.text();
        let ms = ex
            .and_then(Exchange::duration)
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0);
        let (started, no_time) = self.started(i);
        let http = if self.facts.http { "HTTP/1.1" } else { "stdio" };
        let mut comment = format!("{who}, tape line {}", e.line);
        if let Some(n) = no_time {
            comment.push_str(&format!("; {n}"));
        }
        if let Some(ex) = ex {
            comment.push_str(&format!("; {}", ex.status.as_str()));
        }
        let resp_headers: Vec<Value> = if answer.mime.is_empty() || !self.facts.http {
            Vec::new()
        } else {
            vec![json!({"name": "Content-Type", "value": answer.mime})]
        };
        let mut content = json!({"size": answer.text.len(), "mimeType": answer.mime});
        if !answer.text.is_empty() {
            content["text"] = json!(answer.text);
        }
        let mut response = json!({
            "status": answer.status,
            "statusText": answer.status_text,
            "httpVersion": http,
            "cookies": [],
            "headers": resp_headers,
            "content": content,
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": if answer.status == 0 { -1 } else { answer.text.len() as i64 },
        });
        if let Some(err) = &answer.error {
            response["_error"] = json!(err);
        }
        json!({
            "pageref": self.conn_id(),
            "startedDateTime": started,
            "time": ms,
            "request": {
                "method": "POST",
                "url": self.url(&method),
                "httpVersion": http,
                "cookies": [],
                "headers": self.headers(i, "application/json, text/event-stream"),
                "queryString": [],
                "postData": {"mimeType": "application/json", "text": body},
                "headersSize": -1,
                "bodySize": body.len(),
            },
            "response": response,
            "cache": {},
            "timings": {"send": 0, "wait": ms, "receive": 0},
            "comment": comment,
        })
    }

    /// A server message on no request's stream (HTTP): a GET of the event stream that
    /// delivered it.
    fn get(&self, i: usize) -> Value {
        let e = &self.tape.entries[i];
        let (started, no_time) = self.started(i);
        let text = format!("event: message\ndata: {}\n\n", e.message.text());
        let mut comment = format!(
            "server → client message on the GET stream, tape line {}",
            e.line
        );
        if let Some(n) = no_time {
            comment.push_str(&format!("; {n}"));
        }
        json!({
            "pageref": self.conn_id(),
            "startedDateTime": started,
            "time": 0,
            "request": {
                "method": "GET",
                "url": self.url(""),
                "httpVersion": "HTTP/1.1",
                "cookies": [],
                "headers": self.headers(i, "text/event-stream"),
                "queryString": [],
                "headersSize": -1,
                "bodySize": 0,
            },
            "response": {
                "status": 200,
                "statusText": "OK",
                "httpVersion": "HTTP/1.1",
                "cookies": [],
                "headers": [{"name": "Content-Type", "value": "text/event-stream"}],
                "content": {"size": text.len(), "mimeType": "text/event-stream", "text": text},
                "redirectURL": "",
                "headersSize": -1,
                "bodySize": text.len(),
            },
            "cache": {},
            "timings": {"send": 0, "wait": 0, "receive": 0},
            "comment": comment,
        })
    }
}

/// Percent-encodes all but RFC 3986's unreserved characters (and `/` when `slash`).
fn encode(s: &str, slash: bool) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(char::from(b))
            }
            b'/' if slash => out.push('/'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn stdio_urls_are_percent_encoded() {
        assert_eq!(super::encode("my server/é", false), "my%20server%2F%C3%A9");
        assert_eq!(super::encode("tools/call", true), "tools/call");
    }
}
