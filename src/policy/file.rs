//! The policy file (`--policy FILE`, `MCPTAPE_POLICY`): TOML, read whole and checked
//! before any server starts.
//!
//! ```toml
//! default = "allow"
//!
//! [[rule]]
//! id = "no-destructive"
//! decision = "deny"
//! annotations = { destructiveHint = true }
//!
//! [[rule]]
//! id = "etc-is-read-only"
//! decision = "deny"
//! tool = ["write_*", "edit_file"]
//! args = { path = { glob = "/etc/*" } }
//! ```
//!
//! `default` is required: a file says what happens to a call no rule matches. Every key
//! is checked (an unknown one is an error, as a misspelt matcher would otherwise match
//! everything). Errors name the file, the line, and the rule's id when there is one. Only
//! a regular file is read (a FIFO or a device would block the open for ever), at most
//! [`MAX_FILE_BYTES`], with at most [`MAX_RULES`] rules.

use std::path::Path;

use serde_json::Value;
use toml_edit::{Item, TableLike};

use crate::error::{Error, Result};
use crate::policy::args::{self, ArgPath, ArgTest, TESTS};
use crate::policy::index::{HINTS, Hint};
use crate::policy::rule::{Globs, Policy, Rule};
use crate::tape::policy::{DECISIONS, Decision};

/// The largest policy file read.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// The most rules a policy has.
pub const MAX_RULES: usize = 10_000;

/// The deepest literal value (`equals = …`) a rule holds.
pub const MAX_VALUE_DEPTH: usize = 64;

/// The keys of a `[[rule]]`.
const RULE_KEYS: [&str; 8] = [
    "id",
    "decision",
    "server",
    "tool",
    "method",
    "args",
    "annotations",
    "listed",
];

impl Policy {
    /// Reads and checks the policy file `path` (`--policy`).
    pub fn load(path: &Path) -> Result<Policy> {
        Policy::load_from(path, "--policy")
    }

    /// As [`Policy::load`], the file named as coming from `from` (`--policy`,
    /// `MCPTAPE_POLICY`) in errors.
    pub fn load_from(path: &Path, from: &str) -> Result<Policy> {
        let shown = crate::term::line(&path.display().to_string()).into_owned();
        let source = format!("{from} `{shown}`");
        let text = read(path, &source)?;
        parse(&text, &source).map_err(|what| {
            Error::Usage(crate::term::line(&format!("{source}: {what}")).into_owned())
        })
    }
}

fn read(path: &Path, source: &str) -> Result<String> {
    use std::io::Read;
    let io = |source_err| Error::Io {
        what: format!("cannot read {source}"),
        source: source_err,
    };
    // A FIFO or a device would block the open or the read for ever: only a regular file
    // (a symlink to one is fine: it is only read) is read.
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_file() {
        return Err(Error::Usage(format!("{source}: not a regular file")));
    }
    let file = std::fs::File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(Error::Usage(format!(
            "{source}: larger than {MAX_FILE_BYTES} bytes"
        )));
    }
    String::from_utf8(bytes).map_err(|_| Error::Usage(format!("{source}: not UTF-8 text")))
}

/// Where a text's lines start, to name the line of a byte offset.
struct Lines(Vec<usize>);

impl Lines {
    fn of(text: &str) -> Lines {
        Lines(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i)
                .collect(),
        )
    }

    /// The line of byte `at`, from 1.
    fn line(&self, at: usize) -> usize {
        self.0.partition_point(|&nl| nl < at) + 1
    }

    /// The line of a span, or of the fallback when it has none.
    fn of_span(&self, span: Option<std::ops::Range<usize>>, fallback: usize) -> usize {
        span.map_or(fallback, |s| self.line(s.start))
    }
}

