//! What a connection's own entries say about it, for HAR and OTLP: how it was carried
//! (a process's pipes, or Streamable HTTP), the server's URL, the session id and the
//! protocol version once each became known, and when it began and ended. Headers are
//! never on a tape: only what these entries imply can be written.

use std::time::SystemTime;

use crate::exchange::{Exchange, Exchanges, time};
use crate::tape::lifecycle::Lifecycle;
use crate::tape::{Connection, Direction, Tape};

/// The facts of one connection.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// True for Streamable HTTP: its `$transport/start` has a `url` or says the HTTP
    /// front recorded it, or it has `$http/*` entries.
    pub http: bool,
    /// The server's URL, when the tape gives it.
    pub url: Option<String>,
    /// The `Mcp-Session-Id` (as the tape keeps it: usually `[REDACTED]`) and the entry
    /// index from which it is known.
    pub session: Option<(String, usize)>,
    /// The negotiated protocol version (the `initialize` answer's) and the index of that
    /// answer.
    pub protocol: Option<(String, usize)>,
    /// The earliest and latest entry times.
    pub first: Option<SystemTime>,
    /// See `first`.
    pub last: Option<SystemTime>,
}

impl Facts {
    /// The facts of connection `c` of `x`.
    pub fn of(tape: &Tape, x: &Exchanges, c: usize) -> Facts {
        let conn: &Connection = &x.connections[c];
        let mut f = Facts::default();
        for &i in &conn.entries {
            let e = &tape.entries[i];
            if let Some(t) = time(e) {
                f.first = Some(f.first.map_or(t, |a| a.min(t)));
                f.last = Some(f.last.map_or(t, |a| a.max(t)));
            }
            if e.message.method().is_some_and(|m| m.starts_with("$http/")) {
                f.http = true;
            }
            match Lifecycle::of(e) {
                Some(Lifecycle::Start(s)) => {
                    f.http |= s.url.is_some() || s.front;
                    if f.url.is_none() {
                        f.url = s.url;
                    }
                }
                Some(Lifecycle::HttpSession { session_id }) if f.session.is_none() => {
                    f.session = Some((session_id, i));
                }
                _ => {}
            }
        }
        f.protocol = x
            .exchanges
            .iter()
            .filter(|e| e.conn == c && e.method == "initialize")
            .find_map(|e| {
                let a = e.answer?;
                let v = tape.entries[a].message.value();
                v["result"]["protocolVersion"]
                    .as_str()
                    .map(|p| (p.to_owned(), a))
            });
        f
    }

    /// `pipe` for a process's stdio, `tcp` for HTTP (OpenTelemetry's `network.transport`).
    pub fn transport(&self) -> &'static str {
        if self.http { "tcp" } else { "pipe" }
    }

    /// The session id known at entry `i`.
    pub fn session_at(&self, i: usize) -> Option<&str> {
        self.session
            .as_ref()
            .filter(|(_, at)| *at < i)
            .map(|(s, _)| s.as_str())
    }

    /// The protocol version negotiated before entry `i`.
    pub fn protocol_at(&self, i: usize) -> Option<&str> {
        self.protocol
            .as_ref()
            .filter(|(_, at)| *at < i)
            .map(|(p, _)| p.as_str())
    }
}

/// The HTTP status and body that answered `ex` instead of JSON-RPC (a `404`, a `400`):
/// the `$http/status` recorded after its request and before the client's next message.
pub fn http_status(tape: &Tape, x: &Exchanges, ex: &Exchange) -> Option<(u16, String)> {
    let conn = &x.connections[ex.conn];
    for &i in conn.entries.iter().filter(|&&i| i > ex.request) {
        let e = &tape.entries[i];
        if e.meta.dir == Direction::Send {
            break;
        }
        if let Some(Lifecycle::HttpStatus { status, body }) = Lifecycle::of(e) {
            return Some((status, body));
        }
    }
    None
}
