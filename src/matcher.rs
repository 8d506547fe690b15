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
//! - a recorded `"[REDACTED]"` matches any value there, and a `[REDACTED]` inside a
//!   recorded string matches any text in its place;
//! - numbers compare by value (`1` matches `1.0`).
//!
//! `initialize` and `server/discover` match on method alone unless strict: client
//! versions and capabilities differ between runs.

use serde_json::Value;

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
pub const REDACTED: &str = "[REDACTED]";

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
    /// its volatile keys) and ignored paths removed.
    pub fn normalize(&self, msg: &Message) -> Value {
        let mut v = msg.value();
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

/// Deep equality where the recorded side may hold redaction placeholders.
pub fn equal(recorded: &Value, live: &Value) -> bool {
    match (recorded, live) {
        (Value::String(r), _) if r == REDACTED => true,
        (Value::String(r), Value::String(l)) if r.contains(REDACTED) => {
            // JSON carried in text was redacted as JSON: compare it as JSON.
            match (
                serde_json::from_str::<Value>(r),
                serde_json::from_str::<Value>(l),
            ) {
                (Ok(rv @ (Value::Object(_) | Value::Array(_))), Ok(lv)) => equal(&rv, &lv),
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
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| equal(x, y))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(k, x)| b.get(k).is_some_and(|y| equal(x, y)))
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
/// JSON as `content[].text`), so that it compares, and its paths read, as JSON.
pub fn expand_json_text(v: &mut Value) {
    match v {
        Value::String(s) => {
            let t = s.trim_start();
            if (t.starts_with('{') || t.starts_with('['))
                && let Ok(parsed @ (Value::Object(_) | Value::Array(_))) =
                    serde_json::from_str::<Value>(s)
            {
                *v = parsed;
                expand_json_text(v);
            }
        }
        Value::Object(map) => map.values_mut().for_each(expand_json_text),
        Value::Array(items) => items.iter_mut().for_each(expand_json_text),
        _ => {}
    }
}

/// One place where two documents differ: `None` for a side where the path is absent.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Difference {
    /// Dot path from the message root (`result.content.0.text.requestId`).
    pub path: String,
    /// The recorded value.
    pub old: Option<Value>,
    /// The live value.
    pub new: Option<Value>,
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
mod tests {
    use super::*;
    use serde_json::json;

    fn msg(v: Value) -> Message {
        Message::new(v.to_string())
    }

    #[test]
    fn volatile_meta_and_ids_are_not_compared() {
        let m = Matcher::default();
        let rec = msg(json!({"jsonrpc":"2.0","id":3,"method":"tools/call",
            "params":{"name":"echo","arguments":{"x":1},"_meta":{"progressToken":3}}}));
        let live = msg(json!({"jsonrpc":"2.0","id":"abc","method":"tools/call",
            "params":{"name":"echo","arguments":{"x":1.0}}}));
        assert!(m.matches(&rec, &live));
        let other = msg(json!({"jsonrpc":"2.0","id":3,"method":"tools/call",
            "params":{"name":"echo","arguments":{"x":2}}}));
        assert!(!m.matches(&rec, &other));
    }

    #[test]
    fn meta_is_ignored_by_default_and_compared_with_the_flag() {
        let call = |id: &str, extra: Value| {
            msg(json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
                "params":{"name":"echo","arguments":{"x":1},
                    "_meta":{"claudecode/toolUseId":id,"progressToken":id,"extra":extra}}}))
        };
        let (rec, live) = (call("toolu_01", json!(1)), call("toolu_02", json!(1)));
        let bare = msg(json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
            "params":{"name":"echo","arguments":{"x":1}}}));
        let m = Matcher::default();
        assert!(
            m.matches(&rec, &live),
            "an agent's own ids are not compared"
        );
        assert!(m.matches(&rec, &bare) && m.matches(&bare, &rec));
        let answer = |meta: Value| msg(json!({"id":0,"result":{"action":"accept","_meta":meta}}));
        assert!(m.matches(&answer(json!({"a":1})), &answer(json!({"a":2}))));

        let strict = Matcher::default().match_meta(true);
        assert!(
            !strict.matches(&rec, &live),
            "--match-meta compares `_meta`"
        );
        assert!(!strict.matches(&rec, &bare));
        assert!(!strict.matches(&answer(json!({"a":1})), &answer(json!({"a":2}))));
        // The progress token is rewritten, not compared, even with --match-meta.
        let token = |t: &str| {
            msg(
                json!({"id":1,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":t}}}),
            )
        };
        assert!(strict.matches(&token("a"), &token("b")));
        let bare = msg(json!({"id":1,"method":"tools/call","params":{"name":"echo"}}));
        assert!(strict.matches(&token("a"), &bare));
        // verify's answers.
        let answer = json!({"result":{"content":[],"_meta":{"x":1}}});
        assert_eq!(
            without_result_meta(answer.clone(), false),
            json!({"result":{"content":[]}})
        );
        assert_eq!(without_result_meta(answer.clone(), true), answer);
    }

    #[test]
    fn kind_and_method_must_agree() {
        let m = Matcher::default();
        let req = msg(json!({"id":1,"method":"a"}));
        assert!(!m.matches(&req, &msg(json!({"method":"a"}))));
        assert!(!m.matches(&req, &msg(json!({"id":1,"method":"b"}))));
    }

    #[test]
    fn initialize_matches_on_method_unless_strict() {
        let rec =
            msg(json!({"id":0,"method":"initialize","params":{"clientInfo":{"version":"1"}}}));
        let live =
            msg(json!({"id":1,"method":"initialize","params":{"clientInfo":{"version":"2"}}}));
        assert!(Matcher::default().matches(&rec, &live));
        assert!(!Matcher::new(vec![], true).matches(&rec, &live));
    }

    #[test]
    fn ignore_globs() {
        let globs = ["params.arguments.ts", "**.requestId", "params.list.*.t"]
            .map(|g| Glob::parse(g).expect("glob"));
        let m = Matcher::new(globs.to_vec(), false);
        let rec = msg(
            json!({"method":"n","params":{"arguments":{"ts":1,"a":{"requestId":"x"}},
            "list":[{"t":1,"k":1}]}}),
        );
        let live = msg(
            json!({"method":"n","params":{"arguments":{"ts":2,"a":{"requestId":"y"}},
            "list":[{"t":2,"k":1}]}}),
        );
        assert!(m.matches(&rec, &live));
        assert!(Glob::parse("a..b").is_err());
    }

    #[test]
    fn redacted_matches_whole_values_and_spans() {
        assert!(equal(
            &json!({"k": "[REDACTED]"}),
            &json!({"k": {"any": 1}})
        ));
        assert!(equal(
            &json!("Bearer [REDACTED] at [REDACTED]!"),
            &json!("Bearer abc at home!")
        ));
        assert!(!equal(&json!("Bearer [REDACTED]!"), &json!("Basic abc!")));
        assert!(!equal(&json!("x[REDACTED]x"), &json!("x")));
        assert!(
            !equal(&json!({"k": "v"}), &json!({"k": "[REDACTED]"})),
            "only the tape side is a pattern"
        );
    }

    #[test]
    fn differences_have_paths_into_json_text() {
        let mut old = json!({"result": {"content": [{"text": "{\"a\":1,\"b\":2}"}], "x": 1}});
        let mut new = json!({"result": {"content": [{"text": "{\"a\":1,\"b\":3}"}], "y": 2}});
        expand_json_text(&mut old);
        expand_json_text(&mut new);
        let d = differences(&old, &new, "");
        let paths: Vec<&str> = d.iter().map(|d| d.path.as_str()).collect();
        assert_eq!(paths, ["result.content.0.text.b", "result.x", "result.y"]);
        assert_eq!(d[1].new, None);
        assert!(
            Glob::parse("result.content.*.text.b")
                .expect("glob")
                .remove(&mut new)
        );
        assert!(!Glob::parse("result.nope").expect("glob").remove(&mut new));
    }

    #[test]
    fn diff_is_unified_and_labelled() {
        let d = diff(&json!({"a": 1}), &json!({"a": 2}), "expected", "got");
        assert!(d.contains("--- expected") && d.contains("+++ got"), "{d}");
        assert!(
            d.contains("-  \"a\": 1") && d.contains("+  \"a\": 2"),
            "{d}"
        );
    }
}