/// The policy of `text`, from `source` (named in errors by the caller): an error says
/// the line and what is wrong.
pub fn parse(text: &str, source: &str) -> std::result::Result<Policy, String> {
    let doc = toml_edit::Document::parse(text).map_err(|e| {
        let line = e.span().map_or(String::new(), |s| {
            format!("line {}: ", Lines::of(text).line(s.start))
        });
        format!("{line}not TOML: {}", e.message().trim())
    })?;
    let lines = Lines::of(text);
    let top = doc.as_table();
    let key_line = |t: &dyn TableLike, k: &str, fallback: usize| {
        lines.of_span(t.key(k).and_then(toml_edit::Key::span), fallback)
    };
    for (k, _) in top.iter() {
        if k != "default" && k != "rule" {
            return Err(format!(
                "line {}: unknown key `{k}`: a policy file holds `default` and [[rule]] tables",
                key_line(top, k, 1)
            ));
        }
    }
    let default = match top.get("default") {
        None => {
            return Err(
                "`default` is missing: say what a call no rule matches gets, e.g. `default = \"allow\"` or `default = \"deny\"`"
                    .into(),
            );
        }
        Some(item) => decision(item)
            .map_err(|e| format!("line {}: `default`: {e}", key_line(top, "default", 1)))?,
    };
    let mut rules: Vec<Rule> = Vec::new();
    if let Some(item) = top.get("rule") {
        let Some(tables) = item.as_array_of_tables() else {
            return Err(format!(
                "line {}: `rule` is a list of [[rule]] tables",
                key_line(top, "rule", 1)
            ));
        };
        if tables.len() > MAX_RULES {
            return Err(format!("{} rules: at most {MAX_RULES}", tables.len()));
        }
        for (n, table) in tables.iter().enumerate() {
            let first_key = table.iter().next().map(|(k, _)| k.to_owned());
            let fallback = first_key.as_deref().map_or(1, |k| key_line(table, k, 1));
            let line = lines.of_span(table.span(), fallback);
            let rule = rule(table, n + 1, line, &|k| key_line(table, k, line))?;
            if let Some(other) = rules.iter().find(|r| r.id == rule.id) {
                return Err(format!(
                    "line {line}: rule `{}`: the id is already the rule's of line {}",
                    rule.id, other.line
                ));
            }
            rules.push(rule);
        }
    }
    Ok(Policy {
        source: source.to_owned(),
        default,
        rules,
    })
}

/// One `[[rule]]` (the `n`th, at `line`; `key_line` finds a key's line).
fn rule(
    table: &toml_edit::Table,
    n: usize,
    line: usize,
    key_line: &dyn Fn(&str) -> usize,
) -> std::result::Result<Rule, String> {
    let id = match table.get("id") {
        Some(item) => match item.as_str() {
            Some(id) if !id.trim().is_empty() => id.to_owned(),
            _ => {
                return Err(format!(
                    "line {}: rule {n}: `id` is a non-empty string",
                    key_line("id")
                ));
            }
        },
        None => return Err(format!("line {line}: rule {n} has no `id`")),
    };
    let at = |k: &str, what: String| format!("line {}: rule `{id}`: `{k}`: {what}", key_line(k));
    for (k, _) in table.iter() {
        if !RULE_KEYS.contains(&k) {
            return Err(at(
                k,
                format!("unknown key: a rule holds {}", RULE_KEYS.join(", ")),
            ));
        }
    }
    let decision = match table.get("decision") {
        Some(item) => decision(item).map_err(|e| at("decision", e))?,
        None => return Err(format!("line {line}: rule `{id}` has no `decision`")),
    };
    let globs = |k: &str| -> std::result::Result<Option<Globs>, String> {
        table
            .get(k)
            .map(|item| globs(item).map_err(|e| at(k, e)))
            .transpose()
    };
    let mut rule = Rule {
        server: globs("server")?,
        tool: globs("tool")?,
        method: globs("method")?,
        id: id.clone(),
        line,
        decision,
        args: Vec::new(),
        annotations: Vec::new(),
        listed: None,
    };
    if let Some(item) = table.get("listed") {
        rule.listed = Some(
            item.as_bool()
                .ok_or_else(|| at("listed", "true or false".into()))?,
        );
    }
    if let Some(item) = table.get("annotations") {
        let t = item.as_table_like().ok_or_else(|| {
            at(
                "annotations",
                "a table, e.g. { destructiveHint = true }".into(),
            )
        })?;
        for (k, v) in t.iter() {
            let hint = Hint::parse(k).ok_or_else(|| {
                let names: Vec<&str> = HINTS.iter().map(|h| h.as_str()).collect();
                at(
                    "annotations",
                    format!("`{k}` is not an annotation: {}", names.join(", ")),
                )
            })?;
            let want = v
                .as_bool()
                .ok_or_else(|| at("annotations", format!("`{k}`: true or false")))?;
            rule.annotations.push((hint, want));
        }
    }
    if let Some(item) = table.get("args") {
        let t = item.as_table_like().ok_or_else(|| {
            at(
                "args",
                "a table of argument paths, e.g. { path = { glob = \"/etc/*\" } }".into(),
            )
        })?;
        rule.args = arg_matchers(t).map_err(|e| at("args", e))?;
    }
    Ok(rule)
}

