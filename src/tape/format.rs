//! One tape entry ⇄ one line of text (tape format v1, `docs/FORMAT.md`).
//!
//! Encoding appends `,"_meta":{…}` before the message's closing brace: the message's own
//! bytes (key order, number spelling, escapes) are untouched. Decoding cuts the `_meta`
//! member out again by its byte span, so the message comes back exactly, whichever tool
//! wrote the line (mcporter writes `_meta` last too, but any position is accepted).

use std::fmt;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::tape::close::Close;
use crate::tape::lifecycle::{
    Invalid, Lifecycle, LifecycleKind, Note, Oversize, Start, StreamState, Truncated,
};

/// Which way an entry went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Client → server.
    Send,
    /// Server → client.
    Recv,
    /// Not a message: a transport event (`$transport/start`, `$transport/close`, …).
    Lifecycle,
}

impl Direction {
    /// The word used in `_meta.dir`.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Send => "send",
            Direction::Recv => "recv",
            Direction::Lifecycle => "lifecycle",
        }
    }

    /// Reads the word used in `_meta.dir`.
    pub(crate) fn parse(word: &str) -> Option<Self> {
        match word {
            "send" => Some(Direction::Send),
            "recv" => Some(Direction::Recv),
            "lifecycle" => Some(Direction::Lifecycle),
            _ => None,
        }
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `_meta` member of an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    /// `send`, `recv` or `lifecycle`.
    pub dir: Direction,
    /// The server's name.
    pub server: String,
    /// RFC 3339 UTC timestamp with milliseconds (absent in hand-written tapes).
    pub ts: Option<String>,
    /// The connection id, unique within the tape (mcptape's; absent in mcporter's tapes).
    pub conn: Option<String>,
    /// For the elements of a JSON-RPC batch: the batch's number within its connection.
    pub batch: Option<u64>,
    /// The HTTP stream a server message came on, when not its request's own
    /// ([`crate::tape::stream`]).
    pub stream: Option<crate::tape::stream::Stream>,
    /// Where an imported entry came from ([`crate::tape::source`]); `None` when recorded.
    pub source: Option<crate::tape::source::Source>,
}

impl Meta {
    /// Appends this `_meta` as a JSON object to `out`.
    fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"dir\":\"");
        out.extend_from_slice(self.dir.as_str().as_bytes());
        out.extend_from_slice(b"\",\"server\":");
        push_json_string(out, &self.server);
        if let Some(ts) = &self.ts {
            out.extend_from_slice(b",\"ts\":");
            push_json_string(out, ts);
        }
        if let Some(conn) = &self.conn {
            out.extend_from_slice(b",\"conn\":");
            push_json_string(out, conn);
        }
        if let Some(batch) = self.batch {
            out.extend_from_slice(format!(",\"batch\":{batch}").as_bytes());
        }
        if let Some(stream) = self.stream {
            out.extend_from_slice(b",\"stream\":\"");
            out.extend_from_slice(stream.as_str().as_bytes());
            out.push(b'"');
        }
        if let Some(source) = &self.source {
            out.extend_from_slice(b",\"source\":");
            out.extend_from_slice(source.to_json().to_string().as_bytes());
        }
        out.push(b'}');
    }
}

fn push_json_string(out: &mut Vec<u8>, s: &str) {
    let quoted = serde_json::to_string(s).expect("a string always serializes");
    out.extend_from_slice(quoted.as_bytes());
}

/// Builds the tape line (with `\n`) for a message whose text is one JSON object.
///
/// `message` must be a JSON object (checked by the caller with [`crate::message::shape`]);
/// surrounding whitespace is dropped, everything between the braces is kept as it is.
pub fn encode(message: &[u8], meta: &Meta) -> Vec<u8> {
    let message = message.trim_ascii();
    let body = message.strip_suffix(b"}").unwrap_or(message);
    let mut out = Vec::with_capacity(message.len() + 96);
    out.extend_from_slice(body);
    let empty = body
        .strip_prefix(b"{")
        .unwrap_or(body)
        .trim_ascii()
        .is_empty();
    if !empty {
        out.push(b',');
    }
    out.extend_from_slice(b"\"_meta\":");
    meta.write_json(&mut out);
    out.extend_from_slice(b"}\n");
    out
}

