//! Two JSON Schemas compared, keyword by keyword, into [`Found`] changes at dot paths
//! (`inputSchema.properties.mode.enum`).
//!
//! Bounded everywhere: at most [`MAX_SCHEMA_DEPTH`] nested schemas along a path and
//! [`MAX_SCHEMA_NODES`] compared per pair; a part past either bound, or a part the tape
//! reader already cut as too deep ([`crate::depth::TOO_DEEP`]), is one
//! [`Change::TooDeep`] finding when the two sides differ there. Local `$ref`s
//! (`#/$defs/x`, `#/definitions/x`, any JSON pointer into the same document) are
//! resolved, at most [`MAX_REF_HOPS`] in a chain; a pair of refs already being compared
//! up the path is a recursive schema and compares as equal there. Remote refs are never
//! fetched: two equal ones are the same, two different ones [`Change::Unanalysed`].

use serde_json::Value;

use super::rules::{self, Change, LOWER_BOUNDS, RESTRICTIONS, UPPER_BOUNDS};

/// Most schemas nested along one path that are compared.
pub const MAX_SCHEMA_DEPTH: usize = 48;

/// Most schema pairs compared for one pair of root schemas.
pub const MAX_SCHEMA_NODES: usize = 20_000;

/// Most `$ref`s followed in one chain (`a` → `b` → …).
pub const MAX_REF_HOPS: usize = 32;

/// Keywords that are compared only as a whole: a change is [`Change::Unanalysed`].
const WHOLE: &[&str] = &[
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "patternProperties",
    "propertyNames",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "prefixItems",
    "contains",
    "unevaluatedItems",
    "unevaluatedProperties",
];

/// One change found, where, and the two values there.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// What changed.
    pub change: Change,
    /// The dot path from the item (`inputSchema.properties.q.type`).
    pub path: String,
    /// The old value there (`None`: absent).
    pub old: Option<Value>,
    /// The new value there.
    pub new: Option<Value>,
}

/// A comparison of two root schemas.
pub struct Walk<'a> {
    old_root: &'a Value,
    new_root: &'a Value,
    /// Leave descriptions and titles out.
    structure_only: bool,
    nodes: usize,
    /// The `$ref` pairs being compared up the current path.
    refs: Vec<(String, String)>,
    found: Vec<Found>,
}

impl<'a> Walk<'a> {
    /// Compares `old` with `new` (each its own root for `$ref`s), the paths starting at
    /// `path`.
    pub fn compare(old: &'a Value, new: &'a Value, path: &str, structure_only: bool) -> Vec<Found> {
        let mut walk = Walk {
            old_root: old,
            new_root: new,
            structure_only,
            nodes: 0,
            refs: Vec::new(),
            found: Vec::new(),
        };
        walk.schema(old, new, path, 0);
        walk.found
    }

    fn push(&mut self, change: Change, path: String, old: Option<&Value>, new: Option<&Value>) {
        self.found.push(Found {
            change,
            path,
            old: old.cloned(),
            new: new.cloned(),
        });
    }

    fn schema(&mut self, old: &'a Value, new: &'a Value, path: &str, depth: usize) {
        self.nodes += 1;
        if depth >= MAX_SCHEMA_DEPTH || self.nodes > MAX_SCHEMA_NODES {
            if old != new && !self.found.iter().any(|f| f.change == Change::TooDeep) {
                self.push(Change::TooDeep, path.to_owned(), None, None);
            }
            return;
        }
        let (Some((old, old_ref)), Some((new, new_ref))) =
            (resolve(self.old_root, old), resolve(self.new_root, new))
        else {
            // A remote ref, or a local one that points nowhere: compared as written.
            if old != new {
                self.push(
                    Change::Unanalysed,
                    format!("{path}.$ref"),
                    Some(old),
                    Some(new),
                );
            }
            return;
        };
        let pair = (old_ref.unwrap_or_default(), new_ref.unwrap_or_default());
        let recursive = !pair.0.is_empty() && self.refs.contains(&pair);
        if recursive {
            return;
        }
        let pushed = !pair.0.is_empty() || !pair.1.is_empty();
        if pushed {
            self.refs.push(pair);
        }
        self.keywords(old, new, path, depth);
        if pushed {
            self.refs.pop();
        }
    }

