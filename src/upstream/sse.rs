//! An incremental Server-Sent Events parser for Streamable HTTP answers and the GET stream
//! (<https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation>):
//! bytes in, each event's data out, with the last event id and `retry:` kept for
//! resumption. However the stream is cut, the same events come out.
//!
//! An event of one `data:` line (what MCP servers send) comes out as a slice of the
//! bytes read, not a copy; only an event of several lines is joined into a new buffer.

use std::time::Duration;

use bytes::{Bytes, BytesMut};

use crate::framing;

/// Where an event stream can be resumed from: the last event id the server gave, and
/// how long it asked to be left alone first.
#[derive(Debug, Clone, PartialEq)]
pub struct Resumption {
    /// The last `id:` the server gave.
    pub id: String,
    /// The last `retry:` the server asked for.
    pub retry: Option<Duration>,
}

/// The data of the event under way.
#[derive(Default)]
enum Data {
    /// None yet.
    #[default]
    Empty,
    /// One line: a slice of what was read.
    One(Bytes),
    /// Several lines, joined by `\n`.
    Joined(Vec<u8>),
}

impl Data {
    fn len(&self) -> usize {
        match self {
            Data::Empty => 0,
            Data::One(b) => b.len(),
            Data::Joined(v) => v.len(),
        }
    }

    /// Adds a line; `first` is true for the event's first `data:` line.
    fn push(&mut self, value: Bytes, first: bool) {
        *self = match std::mem::take(self) {
            _ if first => Data::One(value),
            Data::Empty => Data::Joined([b"\n".as_slice(), &value].concat()),
            Data::One(prev) => Data::Joined([prev.as_ref(), b"\n", &value].concat()),
            Data::Joined(mut all) => {
                all.push(b'\n');
                all.extend_from_slice(&value);
                Data::Joined(all)
            }
        };
    }

    fn take(&mut self) -> Bytes {
        match std::mem::take(self) {
            Data::Empty => Bytes::new(),
            Data::One(b) => b,
            Data::Joined(v) => Bytes::from(v),
        }
    }
}

/// An incremental Server-Sent Events parser: bytes in, the data of each event out.
#[derive(Default)]
pub struct Sse {
    pending: BytesMut,
    data: Data,
    has_data: bool,
    last_id: Option<String>,
    retry: Option<Duration>,
}

impl Sse {
    /// The last event id seen (with the last `retry:`), if the server gave one.
    pub fn resumption(&self) -> Option<Resumption> {
        self.last_id.clone().map(|id| Resumption {
            id,
            retry: self.retry,
        })
    }

    /// Bytes held for the event under way.
    pub fn pending_len(&self) -> usize {
        self.pending.len() + self.data.len()
    }

    /// Feeds bytes; returns the data of every event they complete.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<Bytes> {
        self.pending.extend_from_slice(bytes);
        let mut out = Vec::new();
        while let Some(end) = memchr::memchr(b'\n', &self.pending) {
            let line = self.pending.split_to(end + 1).freeze();
            let len = framing::content(&line).len();
            let line = line.slice(..len);
            if line.is_empty() {
                // A blank line ends an event; one without data (a priming event) is none.
                let data = self.data.take();
                if std::mem::take(&mut self.has_data) && !data.is_empty() {
                    out.push(data);
                }
                continue;
            }
            if let Some(at) = value_at(&line, b"data:") {
                self.data.push(line.slice(at..), !self.has_data);
                self.has_data = true;
            }
            // `:` comments and `event:` carry nothing mcptape needs.
            if let Some(at) = value_at(&line, b"id:") {
                let value = &line[at..];
                // An id with NUL is ignored (the SSE rules); an empty one clears it.
                if !value.contains(&0)
                    && let Ok(id) = std::str::from_utf8(value)
                {
                    self.last_id = (!id.is_empty()).then(|| id.to_owned());
                }
            } else if let Some(at) = value_at(&line, b"retry:") {
                let value = &line[at..];
                if let Some(ms) = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok()) {
                    self.retry = Some(Duration::from_millis(ms));
                }
            }
        }
        out
    }
}

/// Where the value of a `field:` line starts (after one optional space), if the line is
/// that field.
fn value_at(line: &[u8], field: &[u8]) -> Option<usize> {
    let rest = line.strip_prefix(field)?;
    Some(field.len() + usize::from(rest.first() == Some(&b' ')))
}