/// Builds the line of a lifecycle entry: a `$…` notification with `params`.
pub fn encode_lifecycle(method: &str, params: &Value, meta: &Meta) -> Vec<u8> {
    encode(lifecycle_message(method, params).as_bytes(), meta)
}

/// The message of a lifecycle entry, `_meta` not yet appended: the one spelling of a
/// `$…` notification (the tap redacts it, then appends `_meta`).
pub fn lifecycle_message(method: &str, params: &Value) -> String {
    json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string()
}

/// Builds the line of a typed lifecycle entry.
pub fn encode_event(event: &Lifecycle, meta: &Meta) -> Vec<u8> {
    encode_lifecycle(event.kind().as_str(), &event.params(), meta)
}

/// The one serialiser of lifecycle entries: each known event ⇄ its method and `params`.
/// Member names and their order are the tape format's (`docs/FORMAT.md`); a close's
/// members are [`Close::params`]'.
impl Lifecycle {
    /// The event's method.
    pub fn kind(&self) -> LifecycleKind {
        match self {
            Lifecycle::Start(_) => LifecycleKind::Start,
            Lifecycle::Close(_) => LifecycleKind::Close,
            Lifecycle::Invalid(_) => LifecycleKind::Invalid,
            Lifecycle::Truncated(_) => LifecycleKind::Truncated,
            Lifecycle::Oversize(_) => LifecycleKind::Oversize,
            Lifecycle::HttpSession { .. } => LifecycleKind::HttpSession,
            Lifecycle::HttpStatus { .. } => LifecycleKind::HttpStatus,
            Lifecycle::HttpError { .. } => LifecycleKind::HttpError,
            Lifecycle::HttpStream(_) => LifecycleKind::HttpStream,
            Lifecycle::HttpResume { .. } => LifecycleKind::HttpResume,
            Lifecycle::HttpCancelled { .. } => LifecycleKind::HttpCancelled,
            Lifecycle::Fault(_) => LifecycleKind::Fault,
            Lifecycle::Policy(_) => LifecycleKind::PolicyDecision,
            Lifecycle::Commit(_) => LifecycleKind::Commit,
            Lifecycle::Note(_) => LifecycleKind::Note,
            Lifecycle::Other(kind) => kind.clone(),
        }
    }

    /// The event's `params`, as written on the tape.
    pub fn params(&self) -> Value {
        match self {
            Lifecycle::Start(start) => start_params(start),
            Lifecycle::Close(close) => close.params(),
            Lifecycle::Invalid(Invalid { dir, text }) => {
                let mut params = Map::new();
                if let Some(dir) = dir {
                    params.insert("dir".into(), json!(dir.as_str()));
                }
                params.insert("text".into(), json!(text));
                Value::Object(params)
            }
            Lifecycle::Truncated(Truncated { max_bytes }) => match max_bytes {
                Some(max) => json!({"maxBytes": max}),
                None => json!({}),
            },
            Lifecycle::Oversize(o) => oversize_params(o),
            Lifecycle::HttpSession { session_id } => json!({"sessionId": session_id}),
            Lifecycle::HttpStatus { status, body } => json!({"status": status, "body": body}),
            Lifecycle::HttpError { url, error } => json!({"url": url, "error": error}),
            Lifecycle::HttpStream(state) => json!({"state": state.as_str()}),
            Lifecycle::HttpResume { last_event_id } => json!({"lastEventId": last_event_id}),
            Lifecycle::HttpCancelled { reason, request_id } => {
                let mut params = json!({"reason": reason});
                if let Some(id) = request_id
                    .as_deref()
                    .and_then(|i| serde_json::from_str::<Value>(i).ok())
                {
                    params["requestId"] = id;
                }
                params
            }
            Lifecycle::Fault(fault) => fault.params(),
            Lifecycle::Policy(policy) => policy.params(),
            Lifecycle::Commit(commit) => commit.params(),
            Lifecycle::Note(note) => json!({"text": note.text}),
            Lifecycle::Other(_) => json!({}),
        }
    }

