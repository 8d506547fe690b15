//! Normalization, comparison and diffs of JSON-RPC messages, for replay (and verify).
//!
//! Two messages match when they are of the same kind with the same `method`, and their
//! members are deep-equal after normalization:
//!
//! - `id` and `jsonrpc` are not compared (ids are rewritten, not matched);
//! - `params._meta` and `result._meta` are removed: by the MCP spec they are metadata
//!   for the implementations (progress tokens, trace context, an agent's own ids such as
//!   Claude Code's `claudecode/toolUseId`), not part of the message's meaning. With
//!   [`Matcher::match_meta`] they are compared, less their volatile keys
//!   ([`VOLATILE_META_KEYS`]), and less the `_meta` object itself when nothing else is
//!   left in it;
//! - the user's ignore globs are removed from both sides ([`Glob`]);
//! - `params` that is `{}` (as sent, or once `_meta` and ignored paths are gone) is
//!   removed: absent params and `{}` match (`tools/list` is sent both ways);
//! - a recorded `"[REDACTED]"` matches any value there, and a `[REDACTED]` inside a
//!   recorded string matches any text in its place;
//! - numbers compare by value (`1` matches `1.0`).
//!
//! `initialize` and `server/discover` match on method alone unless strict: client
//! versions and capabilities differ between runs.
//!
//! A part nested deeper than [`MAX_JSON_DEPTH`] compares by its bytes outside whitespace,
//! once the message is redacted by the built-in rules (as a tape holds it): it reads as a
//! marker holding their hash ([`crate::depth`]), and globs do not reach into it. Every walk
//! here recurses over values at most that deep, JSON parsed out of text included.

use serde_json::Value;

use crate::depth::{self, MAX_JSON_DEPTH};
use crate::message::{Kind, Message};

/// Keys of `params._meta` that change from run to run and are never compared, not even
/// with `--match-meta` (the `progressToken` is rewritten on the way out instead).
pub const VOLATILE_META_KEYS: &[&str] = &[
    "progressToken",
    "traceparent",
    "tracestate",
    "baggage",
    "sentry-trace",
    "io.modelcontextprotocol/clientInfo",
];

/// The placeholder redaction writes; in a recorded message it matches anything.
pub const REDACTED: &str = crate::redact::REDACTED;

/// A dot-path glob over a JSON document: `params.arguments.ts`, `**.timestamp`,
/// `result.content.*.text`. `*` is one key or array index, `**` any number of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    text: String,
    segments: Vec<Segment>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Key(String),
    Any,
    AnyDepth,
}