    fn keywords(&mut self, old: &'a Value, new: &'a Value, path: &str, depth: usize) {
        if is_marker(old) || is_marker(new) {
            if old != new {
                self.push(Change::TooDeep, path.to_owned(), Some(old), Some(new));
            }
            return;
        }
        let (o, n) = (as_schema(old), as_schema(new));
        let (Some(o), Some(n)) = (o, n) else {
            if old != new {
                self.push(Change::Unanalysed, path.to_owned(), Some(old), Some(new));
            }
            return;
        };
        let at = |k: &str| format!("{path}.{k}");
        if !self.structure_only {
            for k in ["title", "description"] {
                if o.get(k) != n.get(k) {
                    self.push(Change::Wording, at(k), o.get(k), n.get(k));
                }
            }
        }
        if o.get("default") != n.get("default") {
            self.push(
                Change::DefaultChanged,
                at("default"),
                o.get("default"),
                n.get("default"),
            );
        }
        if let Some(c) = rules::type_change(o.get("type"), n.get("type")) {
            self.push(c, at("type"), o.get("type"), n.get("type"));
        }
        self.enums(o, n, path);
        for (keys, upper) in [(UPPER_BOUNDS, true), (LOWER_BOUNDS, false)] {
            for &k in keys {
                if let Some(c) = rules::bound_change(upper, o.get(k), n.get(k)) {
                    self.push(c, at(k), o.get(k), n.get(k));
                }
            }
        }
        for &k in RESTRICTIONS {
            if let Some(c) = rules::restriction_change(k, o.get(k), n.get(k)) {
                self.push(c, at(k), o.get(k), n.get(k));
            }
        }
        let unique =
            |m: &serde_json::Map<String, Value>| m.get("uniqueItems") == Some(&Value::Bool(true));
        if unique(o) != unique(n) {
            let c = if unique(n) {
                Change::Tightened
            } else {
                Change::Loosened
            };
            self.push(
                c,
                at("uniqueItems"),
                o.get("uniqueItems"),
                n.get("uniqueItems"),
            );
        }
        self.object(o, n, path, depth);
        if let (Some(a), Some(b)) = (o.get("items"), n.get("items")) {
            self.schema(a, b, &at("items"), depth + 1);
        } else if o.get("items") != n.get("items") {
            let c = if n.get("items").is_some() {
                Change::Tightened
            } else {
                Change::Loosened
            };
            self.push(c, at("items"), o.get("items"), n.get("items"));
        }
        for k in ["anyOf", "oneOf"] {
            self.variants(o.get(k), n.get(k), &at(k));
        }
        for &k in WHOLE {
            let (a, b) = (
                o.get(k).map(|v| self.plain(v)),
                n.get(k).map(|v| self.plain(v)),
            );
            if a != b {
                self.push(Change::Unanalysed, at(k), o.get(k), n.get(k));
            }
        }
    }