    /// The event as an upstream reports it to the layers (`crate::upstream::Event`):
    /// its kind and its `params`.
    pub fn event(&self) -> (LifecycleKind, Value) {
        (self.kind(), self.params())
    }

    /// Reads an event of this kind from its `params`; a known kind whose params do not
    /// have its shape reads as [`Lifecycle::Other`].
    pub fn read(kind: LifecycleKind, params: &Value) -> Lifecycle {
        let text = |name: &str| params[name].as_str().map(str::to_owned);
        let typed = match &kind {
            LifecycleKind::Start => Some(Lifecycle::Start(read_start(params))),
            LifecycleKind::Close => Some(Lifecycle::Close(Close::from_params(params))),
            LifecycleKind::Invalid => text("text").map(|text| {
                Lifecycle::Invalid(Invalid {
                    dir: read_dir(params),
                    text,
                })
            }),
            LifecycleKind::Truncated => Some(Lifecycle::Truncated(Truncated {
                max_bytes: params["maxBytes"].as_u64(),
            })),
            LifecycleKind::Oversize => Some(Lifecycle::Oversize(Oversize {
                dir: read_dir(params),
                bytes: params["bytes"].as_u64(),
                prefix: text("prefix"),
            })),
            LifecycleKind::HttpSession => {
                text("sessionId").map(|session_id| Lifecycle::HttpSession { session_id })
            }
            LifecycleKind::HttpStatus => params["status"]
                .as_u64()
                .and_then(|s| u16::try_from(s).ok())
                .zip(text("body"))
                .map(|(status, body)| Lifecycle::HttpStatus { status, body }),
            LifecycleKind::HttpError => text("url")
                .zip(text("error"))
                .map(|(url, error)| Lifecycle::HttpError { url, error }),
            LifecycleKind::HttpStream => match params["state"].as_str() {
                Some("open") => Some(Lifecycle::HttpStream(StreamState::Open)),
                Some("closed") => Some(Lifecycle::HttpStream(StreamState::Closed)),
                _ => None,
            },
            LifecycleKind::HttpResume => {
                text("lastEventId").map(|last_event_id| Lifecycle::HttpResume { last_event_id })
            }
            LifecycleKind::HttpCancelled => text("reason").map(|reason| Lifecycle::HttpCancelled {
                reason,
                request_id: params
                    .get("requestId")
                    .filter(|id| id.is_string() || id.is_number())
                    .map(Value::to_string),
            }),
            LifecycleKind::Fault => {
                crate::tape::fault::FaultEntry::read(params).map(Lifecycle::Fault)
            }
            LifecycleKind::PolicyDecision => {
                crate::tape::policy::PolicyEntry::read(params).map(Lifecycle::Policy)
            }
            LifecycleKind::Commit => {
                crate::tape::commit::CommitEntry::read(params).map(Lifecycle::Commit)
            }
            LifecycleKind::Note => text("text").map(|text| Lifecycle::Note(Note { text })),
            LifecycleKind::Other(_) => None,
        };
        typed.unwrap_or(Lifecycle::Other(kind))
    }
}

/// `send` or `recv` from a lifecycle entry's `dir` (never `lifecycle`).
fn read_dir(params: &Value) -> Option<Direction> {
    params["dir"]
        .as_str()
        .and_then(Direction::parse)
        .filter(|d| *d != Direction::Lifecycle)
}

fn start_params(start: &Start) -> Value {
    let mut params = Map::new();
    if let Some(command) = &start.command {
        params.insert("command".into(), json!(command));
    }
    if let Some(pid) = start.pid {
        params.insert("pid".into(), json!(pid));
    }
    if let Some(url) = &start.url {
        params.insert("url".into(), json!(url));
    }
    if start.front {
        params.insert("front".into(), json!("http"));
    }
    if start.redaction_off {
        params.insert("redaction".into(), json!("off"));
    }
    Value::Object(params)
}