impl Glob {
    /// Parses a glob; an empty one, or one with an empty segment, is an error.
    pub fn parse(text: &str) -> Result<Glob, String> {
        let segments = text
            .split('.')
            .map(|s| match s {
                "" => Err(format!("invalid path glob `{text}`: empty segment")),
                "*" => Ok(Segment::Any),
                "**" => Ok(Segment::AnyDepth),
                key => Ok(Segment::Key(key.to_owned())),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Glob {
            text: text.to_owned(),
            segments,
        })
    }

    /// The glob as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Removes every value the glob reaches (array elements become `null`, so that the
    /// other elements keep their indexes); true when it reached any.
    pub fn remove(&self, doc: &mut Value) -> bool {
        remove_at(doc, &self.segments)
    }
}

fn segment_matches(seg: &Segment, key: &str) -> bool {
    match seg {
        Segment::Key(k) => k == key,
        Segment::Any | Segment::AnyDepth => true,
    }
}

fn remove_at(v: &mut Value, segs: &[Segment]) -> bool {
    let Some((first, rest)) = segs.split_first() else {
        return false;
    };
    let mut hit = false;
    if *first == Segment::AnyDepth {
        hit |= remove_at(v, rest);
        for child in children(v) {
            hit |= remove_at(child, segs);
        }
        return hit;
    }
    match v {
        Value::Object(map) if rest.is_empty() => {
            let before = map.len();
            map.retain(|k, _| !segment_matches(first, k));
            hit = map.len() != before;
        }
        Value::Object(map) => {
            for (k, child) in map.iter_mut() {
                if segment_matches(first, k) {
                    hit |= remove_at(child, rest);
                }
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter_mut().enumerate() {
                if segment_matches(first, &i.to_string()) {
                    if rest.is_empty() {
                        *child = Value::Null;
                        hit = true;
                    } else {
                        hit |= remove_at(child, rest);
                    }
                }
            }
        }
        _ => {}
    }
    hit
}

fn children(v: &mut Value) -> Vec<&mut Value> {
    match v {
        Value::Object(map) => map.values_mut().collect(),
        Value::Array(items) => items.iter_mut().collect(),
        _ => Vec::new(),
    }
}

/// Parses every glob of a list (`--ignore`), or says which one is wrong.
pub fn parse_globs(texts: &[String]) -> Result<Vec<Glob>, String> {
    texts.iter().map(|g| Glob::parse(g)).collect()
}

/// Compares client messages with recorded ones.
#[derive(Debug, Clone, Default)]
pub struct Matcher {
    ignore: Vec<Glob>,
    strict_initialize: bool,
    match_meta: bool,
}

impl Matcher {
    /// A matcher with the user's ignore globs.
    pub fn new(ignore: Vec<Glob>, strict_initialize: bool) -> Matcher {
        Matcher {
            ignore,
            strict_initialize,
            match_meta: false,
        }
    }

    /// Compares `params._meta` and `result._meta` too (`--match-meta`), less the
    /// [`VOLATILE_META_KEYS`]; by default both are left out.
    pub fn match_meta(mut self, on: bool) -> Matcher {
        self.match_meta = on;
        self
    }

    /// The message as compared: `id`/`jsonrpc` dropped, `_meta` (or, with `match_meta`,
    /// its volatile keys) and ignored paths removed, and `params` left empty by that (or
    /// sent as `{}`) removed: absent params and `{}` match.
    pub fn normalize(&self, msg: &Message) -> Value {
        let mut v = comparable(msg);
        if let Value::Object(map) = &mut v {
            map.remove("id");
            map.remove("jsonrpc");
            for member in ["params", "result"] {
                let Some(Value::Object(inner)) = map.get_mut(member) else {
                    continue;
                };
                if !self.match_meta {
                    inner.remove("_meta");
                } else if let Some(Value::Object(meta)) = inner.get_mut("_meta") {
                    meta.retain(|k, _| !VOLATILE_META_KEYS.contains(&k.as_str()));
                    if meta.is_empty() {
                        inner.remove("_meta");
                    }
                }
            }
        }
        for glob in &self.ignore {
            glob.remove(&mut v);
        }
        // Absent `params` and `{}` say the same (`tools/list` with or without them).
        if let Value::Object(map) = &mut v
            && map
                .get("params")
                .is_some_and(|p| p.as_object().is_some_and(|o| o.is_empty()))
        {
            map.remove("params");
        }
        v
    }

    /// True when `live` is what `recorded` expects.
    pub fn matches(&self, recorded: &Message, live: &Message) -> bool {
        self.decides(recorded, live)
            .unwrap_or_else(|| equal(&self.normalize(recorded), &self.normalize(live)))
    }

    /// What can be decided without comparing the normalized messages: `Some(false)` when
    /// kind, method or answered id differ, `Some(true)` for a non-strict handshake, `None`
    /// when [`equal`] on the normalized forms decides (replay keeps the recorded ones).
    pub fn decides(&self, recorded: &Message, live: &Message) -> Option<bool> {
        if recorded.kind() != live.kind() || recorded.method() != live.method() {
            return Some(false);
        }
        // The client's answer to a server request answers the id the replay sent, which is
        // the recorded one.
        if matches!(recorded.kind(), Kind::Response | Kind::Error) && recorded.id() != live.id() {
            return Some(false);
        }
        if !self.strict_initialize
            && recorded.kind() == Kind::Request
            && matches!(recorded.method(), Some("initialize" | "server/discover"))
        {
            return Some(true);
        }
        None
    }
}

/// An answer without its `result._meta`, unless `keep` (verify leaves it out of the
/// comparison unless `--match-meta`).
pub fn without_result_meta(mut answer: Value, keep: bool) -> Value {
    if !keep && let Some(Value::Object(result)) = answer.get_mut("result") {
        result.remove("_meta");
    }
    answer
}

/// A message's value as compared. One nested deeper than [`MAX_JSON_DEPTH`] is redacted by
/// the built-in rules first: its deep parts compare by their bytes, and a tape holds them
/// redacted (redacting a recorded message again changes nothing).
pub fn comparable(msg: &Message) -> Value {
    if !depth::too_deep(msg.raw()) {
        return msg.value();
    }
    let redacted = crate::redact::Redactor::default().message(msg.text());
    Message::new(redacted.into_owned()).value()
}

/// Deep equality where the recorded side may hold redaction placeholders.
pub fn equal(recorded: &Value, live: &Value) -> bool {
    equal_at(recorded, live, 1)
}

/// [`equal`] of values that sit `level` levels deep (the root is level 1): JSON parsed out
/// of a string keeps the whole within [`MAX_JSON_DEPTH`] ([`depth::shallow_within`]).
fn equal_at(recorded: &Value, live: &Value, level: usize) -> bool {
    match (recorded, live) {
        (Value::String(r), _) if r == REDACTED => true,
        (Value::String(r), Value::String(l)) if r.contains(REDACTED) => {
            // JSON carried in text was redacted as JSON: compare it as JSON.
            let room = (MAX_JSON_DEPTH + 1).saturating_sub(level);
            match (
                serde_json::from_str::<Value>(&depth::shallow_within(r, room)),
                serde_json::from_str::<Value>(&depth::shallow_within(l, room)),
            ) {
                (Ok(rv @ (Value::Object(_) | Value::Array(_))), Ok(lv)) => {
                    equal_at(&rv, &lv, level)
                }
                _ => wildcard(r, l),
            }
        }
        // By value: `1` matches `1.0`, but integers compare exactly (no f64 rounding).
        (Value::Number(a), Value::Number(b)) => {
            match (a.as_i64(), b.as_i64(), a.as_u64(), b.as_u64()) {
                (Some(x), Some(y), _, _) => x == y,
                (_, _, Some(x), Some(y)) => x == y,
                _ if a.is_f64() || b.is_f64() => a.as_f64() == b.as_f64(),
                _ => false,
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| equal_at(x, y, level + 1))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(k, x)| b.get(k).is_some_and(|y| equal_at(x, y, level + 1)))
        }
        _ => recorded == live,
    }
}

/// `pattern` with each `[REDACTED]` standing for any text (leftmost matching of the
/// literal parts between them, which is exact for a single kind of wildcard).
fn wildcard(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split(REDACTED).collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    true
}

/// Parses, in place, every string that holds a JSON object or array (tools often answer
/// JSON as `content[].text`), so that it compares, and its paths read, as JSON. The value
/// stays within [`MAX_JSON_DEPTH`] levels: what would go deeper reads as a marker.
pub fn expand_json_text(v: &mut Value) {
    expand_at(v, 1);
}

/// [`expand_json_text`] of a value `level` levels deep (the root is level 1).
fn expand_at(v: &mut Value, level: usize) {
    match v {
        Value::String(s) => {
            let t = s.trim_start();
            let room = (MAX_JSON_DEPTH + 1).saturating_sub(level);
            if (t.starts_with('{') || t.starts_with('['))
                && let Ok(parsed @ (Value::Object(_) | Value::Array(_))) =
                    serde_json::from_str::<Value>(&depth::shallow_within(s, room))
            {
                *v = parsed;
                expand_at(v, level);
            }
        }
        Value::Object(map) => map.values_mut().for_each(|c| expand_at(c, level + 1)),
        Value::Array(items) => items.iter_mut().for_each(|c| expand_at(c, level + 1)),
        _ => {}
    }
}

/// One place where two documents differ: `None` for a side where the path is absent.
///
/// As JSON, an absent side is a member left out and a JSON `null` is `null`: `{"path":
/// "result.x", "old": null}` is a recorded `null` where the live answer has nothing.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Difference {
    /// Dot path from the message root (`result.content.0.text.requestId`).
    pub path: String,
    /// The recorded value.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub old: Option<Value>,
    /// The live value.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub new: Option<Value>,
}