/// A decision's word.
fn decision(item: &Item) -> std::result::Result<Decision, String> {
    let words: Vec<&str> = DECISIONS.iter().map(|d| d.as_str()).collect();
    let word = item
        .as_str()
        .ok_or_else(|| format!("a decision: {}", words.join(", ")))?;
    Decision::parse(word).ok_or_else(|| format!("`{word}` is not a decision: {}", words.join(", ")))
}

/// A glob or a list of globs.
fn globs(item: &Item) -> std::result::Result<Globs, String> {
    let texts: Vec<&str> = match (item.as_str(), item.as_array()) {
        (Some(s), _) => vec![s],
        (None, Some(list)) if !list.is_empty() => list
            .iter()
            .map(|v| v.as_str().ok_or("a list of strings (globs)"))
            .collect::<std::result::Result<_, _>>()?,
        _ => return Err("a glob or a non-empty list of globs".into()),
    };
    texts
        .into_iter()
        .map(|t| args::glob(t).map(|g| (t.to_owned(), g)))
        .collect::<std::result::Result<_, _>>()
        .map(Globs)
}

/// The `args` table: a path (a key, or keys nested as TOML tables: `options.recursive =
/// true` is the path `options.recursive`) and its tests, or a literal it must equal.
fn arg_matchers(
    table: &dyn TableLike,
) -> std::result::Result<Vec<(ArgPath, Vec<ArgTest>)>, String> {
    let mut out = Vec::new();
    let mut stack: Vec<(String, &dyn TableLike)> = vec![(String::new(), table)];
    while let Some((prefix, t)) = stack.pop() {
        if t.is_empty() && !prefix.is_empty() {
            return Err(format!("`{prefix}`: an empty table tests nothing"));
        }
        for (k, v) in t.iter() {
            let path_text = if prefix.is_empty() {
                k.to_owned()
            } else {
                format!("{prefix}.{k}")
            };
            if path_text.len() > 4096 {
                return Err("an argument path is at most 4096 bytes".into());
            }
            match v.as_table_like() {
                Some(inner) => {
                    let keys: Vec<&str> = inner.iter().map(|(k, _)| k).collect();
                    let tests = keys.iter().filter(|k| TESTS.contains(k)).count();
                    if tests == 0 && !keys.is_empty() {
                        if let Some(e) = misspelt_test(&path_text, inner) {
                            return Err(e);
                        }
                        stack.push((path_text, inner));
                        continue;
                    }
                    if tests != keys.len() || keys.is_empty() {
                        return Err(format!(
                            "`{path_text}`: a table of tests ({}) or a literal; to match an object, `equals = {{ … }}`",
                            TESTS.join(", ")
                        ));
                    }
                    let path = ArgPath::parse(&path_text)?;
                    let tests = inner
                        .iter()
                        .map(|(name, item)| {
                            test(name, item).map_err(|e| format!("`{path_text}`: `{name}`: {e}"))
                        })
                        .collect::<std::result::Result<Vec<_>, _>>()?;
                    out.push((path, tests));
                }
                None => {
                    let path = ArgPath::parse(&path_text)?;
                    let value = json(v, 0).map_err(|e| format!("`{path_text}`: {e}"))?;
                    out.push((path, vec![ArgTest::Equals(value)]));
                }
            }
        }
    }
    Ok(out)
}

