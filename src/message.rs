//! One JSON-RPC message as it crossed the wire: its raw bytes, and what it is,
//! read lazily from its top-level members.
//!
//! A message is never re-serialized: the bytes are what the peer wrote (minus the line
//! terminator). Classification follows JSON-RPC 2.0 as MCP uses it
//! (<https://modelcontextprotocol.io/specification/2025-11-25/basic>): a `method` with an
//! `id` is a request, a `method` without one a notification, a `result` a response, an
//! `error` an error response. Unknown methods are just methods: nothing is dropped.

use std::sync::OnceLock;

use bytes::Bytes;
use serde::Deserialize;
use serde::de::{MapAccess, Visitor};
use serde_json::value::RawValue;

/// True when two raw JSON ids are the same id (`"\u00e9"` and `"é"` are), whatever
/// their spelling.
pub fn same_id(a: &str, b: &str) -> bool {
    a == b
        || matches!(
            (serde_json::from_str::<serde_json::Value>(a), serde_json::from_str::<serde_json::Value>(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// What kind of JSON-RPC message a line holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `method` and `id`.
    Request,
    /// `method`, no `id`.
    Notification,
    /// `result` (and `id`).
    Response,
    /// `error` (and `id`).
    Error,
    /// A JSON object that is none of the above.
    Other,
}

impl Kind {
    /// A short lowercase word for the kind.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Request => "request",
            Kind::Notification => "notification",
            Kind::Response => "response",
            Kind::Error => "error",
            Kind::Other => "other",
        }
    }
}

/// The outer shape of a line of JSON text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A JSON object: one message.
    Object,
    /// A JSON array: a JSON-RPC batch (allowed by MCP 2025-03-26, removed since).
    Array,
    /// Anything else, including text that is not JSON at all.
    Invalid,
}

/// Tells the shape of one line (without its line terminator) by validating it as JSON.
pub fn shape(line: &[u8]) -> Shape {
    let Ok(text) = std::str::from_utf8(line) else {
        return Shape::Invalid;
    };
    let text = text.trim_ascii();
    let parsed: Result<&RawValue, _> = serde_json::from_str(text);
    match (parsed, text.as_bytes().first()) {
        (Ok(_), Some(b'{')) => Shape::Object,
        (Ok(_), Some(b'[')) => Shape::Array,
        _ => Shape::Invalid,
    }
}

/// One JSON-RPC message: its exact text, and its head read on first use.
#[derive(Debug, Clone)]
pub struct Message {
    raw: Bytes,
    head: OnceLock<Head>,
    /// The HTTP stream a server message came on, when not its request's own.
    stream: Option<crate::tape::stream::Stream>,
    /// The id (JSON text) of the client request whose HTTP answer stream a server message
    /// came on, when it came on one.
    answering: Option<std::sync::Arc<str>>,
    /// Written to the client in small pieces with pauses between them (an injected
    /// `slow-stream` fault), not in one write.
    slow: bool,
}

/// The top-level members that say what a message is, read once.
#[derive(Debug, Clone, Default)]
struct Head {
    kind: Option<Kind>,
    method: Option<String>,
    id: Option<String>,
    /// Where the top-level `id` value lies in the raw bytes.
    id_span: Option<(usize, usize)>,
}

#[derive(Deserialize)]
struct HeadFields<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(default)]
    method: Option<String>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

impl Message {
    /// Wraps the exact text of one message (a JSON object, without line terminator).
    pub fn new(raw: impl Into<Bytes>) -> Self {
        Message {
            raw: raw.into(),
            head: OnceLock::new(),
            stream: None,
            answering: None,
            slow: false,
        }
    }

    /// This server message, to be written to the client slowly: in small pieces with
    /// pauses between them (the `slow-stream` fault).
    pub fn slowly(mut self) -> Self {
        self.slow = true;
        self
    }

    /// True when this message is to be written slowly ([`Message::slowly`]).
    pub fn is_slow(&self) -> bool {
        self.slow
    }

    /// This message, marked as having come on `stream` (the GET stream): where the tap
    /// records it came from and the HTTP front gives it ([`crate::tape::stream`]).
    pub fn on(mut self, stream: Option<crate::tape::stream::Stream>) -> Self {
        self.stream = stream;
        self
    }

    /// The HTTP stream this message came on, when not its request's own.
    pub fn stream(&self) -> Option<crate::tape::stream::Stream> {
        self.stream
    }