    /// `enum` and `const` (a one-value enum): values gone and values come.
    fn enums(
        &mut self,
        o: &'a serde_json::Map<String, Value>,
        n: &'a serde_json::Map<String, Value>,
        path: &str,
    ) {
        let values =
            |m: &'a serde_json::Map<String, Value>| -> Option<(Vec<&'a Value>, &'static str)> {
                if let Some(Value::Array(a)) = m.get("enum") {
                    return Some((a.iter().collect(), "enum"));
                }
                m.get("const").map(|c| (vec![c], "const"))
            };
        match (values(o), values(n)) {
            (None, None) => {}
            (None, Some((_, k))) => {
                self.push(Change::Tightened, format!("{path}.{k}"), None, n.get(k))
            }
            (Some((_, k)), None) => {
                self.push(Change::Loosened, format!("{path}.{k}"), o.get(k), None)
            }
            (Some((was, k)), Some((is, _))) => {
                for v in was.iter().filter(|v| !is.contains(v)) {
                    self.push(
                        Change::EnumValueRemoved,
                        format!("{path}.{k}"),
                        Some(v),
                        None,
                    );
                }
                for v in is.iter().filter(|v| !was.contains(v)) {
                    self.push(Change::EnumValueAdded, format!("{path}.{k}"), None, Some(v));
                }
            }
        }
    }

    /// `properties`, `required`, `additionalProperties`.
    fn object(
        &mut self,
        o: &'a serde_json::Map<String, Value>,
        n: &'a serde_json::Map<String, Value>,
        path: &str,
        depth: usize,
    ) {
        let props = |m: &'a serde_json::Map<String, Value>| match m.get("properties") {
            Some(Value::Object(p)) => p,
            _ => empty(),
        };
        let (op, np) = (props(o), props(n));
        let (or, nr) = (required(o), required(n));
        let closed = |m: &serde_json::Map<String, Value>| {
            m.get("additionalProperties") == Some(&Value::Bool(false))
                || m.get("unevaluatedProperties") == Some(&Value::Bool(false))
        };
        for (name, v) in op {
            let at = format!("{path}.properties.{name}");
            match np.get(name) {
                None if closed(n) => self.push(Change::PropertyRemovedClosed, at, Some(v), None),
                None => self.push(Change::PropertyRemoved, at, Some(v), None),
                Some(w) => self.schema(v, w, &at, depth + 1),
            }
        }
        for (name, w) in np.iter().filter(|(k, _)| !op.contains_key(*k)) {
            let at = format!("{path}.properties.{name}");
            if nr.contains(&name.as_str()) && !or.contains(&name.as_str()) {
                self.push(Change::RequiredAdded, at, None, Some(w));
            } else {
                self.push(Change::PropertyAdded, at, None, Some(w));
            }
        }
        let new_property = |k: &str| np.contains_key(k) && !op.contains_key(k);
        let gone_property = |k: &str| op.contains_key(k) && !np.contains_key(k);
        for k in nr.iter().filter(|k| !or.contains(k) && !new_property(k)) {
            self.push(
                Change::RequiredAdded,
                format!("{path}.required"),
                None,
                Some(&Value::String((*k).to_owned())),
            );
        }
        for k in or.iter().filter(|k| !nr.contains(k) && !gone_property(k)) {
            self.push(
                Change::RequiredRemoved,
                format!("{path}.required"),
                Some(&Value::String((*k).to_owned())),
                None,
            );
        }
        let at = format!("{path}.additionalProperties");
        // Absent and `true` are the same open schema.
        let open = |v: Option<&'a Value>| v.filter(|v| **v != Value::Bool(true));
        match (
            open(o.get("additionalProperties")),
            open(n.get("additionalProperties")),
        ) {
            (a, b) if a == b => {}
            (_, Some(Value::Bool(false))) => self.push(
                Change::Tightened,
                at,
                o.get("additionalProperties"),
                n.get("additionalProperties"),
            ),
            (Some(Value::Bool(false)), _) => self.push(
                Change::Loosened,
                at,
                o.get("additionalProperties"),
                n.get("additionalProperties"),
            ),
            (Some(a @ Value::Object(_)), Some(b @ Value::Object(_))) => {
                self.schema(a, b, &at, depth + 1)
            }
            (a, b) => {
                // An open schema (absent, `true`) against a schema for the extra members.
                let c = if b.is_none() {
                    Change::Loosened
                } else {
                    Change::Tightened
                };
                self.push(c, at, a, b);
            }
        }
    }

    /// `anyOf`/`oneOf`: each variant kept, gone or come, compared whole.
    fn variants(&mut self, old: Option<&'a Value>, new: Option<&'a Value>, path: &str) {
        let list = |v: Option<&'a Value>| -> Vec<Value> {
            v.and_then(|v| v.as_array())
                .map(|a| a.iter().map(|x| self.plain(x)).collect())
                .unwrap_or_default()
        };
        let (was, is) = (list(old), list(new));
        if was == is {
            return;
        }
        if old.is_none() || new.is_none() {
            let c = if new.is_some() {
                Change::Tightened
            } else {
                Change::Loosened
            };
            return self.push(c, path.to_owned(), old, new);
        }
        for v in was.iter().filter(|v| !is.contains(v)) {
            self.push(Change::TypeNarrowed, path.to_owned(), Some(v), None);
        }
        for v in is.iter().filter(|v| !was.contains(v)) {
            self.push(Change::TypeWidened, path.to_owned(), None, Some(v));
        }
    }

    /// A schema as compared whole: without descriptions and titles when structure-only.
    fn plain(&self, v: &Value) -> Value {
        if self.structure_only {
            structure(v)
        } else {
            v.clone()
        }
    }
}

