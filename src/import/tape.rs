//! One [`ImportedSession`] → one tape: the writer every importer uses.
//!
//! Each server the session called becomes one connection, in the
//! order of its first call: `$transport/start`, a synthesized `initialize` (id 0) and its
//! answer, `notifications/initialized`, then each call as `tools/call` (ids 1..n) with
//! its answer — a result, an error, or none when the transcript holds none — and a
//! `$transport/close`. `_meta.ts` is the transcript's time of the call (the handshake
//! takes the first call's, the close the last answer's). Every entry carries
//! `_meta.source` ([`crate::tape::source`]): the agent and the session; the handshake
//! and the close also `synthesized`, an answer the transcript had only in part
//! `incomplete`. Messages go through the recording's [`Redactor`] as a tap's do;
//! lifecycle entries through the tape format's one serialiser.
//!
//! The output is deterministic: a connection's `_meta.conn` is derived from the agent,
//! the session and the server ([`conn_id`]), so the same session renders the same bytes
//! every time. A tape whose bytes would not change is left alone ([`Written::unchanged`]:
//! no write, no `.prev` rotation, so re-importing never pushes the original out).
//! Otherwise the tape is written whole, with one append, after the previous tape of the
//! name is kept as `.prev` ([`store::start_fresh`]), under the tape rules (no symlink,
//! 0600). The notes of the previous tape (`mcptape note`) are carried over, after the
//! calls, in their order.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::import::{Answer, ImportedCall, ImportedSession};
use crate::redact::Redactor;
use crate::tape::close::{Close, CloseReason, CloseStatus};
use crate::tape::format::{self, Direction, Meta};
use crate::tape::lifecycle::{Lifecycle, Start};
use crate::tape::source::Source;
use crate::tape::{TapeError, TapeWriter, store};

mod name;
pub use name::Names;

/// The protocol version the synthesized handshake names (replay answers a client with
/// the version it asks for when mcptape knows it; verify plays its own).
pub const SYNTHESIZED_VERSION: &str = "2025-06-18";

/// What one server's connection of an imported tape holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerCalls {
    /// The server's name.
    pub server: String,
    /// `tools/call` requests written.
    pub calls: usize,
    /// Of them, calls the transcript holds no answer to.
    pub unanswered: usize,
    /// Of them, answers the transcript holds only in part.
    pub incomplete: usize,
}

/// A tape written from a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The tape.
    pub path: PathBuf,
    /// Where the previous tape of that name was kept (`.prev`), if there was one.
    pub kept: Option<PathBuf>,
    /// The tape there already held these bytes: nothing was written or rotated.
    pub unchanged: bool,
    /// One per connection, in tape order.
    pub servers: Vec<ServerCalls>,
}

/// Writes `session` (read from `agent`'s transcript) as the tape at `path`, keeping a
/// previous tape there as `.prev`. Nothing is written for a session with no MCP call.
pub fn write(
    session: &ImportedSession,
    agent: &str,
    path: &Path,
    redactor: &Redactor,
) -> Result<Written, TapeError> {
    let (mut bytes, servers) = render(session, agent, redactor)?;
    // A link is refused before it is read, as before it would be replaced.
    crate::tape::safety::check_replace(path)?;
    // Notes a person added to the tape of an earlier import stay, after the calls.
    for note in crate::tape::note::lines_of(path) {
        bytes.extend_from_slice(&note);
    }
    let same = std::fs::symlink_metadata(path)
        .is_ok_and(|m| m.is_file() && m.len() == bytes.len() as u64)
        && std::fs::read(path).is_ok_and(|old| old == bytes);
    if same {
        return Ok(Written {
            path: path.to_path_buf(),
            kept: None,
            unchanged: true,
            servers,
        });
    }
    let fresh = store::start_fresh(path)?;
    let mut writer = TapeWriter::open(path)?;
    let written = writer.append(&bytes).and_then(|()| writer.sync());
    if let Err(e) = written {
        // Nothing of the previous tape is lost: it goes back when nothing reached the
        // fresh one (a partial write stays, for the error names it).
        let _ = store::undo_fresh(path, &fresh);
        return Err(e);
    }
    store::settle_fresh(&fresh)?;
    Ok(Written {
        path: path.to_path_buf(),
        kept: fresh.kept.clone(),
        unchanged: false,
        servers,
    })
}

/// The tape's bytes for `session`, and what each connection holds: the pure part of
/// [`write`].
pub fn render(
    session: &ImportedSession,
    agent: &str,
    redactor: &Redactor,
) -> Result<(Vec<u8>, Vec<ServerCalls>), TapeError> {
    let mut servers: Vec<&str> = Vec::new();
    for call in &session.calls {
        if !servers.contains(&call.server.as_str()) {
            servers.push(&call.server);
        }
    }
    let mut out = Vec::new();
    let mut counts = Vec::new();
    for (index, server) in servers.into_iter().enumerate() {
        let calls: Vec<&ImportedCall> = session
            .calls
            .iter()
            .filter(|c| c.server == server)
            .collect();
        let conn = Connection {
            agent,
            session: &session.id,
            server,
            conn: conn_id(agent, &session.id, server, index),
            redactor,
        };
        conn.write(&calls, &mut out);
        counts.push(ServerCalls {
            server: server.to_owned(),
            calls: calls.len(),
            unanswered: calls.iter().filter(|c| c.answer.is_none()).count(),
            incomplete: calls.iter().filter(|c| c.incomplete.is_some()).count(),
        });
    }
    Ok((out, counts))
}

