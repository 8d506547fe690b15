//! An incremental Server-Sent Events parser for Streamable HTTP answers and the GET stream
//! (<https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation>):
//! bytes in, each event's data out, with the last event id and `retry:` kept for
//! resumption. However the stream is cut, the same events come out.

use std::time::Duration;

use bytes::BytesMut;

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

/// An incremental Server-Sent Events parser: bytes in, the data of each event out.
#[derive(Default)]
pub struct Sse {
    pending: BytesMut,
    data: Vec<u8>,
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
    pub fn push(&mut self, bytes: &[u8]) -> Vec<Vec<u8>> {
        self.pending.extend_from_slice(bytes);
        let mut out = Vec::new();
        while let Some(end) = memchr::memchr(b'\n', &self.pending) {
            let line = self.pending.split_to(end + 1);
            let line = framing::content(&line);
            if line.is_empty() {
                // A blank line ends an event; one without data (a priming event) is none.
                if std::mem::take(&mut self.has_data) && !self.data.is_empty() {
                    out.push(std::mem::take(&mut self.data));
                }
                self.data.clear();
                continue;
            }
            if let Some(value) = line.strip_prefix(b"data:") {
                let value = value.strip_prefix(b" ").unwrap_or(value);
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
            // `:` comments and `event:` carry nothing mcptape needs.
            if let Some(value) = line.strip_prefix(b"id:") {
                let value = value.strip_prefix(b" ").unwrap_or(value);
                // An id with NUL is ignored (the SSE rules); an empty one clears it.
                if !value.contains(&0)
                    && let Ok(id) = std::str::from_utf8(value)
                {
                    self.last_id = (!id.is_empty()).then(|| id.to_owned());
                }
            } else if let Some(value) = line.strip_prefix(b"retry:") {
                let value = value.strip_prefix(b" ").unwrap_or(value);
                if let Some(ms) = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok()) {
                    self.retry = Some(Duration::from_millis(ms));
                }
            }
        }
        out
    }
}