/// The names a schema requires.
fn required(m: &serde_json::Map<String, Value>) -> Vec<&str> {
    m.get("required")
        .and_then(|r| r.as_array())
        .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default()
}

/// True for the marker the tape reader leaves for a part nested too deep.
fn is_marker(v: &Value) -> bool {
    v.as_str()
        .is_some_and(|s| s.starts_with(crate::depth::TOO_DEEP))
}

/// A schema's keywords: `true` is the empty schema; `false` (nothing validates) and
/// anything that is not an object are `None`.
fn as_schema(v: &Value) -> Option<&serde_json::Map<String, Value>> {
    match v {
        Value::Object(m) => Some(m),
        Value::Bool(true) => Some(empty()),
        _ => None,
    }
}

/// The empty schema's keywords.
fn empty() -> &'static serde_json::Map<String, Value> {
    static EMPTY: std::sync::OnceLock<serde_json::Map<String, Value>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(serde_json::Map::new)
}

/// `v` with its local `$ref` chain followed in `root` (and the last ref followed, if any);
/// `None` for a remote ref, one that points nowhere, or a chain too long.
fn resolve<'v>(root: &'v Value, mut v: &'v Value) -> Option<(&'v Value, Option<String>)> {
    let mut last = None;
    for _ in 0..=MAX_REF_HOPS {
        let Some(r) = v.get("$ref").and_then(|r| r.as_str()) else {
            return Some((v, last));
        };
        let pointer = r.strip_prefix('#')?;
        v = root.pointer(pointer)?;
        last = Some(r.to_owned());
    }
    None
}

/// A schema without `description` and `title` at any level it has schemas (a property
/// named `title` stays): what `--structure-only` compares. Bounded by the value's own
/// depth ([`crate::depth::MAX_JSON_DEPTH`]).
pub fn structure(v: &Value) -> Value {
    let Value::Object(m) = v else {
        return v.clone();
    };
    let mut out = serde_json::Map::new();
    for (k, x) in m {
        let kept = match k.as_str() {
            "description" | "title" => continue,
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                match x {
                    Value::Object(p) => {
                        Value::Object(p.iter().map(|(n, s)| (n.clone(), structure(s))).collect())
                    }
                    other => other.clone(),
                }
            }
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => match x {
                Value::Array(a) => Value::Array(a.iter().map(structure).collect()),
                other => other.clone(),
            },
            "items"
            | "additionalProperties"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "propertyNames"
            | "unevaluatedItems"
            | "unevaluatedProperties" => structure(x),
            _ => x.clone(),
        };
        out.insert(k.clone(), kept);
    }
    Value::Object(out)
}