/// The `_meta.conn` of the connection to `server` (the `index`th of the tape) in
/// `agent`'s session `session`: 8 hex digits of an FNV-1a hash of the three, then
/// `-<index + 1>` — the same every import (so an unchanged session renders the same
/// bytes), distinct within the tape even if two hashes met.
fn conn_id(agent: &str, session: &str, server: &str, index: usize) -> String {
    const OFFSET: u32 = 0x811c_9dc5;
    const PRIME: u32 = 0x0100_0193;
    let mut hash = OFFSET;
    for part in [agent, session, server] {
        // A 0 byte ends each part, so `ab`+`c` and `a`+`bc` differ.
        for b in part.bytes().chain([0]) {
            hash = (hash ^ u32::from(b)).wrapping_mul(PRIME);
        }
    }
    format!("{hash:08x}-{}", index + 1)
}

/// What every entry of one connection shares.
struct Connection<'a> {
    agent: &'a str,
    session: &'a str,
    server: &'a str,
    conn: String,
    redactor: &'a Redactor,
}

impl Connection<'_> {
    fn write(&self, calls: &[&ImportedCall], out: &mut Vec<u8>) {
        let first = calls.first().and_then(|c| ts(c.called_at.as_deref()));
        let last = calls
            .iter()
            .rev()
            .find_map(|c| ts(c.answered_at.as_deref()).or_else(|| ts(c.called_at.as_deref())));
        let made_up = |dir| self.meta(dir, first.clone(), true, None);
        let start = Lifecycle::Start(Start {
            redaction_off: self.redactor.is_off(),
            ..Start::default()
        });
        out.extend(format::encode_event(&start, &made_up(Direction::Lifecycle)));
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": SYNTHESIZED_VERSION,
            "capabilities": {},
            "clientInfo": {"name": self.agent, "version": "unknown"},
        }});
        out.extend(self.line(&initialize, &made_up(Direction::Send)));
        let answer = json!({"jsonrpc": "2.0", "id": 0, "result": {
            "protocolVersion": SYNTHESIZED_VERSION,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": self.server, "version": "unknown"},
        }});
        out.extend(self.line(&answer, &made_up(Direction::Recv)));
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        out.extend(self.line(&initialized, &made_up(Direction::Send)));
        for (id, call) in (1u64..).zip(calls) {
            let at = ts(call.called_at.as_deref());
            let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                "name": call.tool,
                "arguments": call.arguments,
            }});
            out.extend(self.line(
                &request,
                &self.meta(Direction::Send, at.clone(), false, None),
            ));
            let answer = match &call.answer {
                Some(Answer::Result(result)) => {
                    json!({"jsonrpc": "2.0", "id": id, "result": result})
                }
                Some(Answer::Error(error)) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
                None => continue,
            };
            let at = ts(call.answered_at.as_deref()).or(at);
            let meta = self.meta(Direction::Recv, at, false, call.incomplete.clone());
            out.extend(self.line(&answer, &meta));
        }
        let close = Lifecycle::Close(Close {
            reason: Some(CloseReason::ClientDone),
            status: CloseStatus::Unknown,
        });
        let meta = self.meta(Direction::Lifecycle, last, true, None);
        out.extend(format::encode_event(&close, &meta));
    }

    fn meta(
        &self,
        dir: Direction,
        ts: Option<String>,
        synthesized: bool,
        incomplete: Option<String>,
    ) -> Meta {
        Meta {
            dir,
            server: self.server.to_owned(),
            ts,
            conn: Some(self.conn.clone()),
            batch: None,
            stream: None,
            source: Some(Source {
                imported: self.agent.to_owned(),
                session: Some(self.session.to_owned()),
                synthesized,
                incomplete,
            }),
        }
    }

    /// A message's tape line: redacted as a recording's, then `_meta` appended.
    fn line(&self, message: &Value, meta: &Meta) -> Vec<u8> {
        let text = message.to_string();
        format::encode(self.redactor.message(&text).as_bytes(), meta)
    }
}

/// A transcript's timestamp as `_meta.ts` writes it (RFC 3339 UTC, milliseconds); `None`
/// when absent or unreadable.
fn ts(text: Option<&str>) -> Option<String> {
    let t = humantime::parse_rfc3339_weak(text?.trim()).ok()?;
    Some(format::timestamp(t))
}

#[cfg(test)]
mod tests;
