//! A rule's `args` matchers: a JSON path into a call's arguments (`path`,
//! `options.recursive`, `items[0].name`, `items[*].name`, `["a.b"]`) and the tests a value
//! there must pass (`equals`, `glob`, `regex`, `gt`, `ge`, `lt`, `le`, `exists`).
//!
//! A path names zero or more values (`[*]` names every element of an array): a test
//! passes when one of them passes it, and `exists = false` when there is none. Values are
//! compared as JSON: numbers by value (`1` equals `1.0`), strings exactly (no path or case
//! normalization: `/etc/../etc/passwd` is not `/etc/passwd` — see docs/POLICY.md).
//! Every walk is bounded: a path has at most [`MAX_PATH_STEPS`] steps, and equality
//! stops at [`crate::depth::MAX_JSON_DEPTH`] levels (deeper is unequal).

use globset::GlobMatcher;
use regex::Regex;
use serde_json::Value;

/// The most steps one argument path has.
pub const MAX_PATH_STEPS: usize = 64;

/// The largest compiled `regex` a rule may hold, in bytes (the regex crate's size limit).
pub const MAX_REGEX_BYTES: usize = 1 << 20;

/// One step of an argument path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// An object member.
    Key(String),
    /// An array element.
    Index(usize),
    /// Every element of an array (`[*]`).
    Every,
}

/// A JSON path into the arguments, as written and as steps.
#[derive(Debug, Clone)]
pub struct ArgPath {
    steps: Vec<Step>,
}

impl ArgPath {
    /// Reads a path: keys joined by `.`, `[N]` for an element, `[*]` for every element,
    /// `["key"]` for a key holding `.`, `[` or `"`.
    pub fn parse(text: &str) -> Result<ArgPath, String> {
        let mut steps = Vec::new();
        let b = text.as_bytes();
        let mut i = 0;
        let mut expect_key = true;
        if text.is_empty() {
            return Err(
                "an argument path is not empty (e.g. `path`, `options.recursive`, `items[0].name`)"
                    .into(),
            );
        }
        while i < b.len() {
            if steps.len() >= MAX_PATH_STEPS {
                return Err(format!(
                    "an argument path has at most {MAX_PATH_STEPS} steps"
                ));
            }
            match b[i] {
                b'[' => {
                    let (step, next) = bracket(text, i)?;
                    steps.push(step);
                    i = next;
                    expect_key = false;
                }
                b'.' if !expect_key && i + 1 < b.len() => {
                    i += 1;
                    expect_key = true;
                }
                b'.' => return Err(format!("`{text}`: a `.` stands between two keys")),
                _ if expect_key => {
                    let end = text[i..].find(['.', '[']).map_or(text.len(), |at| i + at);
                    steps.push(Step::Key(text[i..end].to_owned()));
                    i = end;
                    expect_key = false;
                }
                _ => return Err(format!("`{text}`: a `.` or `[` comes after `]`")),
            }
        }
        Ok(ArgPath { steps })
    }

    /// The values the path names in `root`.
    pub fn select<'a>(&self, root: &'a Value) -> Vec<&'a Value> {
        let mut here = vec![root];
        for step in &self.steps {
            let mut next = Vec::new();
            for v in here {
                match (step, v) {
                    (Step::Key(k), Value::Object(map)) => next.extend(map.get(k)),
                    (Step::Index(n), Value::Array(items)) => next.extend(items.get(*n)),
                    (Step::Every, Value::Array(items)) => next.extend(items.iter()),
                    _ => {}
                }
            }
            here = next;
        }
        here
    }
}

/// A `[...]` step at byte `at` of `text`: the step and where the text goes on.
fn bracket(text: &str, at: usize) -> Result<(Step, usize), String> {
    let rest = &text[at + 1..];
    if let Some(quoted) = rest.strip_prefix('"') {
        // A JSON string, then `]`.
        let mut escaped = false;
        for (n, c) in quoted.char_indices() {
            match c {
                '\\' if !escaped => escaped = true,
                '"' if !escaped => {
                    let lit = &rest[..n + 2];
                    let key: String = serde_json::from_str(lit)
                        .map_err(|e| format!("`{text}`: `[{lit}]`: {e}"))?;
                    let close = at + 1 + n + 2;
                    if text.as_bytes().get(close) != Some(&b']') {
                        return Err(format!("`{text}`: `[\"…\"]` ends with `]`"));
                    }
                    return Ok((Step::Key(key), close + 1));
                }
                _ => escaped = false,
            }
        }
        return Err(format!("`{text}`: a quoted key is closed by `\"]`"));
    }
    let close = rest
        .find(']')
        .ok_or_else(|| format!("`{text}`: `[` is closed by `]`"))?;
    let inside = &rest[..close];
    let step = match inside {
        "*" => Step::Every,
        n if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => Step::Index(
            n.parse()
                .map_err(|_| format!("`{text}`: `[{n}]` is too large"))?,
        ),
        other => {
            return Err(format!(
                "`{text}`: `[{other}]`: an index (`[0]`), `[*]` or a quoted key (`[\"a.b\"]`)"
            ));
        }
    };
    Ok((step, at + 1 + close + 1))
}