fn read_start(params: &Value) -> Start {
    Start {
        command: params["command"].as_array().map(|argv| {
            argv.iter()
                .filter_map(|a| a.as_str().map(str::to_owned))
                .collect()
        }),
        pid: params["pid"].as_u64().and_then(|p| u32::try_from(p).ok()),
        url: params["url"].as_str().map(str::to_owned),
        front: params["front"] == "http",
        redaction_off: params["redaction"] == "off",
    }
}

fn oversize_params(o: &Oversize) -> Value {
    let mut params = Map::new();
    if let Some(dir) = o.dir {
        params.insert("dir".into(), json!(dir.as_str()));
    }
    if let Some(bytes) = o.bytes {
        params.insert("bytes".into(), json!(bytes));
    }
    if let Some(prefix) = &o.prefix {
        params.insert("prefix".into(), json!(prefix));
    }
    Value::Object(params)
}

/// The parts of a decoded line.
#[cfg(test)]
#[derive(Debug)]
pub struct Decoded {
    /// The message's exact text, `_meta` cut out.
    pub message: String,
    /// The parsed `_meta`.
    pub meta: Meta,
}

#[derive(Deserialize)]
struct MetaFields {
    dir: String,
    #[serde(default)]
    server: Option<String>,
    #[serde(default)]
    ts: Option<String>,
    #[serde(default)]
    conn: Option<String>,
    #[serde(default)]
    batch: Option<u64>,
    /// Any JSON: a value this version does not know reads as absent.
    #[serde(default)]
    stream: Option<Value>,
    /// Any JSON: a shape this version does not know reads as absent.
    #[serde(default)]
    source: Option<Value>,
}

/// Reads one tape line: the message without `_meta`, and the `_meta`.
#[cfg(test)]
pub fn decode(line: &str) -> Result<Decoded, String> {
    let (meta, cut) = decode_cut(line)?;
    let trimmed = line.trim_ascii();
    let message = match cut {
        Cut::At(i) => format!("{}}}", &trimmed[..i]),
        Cut::Owned(m) => m,
    };
    Ok(Decoded { message, meta })
}

/// Where a line's message is, once `_meta` is cut out.
#[derive(Debug, PartialEq, Eq)]
pub enum Cut {
    /// `_meta` is the last member: the message is the (trimmed) line up to this byte,
    /// the comma before `_meta`, with a `}` in its place — the common case, which a
    /// reader can serve without copying.
    At(usize),
    /// Any other place: the message, rebuilt.
    Owned(String),
}

/// Reads one tape line's `_meta` and where its message is (see [`Cut`]).
pub fn decode_cut(line: &str) -> Result<(Meta, Cut), String> {
    let line = line.trim_ascii();
    let members = crate::message::members(line).map_err(|e| {
        if line.starts_with('{') {
            format!("not valid JSON ({e})")
        } else {
            "not a JSON object".to_owned()
        }
    })?;
    let idx = members
        .iter()
        .rposition(|(k, _)| k == "_meta")
        .ok_or("no `_meta` member")?;
    let span = |v: &RawValue| crate::message::span(line, v);
    let (_, meta_end) = span(members[idx].1);
    let cut = if idx > 0 {
        // Cut from the comma that separates `_meta` from the member before it: any
        // whitespace the message had before that comma stays.
        let (_, prev_end) = span(members[idx - 1].1);
        let comma = line[prev_end..]
            .find(',')
            .map_or(prev_end, |i| prev_end + i);
        if idx + 1 == members.len() && line[meta_end..].trim() == "}" {
            Cut::At(comma)
        } else {
            Cut::Owned(format!("{}{}", &line[..comma], &line[meta_end..]))
        }
    } else if members.len() > 1 {
        let comma = line[meta_end..]
            .find(',')
            .map_or(meta_end, |i| meta_end + i + 1);
        Cut::Owned(format!("{{{}", line[comma..].trim_start()))
    } else {
        Cut::Owned("{}".to_owned())
    };
    let fields: MetaFields = serde_json::from_str(members[idx].1.get())
        .map_err(|e| format!("`_meta` is not valid: {e}"))?;
    let dir = Direction::parse(&fields.dir).ok_or_else(|| {
        format!(
            "`_meta.dir` is `{}`, not send, recv or lifecycle",
            fields.dir
        )
    })?;
    Ok((
        Meta {
            dir,
            server: fields.server.unwrap_or_default(),
            ts: fields.ts,
            conn: fields.conn,
            batch: fields.batch,
            stream: fields
                .stream
                .as_ref()
                .and_then(Value::as_str)
                .and_then(crate::tape::stream::Stream::parse),
            source: fields
                .source
                .as_ref()
                .and_then(crate::tape::source::Source::from_json),
        },
        cut,
    ))
}