/// A key of a nested `args` table that looks like a misspelt test (`{ glb = "/etc/*" }`,
/// `{ Gt = 5 }`): read as a path it would name an argument that is never there, and the
/// rule would silently never apply. A real argument of such a name is written as one
/// quoted key: `'path.glb' = "…"`.
fn misspelt_test(prefix: &str, inner: &dyn TableLike) -> Option<String> {
    inner.iter().find_map(|(k, v)| {
        if v.is_table_like() {
            return None;
        }
        let lower = k.to_ascii_lowercase();
        let near = TESTS.iter().find(|t| {
            lower == **t || (k.len() >= 2 && strsim::damerau_levenshtein(&lower, t) <= 1)
        })?;
        Some(format!(
            "`{prefix}.{k}`: `{k}` is not a test; did you mean `{near}`? (an argument named \
             `{k}` is written as one quoted key: `'{prefix}.{k}' = …`)"
        ))
    })
}

/// One test of a table of tests.
fn test(name: &str, item: &Item) -> std::result::Result<ArgTest, String> {
    let number = || -> std::result::Result<args::Bound, String> {
        match item.as_value() {
            Some(toml_edit::Value::Integer(i)) => Ok(args::Bound::Int(*i.value())),
            Some(toml_edit::Value::Float(f)) if f.value().is_finite() => {
                Ok(args::Bound::Float(*f.value()))
            }
            _ => Err("a finite number".into()),
        }
    };
    let text = || item.as_str().ok_or_else(|| "a string".to_owned());
    Ok(match name {
        "equals" => ArgTest::Equals(json(item, 0)?),
        "glob" => ArgTest::Glob(args::glob(text()?)?),
        "regex" => ArgTest::Regex(args::regex(text()?)?),
        "gt" => ArgTest::Gt(number()?),
        "ge" => ArgTest::Ge(number()?),
        "lt" => ArgTest::Lt(number()?),
        "le" => ArgTest::Le(number()?),
        "exists" => ArgTest::Exists(item.as_bool().ok_or("true or false")?),
        other => return Err(format!("`{other}` is not a test: {}", TESTS.join(", "))),
    })
}

/// A TOML value as JSON; a date-time, a non-finite float or a value nested deeper than
/// [`MAX_VALUE_DEPTH`] is an error.
fn json(item: &Item, depth: usize) -> std::result::Result<Value, String> {
    if depth > MAX_VALUE_DEPTH {
        return Err(format!("nested deeper than {MAX_VALUE_DEPTH} levels"));
    }
    if let Some(t) = item.as_table_like() {
        let mut map = serde_json::Map::new();
        for (k, v) in t.iter() {
            map.insert(k.to_owned(), json(v, depth + 1)?);
        }
        return Ok(Value::Object(map));
    }
    let Some(value) = item.as_value() else {
        return Err("a value".into());
    };
    value_json(value, depth)
}

fn value_json(value: &toml_edit::Value, depth: usize) -> std::result::Result<Value, String> {
    use toml_edit::Value as T;
    if depth > MAX_VALUE_DEPTH {
        return Err(format!("nested deeper than {MAX_VALUE_DEPTH} levels"));
    }
    Ok(match value {
        T::String(s) => Value::String(s.value().clone()),
        T::Integer(i) => Value::from(*i.value()),
        T::Float(f) => serde_json::Number::from_f64(*f.value())
            .map(Value::Number)
            .ok_or("a float that JSON cannot hold (nan, inf)")?,
        T::Boolean(b) => Value::Bool(*b.value()),
        T::Datetime(_) => return Err("a date-time is no JSON value: quote it".into()),
        T::Array(a) => Value::Array(
            a.iter()
                .map(|v| value_json(v, depth + 1))
                .collect::<std::result::Result<_, _>>()?,
        ),
        T::InlineTable(t) => {
            let mut map = serde_json::Map::new();
            for (k, v) in t.iter() {
                map.insert(k.to_owned(), value_json(v, depth + 1)?);
            }
            Value::Object(map)
        }
    })
}

#[cfg(test)]
mod tests;