    /// This server message, marked as having come on the answer stream of the client
    /// request `id` (its JSON text): where the HTTP front gives it.
    pub fn answering(mut self, id: Option<std::sync::Arc<str>>) -> Self {
        self.answering = id;
        self
    }

    /// The id of the client request whose HTTP answer stream this came on, when known.
    pub fn answered(&self) -> Option<&str> {
        self.answering.as_deref()
    }

    /// The exact bytes of the message.
    pub fn raw(&self) -> &[u8] {
        &self.raw
    }

    /// The exact bytes of the message, shared (no copy).
    pub fn bytes(&self) -> Bytes {
        self.raw.clone()
    }

    /// The exact text of the message (tapes are UTF-8 JSON; invalid UTF-8 reads as empty).
    pub fn text(&self) -> &str {
        std::str::from_utf8(&self.raw).unwrap_or_default()
    }

    fn head(&self) -> &Head {
        self.head.get_or_init(|| {
            // serde reads a struct from an array too: only an object is a message.
            if self.raw.trim_ascii_start().first() != Some(&b'{') {
                return Head::default();
            }
            let Ok(fields) = serde_json::from_slice::<HeadFields>(&self.raw) else {
                return Head::default();
            };
            let kind = match (&fields.method, &fields.id, &fields.result, &fields.error) {
                (Some(_), Some(_), _, _) => Kind::Request,
                (Some(_), None, _, _) => Kind::Notification,
                (None, _, Some(_), _) => Kind::Response,
                (None, _, None, Some(_)) => Kind::Error,
                _ => Kind::Other,
            };
            let base = self.raw.as_ptr() as usize;
            Head {
                kind: Some(kind),
                method: fields.method,
                id_span: fields.id.map(|id| {
                    let start = id.get().as_ptr() as usize - base;
                    (start, start + id.get().len())
                }),
                id: fields.id.map(|id| id.get().to_owned()),
            }
        })
    }

    /// True when the text is a JSON object (anything else is not a message).
    pub fn is_object(&self) -> bool {
        self.head().kind.is_some()
    }

    /// The text with its top-level `id` value replaced by the raw JSON `id`; every other
    /// byte kept. `None` when it has no id.
    pub fn with_id(&self, id: &str) -> Option<String> {
        let (a, b) = self.head().id_span?;
        let text = self.text();
        Some(format!("{}{id}{}", &text[..a], &text[b..]))
    }

    /// What kind of message this is.
    pub fn kind(&self) -> Kind {
        self.head().kind.unwrap_or(Kind::Other)
    }

    /// The `method`, for requests and notifications.
    pub fn method(&self) -> Option<&str> {
        self.head().method.as_deref()
    }

    /// The `id` as its JSON text (`1` and `"1"` differ), when there is one.
    pub fn id(&self) -> Option<&str> {
        self.head().id.as_deref()
    }

    /// The whole message parsed as a JSON value (for display and comparison, not
    /// forwarding). Lone surrogate escapes (`\ud83d` from a string cut mid-emoji, which
    /// JavaScript writes) read as U+FFFD instead of failing the whole message. Parts nested
    /// deeper than [`crate::depth::MAX_JSON_DEPTH`] read as a marker string
    /// ([`crate::depth::shallow`]).
    pub fn value(&self) -> serde_json::Value {
        let text = crate::depth::shallow(self.text());
        serde_json::from_str(&text)
            .ok()
            .or_else(|| serde_json::from_str(&without_lone_surrogates(&text)).ok())
            .unwrap_or(serde_json::Value::Null)
    }
}