/// Formats a time as RFC 3339 UTC with milliseconds, as `_meta.ts` wants.
pub fn timestamp(t: std::time::SystemTime) -> String {
    humantime::format_rfc3339_millis(t).to_string()
}

#[cfg(test)]
mod lifecycle_tests;

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> Meta {
        Meta {
            dir: Direction::Send,
            server: "ex\"ample".into(),
            ts: Some("2026-11-30T04:35:01.266Z".into()),
            conn: Some("7f3a-1".into()),
            batch: None,
            stream: None,
            source: None,
        }
    }

    #[test]
    fn round_trip_keeps_bytes() {
        let raw = r#"{"z":1.0, "id":1,"method":"t","params":{"s":"caf\u00e9 \/"}}"#;
        let line = encode(raw.as_bytes(), &meta());
        let text = std::str::from_utf8(&line).expect("utf8");
        assert!(text.ends_with("}\n"));
        let d = decode(text).expect("decode");
        assert_eq!(d.message, raw);
        assert_eq!(d.meta, meta());
    }

    #[test]
    fn whitespace_before_the_closing_brace_is_kept() {
        let raw = r#"{ "id": 1 , "method": "x" }"#;
        let line = encode(raw.as_bytes(), &meta());
        let d = decode(std::str::from_utf8(&line).expect("utf8")).expect("decode");
        assert_eq!(d.message, raw);
    }

    #[test]
    fn empty_object_and_whitespace() {
        let line = encode(b"  { }  ", &meta());
        let d = decode(std::str::from_utf8(&line).expect("utf8")).expect("decode");
        // An object with no members has nothing to keep but its braces.
        assert_eq!(d.message, "{}");
        let line = encode(b"{}", &meta());
        assert!(line.starts_with(b"{\"_meta\":"));
    }

    #[test]
    fn meta_anywhere_is_cut_out() {
        let first = r#"{"_meta":{"dir":"recv","server":"s"}, "id":1,"result":{}}"#;
        assert_eq!(
            decode(first).expect("decode").message,
            r#"{"id":1,"result":{}}"#
        );
        let middle = r#"{"id":1,"_meta":{"dir":"recv","server":"s"},"result":{}}"#;
        assert_eq!(
            decode(middle).expect("decode").message,
            r#"{"id":1,"result":{}}"#
        );
        let only = r#"{"_meta":{"dir":"lifecycle","server":"s"}}"#;
        assert_eq!(decode(only).expect("decode").message, "{}");
    }

    #[test]
    fn bad_lines_say_why() {
        assert!(
            decode("nope")
                .expect_err("must fail")
                .contains("not a JSON object")
        );
        assert!(
            decode(r#"{"id":1"#)
                .expect_err("must fail")
                .contains("not valid JSON")
        );
        assert!(
            decode(r#"{"id":1}"#)
                .expect_err("must fail")
                .contains("no `_meta`")
        );
        let bad_dir = r#"{"id":1,"_meta":{"dir":"sideways","server":"s"}}"#;
        assert!(decode(bad_dir).expect_err("must fail").contains("sideways"));
    }

    #[test]
    fn lifecycle_is_a_dollar_notification() {
        let mut m = meta();
        m.dir = Direction::Lifecycle;
        let line = encode_lifecycle("$transport/close", &serde_json::json!({"exitCode": 0}), &m);
        let d = decode(std::str::from_utf8(&line).expect("utf8")).expect("decode");
        assert_eq!(
            d.message,
            r#"{"jsonrpc":"2.0","method":"$transport/close","params":{"exitCode":0}}"#
        );
    }
}