/// One test of the values at a path.
#[derive(Debug, Clone)]
pub enum ArgTest {
    /// Equal, as JSON (numbers by value).
    Equals(Value),
    /// A string the glob matches.
    Glob(GlobMatcher),
    /// A string the regex finds a match in (unanchored: `^…$` for the whole string).
    Regex(Regex),
    /// A number greater than this.
    Gt(f64),
    /// A number greater than or equal to this.
    Ge(f64),
    /// A number less than this.
    Lt(f64),
    /// A number less than or equal to this.
    Le(f64),
    /// `true`: the path names a value (`null` too); `false`: it names none.
    Exists(bool),
}

/// The tests a table of an `args` matcher may hold.
pub const TESTS: [&str; 8] = ["equals", "glob", "regex", "gt", "ge", "lt", "le", "exists"];

impl ArgTest {
    /// True when `found` (the values a path names) passes this test.
    pub fn passes(&self, found: &[&Value]) -> bool {
        match self {
            ArgTest::Exists(want) => found.is_empty() != *want,
            test => found.iter().any(|v| test.one(v)),
        }
    }

    fn one(&self, v: &Value) -> bool {
        let num = || v.as_f64();
        match self {
            ArgTest::Equals(want) => json_equal(want, v, 0),
            ArgTest::Glob(glob) => v.as_str().is_some_and(|s| glob.is_match(s)),
            ArgTest::Regex(re) => v.as_str().is_some_and(|s| re.is_match(s)),
            ArgTest::Gt(n) => num().is_some_and(|x| x > *n),
            ArgTest::Ge(n) => num().is_some_and(|x| x >= *n),
            ArgTest::Lt(n) => num().is_some_and(|x| x < *n),
            ArgTest::Le(n) => num().is_some_and(|x| x <= *n),
            ArgTest::Exists(_) => true,
        }
    }
}

/// JSON equality, numbers by value; unequal past [`crate::depth::MAX_JSON_DEPTH`] levels.
pub fn json_equal(a: &Value, b: &Value, level: usize) -> bool {
    if level > crate::depth::MAX_JSON_DEPTH {
        return false;
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
                (Some(x), Some(y), _, _) => x == y,
                (_, _, Some(x), Some(y)) => x == y,
                _ => x.as_f64() == y.as_f64(),
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_equal(x, y, level + 1))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w, level + 1)))
        }
        _ => a == b,
    }
}

/// A glob as rules use them: `*` any run of characters (`/` too), `?` one, `[abc]` a
/// class, `{a,b}` alternatives, `\` escapes; case-sensitive, the whole text.
pub fn glob(pattern: &str) -> Result<GlobMatcher, String> {
    globset::GlobBuilder::new(pattern)
        .literal_separator(false)
        .backslash_escape(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| format!("`{pattern}` is not a glob: {}", e.kind()))
}

/// A regex as rules use them, its compiled size bounded.
pub fn regex(pattern: &str) -> Result<Regex, String> {
    regex::RegexBuilder::new(pattern)
        .size_limit(MAX_REGEX_BYTES)
        .build()
        .map_err(|e| format!("`{pattern}` is not a regex: {e}"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn at<'a>(path: &str, v: &'a Value) -> Vec<&'a Value> {
        ArgPath::parse(path).expect("a path").select(v)
    }

    #[test]
    fn paths_name_keys_elements_every_element_and_quoted_keys() {
        let v = json!({"path": "/tmp/a", "options": {"recursive": true},
                       "items": [{"name": "x"}, {"name": "y"}], "a.b": 1});
        assert_eq!(at("path", &v), [&json!("/tmp/a")]);
        assert_eq!(at("options.recursive", &v), [&json!(true)]);
        assert_eq!(at("items[1].name", &v), [&json!("y")]);
        assert_eq!(at("items[*].name", &v), [&json!("x"), &json!("y")]);
        assert_eq!(at("[\"a.b\"]", &v), [&json!(1)]);
        assert!(at("items[5].name", &v).is_empty());
        assert!(at("path.deeper", &v).is_empty());
        for bad in ["", ".a", "a.", "a..b", "a[", "a[x]", "a[0]b", "[\"a"] {
            assert!(ArgPath::parse(bad).is_err(), "{bad}");
        }
        let long = vec!["k"; MAX_PATH_STEPS + 1].join(".");
        assert!(ArgPath::parse(&long).is_err());
    }

    #[test]
    fn tests_compare_as_json_and_any_value_named_may_pass() {
        let v = json!({"n": 5, "f": 1.0, "s": "/etc/passwd", "list": [1, 20], "nul": null});
        let pass = |path: &str, t: ArgTest| t.passes(&at(path, &v));
        assert!(pass("f", ArgTest::Equals(json!(1))));
        assert!(pass("n", ArgTest::Gt(4.0)) && !pass("n", ArgTest::Gt(5.0)));
        assert!(pass("n", ArgTest::Ge(5.0)) && pass("n", ArgTest::Le(5.0)));
        assert!(pass("list[*]", ArgTest::Gt(10.0)) && !pass("list[*]", ArgTest::Gt(30.0)));
        assert!(!pass("s", ArgTest::Lt(1.0)), "a string is no number");
        assert!(pass("s", ArgTest::Glob(glob("/etc/*").expect("glob"))));
        assert!(pass("s", ArgTest::Regex(regex("passwd$").expect("regex"))));
        assert!(!pass("n", ArgTest::Regex(regex(".").expect("regex"))));
        assert!(pass("nul", ArgTest::Exists(true)));
        assert!(pass("missing", ArgTest::Exists(false)));
        assert!(!pass("missing", ArgTest::Equals(Value::Null)));
        assert!(glob("a[").is_err() && regex("(").is_err());
    }
}