/// JSON text with every `\uD800`–`\uDFFF` escape that is not half of a pair replaced by
/// `\ufffd`, so that serde_json (which refuses them) can read it.
pub fn without_lone_surrogates(text: &str) -> String {
    let b = text.as_bytes();
    let hex = |i: usize| -> Option<u32> {
        let digits = text.get(i..i + 4)?;
        u32::from_str_radix(digits, 16).ok()
    };
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut copied = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        if b.get(i + 1) != Some(&b'u') {
            i += 2;
            continue;
        }
        let Some(unit) = hex(i + 2) else {
            i += 2;
            continue;
        };
        let high = (0xD800..0xDC00).contains(&unit);
        let paired = high
            && b.get(i + 6) == Some(&b'\\')
            && b.get(i + 7) == Some(&b'u')
            && hex(i + 8).is_some_and(|low| (0xDC00..0xE000).contains(&low));
        if paired {
            i += 12;
        } else if (0xD800..0xE000).contains(&unit) {
            out.push_str(&text[copied..i]);
            out.push_str("\\ufffd");
            i += 6;
            copied = i;
        } else {
            i += 6;
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// The members of a JSON object, in order, each value borrowed raw from `text`.
pub fn members(text: &str) -> Result<Vec<(String, &RawValue)>, serde_json::Error> {
    struct Members<'a>(Vec<(String, &'a RawValue)>);
    impl<'de> Deserialize<'de> for Members<'de> {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Members<'de>;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("a JSON object")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                    let mut members = Vec::new();
                    while let Some(entry) = map.next_entry::<String, &'de RawValue>()? {
                        members.push(entry);
                    }
                    Ok(Members(members))
                }
            }
            d.deserialize_map(V)
        }
    }
    serde_json::from_str::<Members>(text).map(|m| m.0)
}

/// The byte range of a raw value borrowed from `text`.
pub fn span(text: &str, value: &RawValue) -> (usize, usize) {
    let start = value.get().as_ptr() as usize - text.as_ptr() as usize;
    (start, start + value.get().len())
}

/// The raw JSON text of the value at a path of object keys, when it is there.
pub fn raw_member<'a>(text: &'a str, path: &[&str]) -> Option<&'a str> {
    let mut cur = text;
    for key in path {
        let found = members(cur)
            .ok()?
            .into_iter()
            .rev()
            .find(|(k, _)| k == key)?;
        cur = found.1.get();
    }
    Some(cur)
}

/// Replaces the value at a path of object keys (`["params", "progressToken"]`) with the
/// raw JSON `new`, leaving every other byte of `text` as it was. `None` when the path is
/// not there.
pub fn replace_member(text: &str, path: &[&str], new: &str) -> Option<String> {
    let (mut lo, mut hi) = (0, text.len());
    for key in path {
        let inner = &text[lo..hi];
        let found = members(inner)
            .ok()?
            .into_iter()
            .rev()
            .find(|(k, _)| k == key)?;
        let (s, e) = span(inner, found.1);
        (lo, hi) = (lo + s, lo + e);
    }
    Some(format!("{}{new}{}", &text[..lo], &text[hi..]))
}

/// Removes the member `key` (its last occurrence) from the object at a path of object
/// keys (`["params"]`), with the comma that separated it, leaving every other byte of
/// `text` as it was: nothing is parsed into values, so a message of any depth keeps its
/// bytes. `None` when the object or the member is not there.
pub fn remove_member(text: &str, path: &[&str], key: &str) -> Option<String> {
    let (mut lo, mut hi) = (0, text.len());
    for k in path {
        let inner = &text[lo..hi];
        let found = members(inner)
            .ok()?
            .into_iter()
            .rev()
            .find(|(m, _)| m == k)?;
        let (s, e) = span(inner, found.1);
        (lo, hi) = (lo + s, lo + e);
    }
    let object = &text[lo..hi];
    let found = members(object).ok()?;
    let idx = found.iter().rposition(|(m, _)| m == key)?;
    let (_, end) = span(object, found[idx].1);
    let (cut_lo, cut_hi) = if idx > 0 {
        // From the end of the member before it: `, "key": value`.
        (span(object, found[idx - 1].1).1, end)
    } else {
        // The first member: from just inside `{` up to and with the comma after it.
        let open = object.find('{')? + 1;
        let after = if idx + 1 < found.len() {
            end + object[end..].find(',')? + 1
        } else {
            end
        };
        (open, after)
    };
    Some(format!("{}{}", &text[..lo + cut_lo], &text[lo + cut_hi..]))
}

#[cfg(test)]
mod tests {
    #[test]
    fn lone_surrogates_read_as_replacement_characters() {
        let m = Message::new(
            &br#"{"error":{"code":-1,"message":"cut \ud83d here \ud83d\ude00 ok"}}"#[..],
        );
        assert_eq!(
            m.value()["error"]["message"],
            "cut \u{fffd} here \u{1f600} ok"
        );
    }