/// A member that is there is `Some`, even when it is `null` (serde's `Option` would make
/// that `None`, the absent side).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    <Value as serde::Deserialize>::deserialize(d).map(Some)
}

/// Every path where `new` differs from `old` (the recorded side may hold redaction
/// placeholders), deepest first reached, in document order.
pub fn differences(old: &Value, new: &Value, path: &str) -> Vec<Difference> {
    let mut out = Vec::new();
    diff_into(old, new, path, &mut out);
    out
}

fn diff_into(old: &Value, new: &Value, path: &str, out: &mut Vec<Difference>) {
    if equal(old, new) {
        return;
    }
    let join = |k: &str| {
        if path.is_empty() {
            k.to_owned()
        } else {
            format!("{path}.{k}")
        }
    };
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, av) in a {
                match b.get(k) {
                    Some(bv) => diff_into(av, bv, &join(k), out),
                    None => out.push(Difference {
                        path: join(k),
                        old: Some(av.clone()),
                        new: None,
                    }),
                }
            }
            for (k, bv) in b.iter().filter(|(k, _)| !a.contains_key(*k)) {
                out.push(Difference {
                    path: join(k),
                    old: None,
                    new: Some(bv.clone()),
                });
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for i in 0..a.len().max(b.len()) {
                match (a.get(i), b.get(i)) {
                    (Some(x), Some(y)) => diff_into(x, y, &join(&i.to_string()), out),
                    (x, y) => out.push(Difference {
                        path: join(&i.to_string()),
                        old: x.cloned(),
                        new: y.cloned(),
                    }),
                }
            }
        }
        _ => out.push(Difference {
            path: path.to_owned(),
            old: Some(old.clone()),
            new: Some(new.clone()),
        }),
    }
}

/// A unified diff of two JSON values, pretty-printed.
pub fn diff(expected: &Value, got: &Value, expected_label: &str, got_label: &str) -> String {
    let pretty = |v: &Value| format!("{v:#}\n");
    let (a, b) = (pretty(expected), pretty(got));
    similar::TextDiff::from_lines(&a, &b)
        .unified_diff()
        .context_radius(3)
        .header(expected_label, got_label)
        .to_string()
}

#[cfg(test)]
mod tests;