    #[test]
    fn a_message_too_deep_for_serde_reads_with_a_marker_not_as_null() {
        let levels = 1_000_000;
        let text = format!(
            r#"{{"id":1,"method":"tools/call","params":{{"name":"x","arguments":{{"d":{}{}}}}}}}"#,
            "[".repeat(levels),
            "]".repeat(levels)
        );
        let m = Message::new(text);
        assert_eq!(m.kind(), Kind::Request);
        let v = m.value();
        assert_eq!(v["params"]["name"], "x");
        assert!(v.to_string().contains(crate::depth::TOO_DEEP));
    }

    #[test]
    fn remove_member_takes_out_only_that_member() {
        let cut = |t: &str| remove_member(t, &["params"], "redaction");
        assert_eq!(
            cut(r#"{"params":{"a":1 , "redaction":"off","b":[2]},"x":0}"#).as_deref(),
            Some(r#"{"params":{"a":1,"b":[2]},"x":0}"#)
        );
        assert_eq!(
            cut(r#"{"params":{ "redaction" : "off" , "b":2}}"#).as_deref(),
            Some(r#"{"params":{ "b":2}}"#)
        );
        assert_eq!(
            cut(r#"{"params":{"redaction":"off"}}"#).as_deref(),
            Some(r#"{"params":{}}"#)
        );
        assert_eq!(cut(r#"{"params":{"a":1}}"#), None);
        assert_eq!(cut(r#"{"params":[1]}"#), None);
        // Deeper than serde_json's recursion limit: the bytes are kept all the same.
        let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
        let text = format!(r#"{{"params":{{"deep":{deep},"redaction":"off"}}}}"#);
        assert_eq!(
            cut(&text),
            Some(format!(r#"{{"params":{{"deep":{deep}}}}}"#))
        );
    }

    #[test]
    fn replace_member_touches_only_that_value() {
        let text = r#"{"jsonrpc":"2.0", "id" : 7,"result":{"id":7,"x":1.0}}"#;
        assert_eq!(
            replace_member(text, &["id"], r#""live""#).as_deref(),
            Some(r#"{"jsonrpc":"2.0", "id" : "live","result":{"id":7,"x":1.0}}"#)
        );
        let progress =
            r#"{"method":"notifications/progress","params":{"progressToken":5,"progress":1}}"#;
        assert_eq!(
            replace_member(progress, &["params", "progressToken"], "9").as_deref(),
            Some(
                r#"{"method":"notifications/progress","params":{"progressToken":9,"progress":1}}"#
            )
        );
        assert_eq!(replace_member(progress, &["params", "nope"], "9"), None);
        assert_eq!(
            raw_member(progress, &["params", "progressToken"]),
            Some("5")
        );
    }

    use super::*;

    #[test]
    fn classifies_by_members() {
        let cases = [
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
                Kind::Request,
            ),
            (
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                Kind::Notification,
            ),
            (r#"{"jsonrpc":"2.0","id":"a","result":{}}"#, Kind::Response),
            (
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#,
                Kind::Error,
            ),
            (r#"{"jsonrpc":"2.0"}"#, Kind::Other),
            (
                r#"{"jsonrpc":"2.0","id":2,"method":"x/unknown-to-everyone"}"#,
                Kind::Request,
            ),
        ];
        for (text, kind) in cases {
            assert_eq!(
                Message::new(text.as_bytes().to_vec()).kind(),
                kind,
                "{text}"
            );
        }
    }

    #[test]
    fn id_keeps_its_json_type() {
        let m = Message::new(&br#"{"id":"1","result":{}}"#[..]);
        assert_eq!(m.id(), Some(r#""1""#));
        let m = Message::new(&br#"{"id":1,"result":{}}"#[..]);
        assert_eq!(m.id(), Some("1"));
        assert_eq!(
            m.with_id(r#""x""#).as_deref(),
            Some(r#"{"id":"x","result":{}}"#)
        );
        assert!(!Message::new(&b"[1]"[..]).is_object());
    }

    #[test]
    fn shapes() {
        assert_eq!(shape(br#" {"a":1} "#), Shape::Object);
        assert_eq!(shape(br#"[{"a":1}]"#), Shape::Array);
        assert_eq!(shape(b"this is not json"), Shape::Invalid);
        assert_eq!(shape(b"42"), Shape::Invalid);
        assert_eq!(shape(br#"{"a":1"#), Shape::Invalid);
        assert_eq!(shape(b"\xff\xfe"), Shape::Invalid);
        assert_eq!(shape(b""), Shape::Invalid);
    }
}
