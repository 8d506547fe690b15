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
    Gt(Bound),
    /// A number greater than or equal to this.
    Ge(Bound),
    /// A number less than this.
    Lt(Bound),
    /// A number less than or equal to this.
    Le(Bound),
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
        use std::cmp::Ordering::{Equal, Greater, Less};
        let cmp = |b: &Bound| lax_number(v).and_then(|x| x.compare(b));
        match self {
            ArgTest::Equals(want) => json_equal(want, v, 0) || lax_equal(want, v),
            ArgTest::Glob(glob) => v.as_str().is_some_and(|s| glob.is_match(s)),
            ArgTest::Regex(re) => v.as_str().is_some_and(|s| re.is_match(s)),
            ArgTest::Gt(b) => cmp(b) == Some(Greater),
            ArgTest::Ge(b) => matches!(cmp(b), Some(Greater | Equal)),
            ArgTest::Lt(b) => cmp(b) == Some(Less),
            ArgTest::Le(b) => matches!(cmp(b), Some(Less | Equal)),
            ArgTest::Exists(_) => true,
        }
    }
}

/// The number a `gt`/`ge`/`lt`/`le` test compares with: an integer exactly (TOML's are
/// 64-bit), or a finite float.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    /// An integer.
    Int(i64),
    /// A finite float.
    Float(f64),
}

/// A value read as a number the way a lenient server reads its arguments.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Num {
    /// An integer, exactly (JSON's may pass 64 bits).
    Int(i128),
    /// Anything else.
    Float(f64),
}

impl Num {
    /// How this compares with `b`: integers exactly, else as doubles; `None` for NaN.
    fn compare(self, b: &Bound) -> Option<std::cmp::Ordering> {
        match (self, *b) {
            (Num::Int(x), Bound::Int(y)) => Some(x.cmp(&i128::from(y))),
            (Num::Int(x), Bound::Float(y)) => (x as f64).partial_cmp(&y),
            (Num::Float(x), Bound::Int(y)) => x.partial_cmp(&(y as f64)),
            (Num::Float(x), Bound::Float(y)) => x.partial_cmp(&y),
        }
    }
}

/// `v` as a number, as the servers that coerce their arguments read it (pydantic's lax
/// mode, the default of the Python SDK's and FastMCP's tools; zod's `coerce`): a JSON
/// number; a string holding a decimal number once trimmed of whitespace (`" 5000 "`,
/// `"5e3"`, `"+5000"`, `"5_000"`, `"inf"`); `true`/`false` as 1/0. So `gt = 1000` also
/// catches `"5000"`, which such a server runs as 5000: the gate judges what the server
/// will run, not the JSON type the client chose.
fn lax_number(v: &Value) -> Option<Num> {
    match v {
        Value::Number(n) => Some(match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Num::Int(i128::from(i)),
            (_, Some(u)) => Num::Int(i128::from(u)),
            _ => Num::Float(n.as_f64()?),
        }),
        Value::Bool(b) => Some(Num::Int(i128::from(*b))),
        Value::String(s) => number_text(s),
        _ => None,
    }
}

/// A string's number: trimmed, `_` between digits dropped (Python's `int("5_000")`),
/// an integer exactly, else a float (`inf`, `nan` and exponents included); at most 4,300
/// characters, Python's limit for `int(str)`.
fn number_text(s: &str) -> Option<Num> {
    let t = s.trim();
    if t.is_empty() || t.len() > 4300 {
        return None;
    }
    let b = t.as_bytes();
    let mut plain = String::with_capacity(t.len());
    for (i, &c) in b.iter().enumerate() {
        if c == b'_' {
            let digit = |j: Option<&u8>| j.is_some_and(u8::is_ascii_digit);
            if !(digit(i.checked_sub(1).and_then(|j| b.get(j))) && digit(b.get(i + 1))) {
                return None;
            }
        } else {
            plain.push(char::from(c));
        }
    }
    if let Ok(i) = plain.parse::<i128>() {
        return Some(Num::Int(i));
    }
    // An integer too long for i128 still compares (as a double, by its sign and size).
    plain.parse::<f64>().ok().map(Num::Float)
}

/// `equals` as a lenient server reads the argument: a number the value reads as (see
/// [`lax_number`]: `"5"`, `5.0`, `true` for 1), or for `true`/`false` the words pydantic reads as them (`"true"`,
/// `"yes"`, `"on"`, `"1"`, … any case) and the numbers 1 and 0.
fn lax_equal(want: &Value, v: &Value) -> bool {
    match want {
        Value::Number(_) => {
            let want = lax_number(want).map(|n| match n {
                Num::Int(i) => i64::try_from(i).map_or(Bound::Float(i as f64), Bound::Int),
                Num::Float(f) => Bound::Float(f),
            });
            want.is_some_and(|w| {
                lax_number(v).and_then(|x| x.compare(&w)) == Some(std::cmp::Ordering::Equal)
            })
        }
        Value::Bool(want) => lax_bool(v) == Some(*want),
        _ => false,
    }
}

/// A value read as a boolean by pydantic's lax mode.
fn lax_bool(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => match n.as_f64() {
            Some(1.0) => Some(true),
            Some(0.0) => Some(false),
            _ => None,
        },
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "1" | "on" | "t" | "true" | "y" | "yes" => Some(true),
            "0" | "off" | "f" | "false" | "n" | "no" => Some(false),
            _ => None,
        },
        _ => None,
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
        let f = Bound::Float;
        assert!(pass("n", ArgTest::Gt(f(4.0))) && !pass("n", ArgTest::Gt(Bound::Int(5))));
        assert!(pass("n", ArgTest::Ge(Bound::Int(5))) && pass("n", ArgTest::Le(f(5.0))));
        assert!(pass("list[*]", ArgTest::Gt(f(10.0))) && !pass("list[*]", ArgTest::Gt(f(30.0))));
        assert!(!pass("s", ArgTest::Lt(f(1.0))), "a path is no number");
        assert!(pass("s", ArgTest::Glob(glob("/etc/*").expect("glob"))));
        assert!(pass("s", ArgTest::Regex(regex("passwd$").expect("regex"))));
        assert!(!pass("n", ArgTest::Regex(regex(".").expect("regex"))));
        assert!(pass("nul", ArgTest::Exists(true)));
        assert!(pass("missing", ArgTest::Exists(false)));
        assert!(!pass("missing", ArgTest::Equals(Value::Null)));
        assert!(glob("a[").is_err() && regex("(").is_err());
    }

    #[test]
    fn numbers_and_booleans_are_read_as_a_lenient_server_reads_them() {
        let gt = |v: Value, b: Bound| ArgTest::Gt(b).passes(&[&v]);
        let k = Bound::Int(1000);
        // pydantic's lax mode runs each of these as a number past 1000.
        for v in [
            json!("5000"),
            json!(" 5000\n"),
            json!("+5e3"),
            json!("5_000"),
            json!("5000.0"),
            json!("inf"),
        ] {
            assert!(gt(v.clone(), k), "{v}");
        }
        for v in [
            json!("500"),
            json!("5__000"),
            json!("_5000"),
            json!("5000_"),
            json!("0x2000"),
            json!("five"),
            json!(""),
            json!(null),
            json!([5000]),
        ] {
            assert!(!gt(v.clone(), k), "{v}");
        }
        // Integers beyond a double's 53 bits compare exactly.
        let big = Bound::Int(9_007_199_254_740_993);
        assert!(!gt(json!(9_007_199_254_740_993_u64), big));
        assert!(gt(json!(9_007_199_254_740_994_u64), big));
        assert!(gt(json!(u64::MAX), Bound::Int(i64::MAX)));
        assert!(gt(json!("9007199254740994"), big));
        assert!(ArgTest::Le(Bound::Int(0)).passes(&[&json!(false)]));
        // equals: a number by its value in any spelling; a boolean by pydantic's words.
        let eq = |want: Value, v: Value| ArgTest::Equals(want).passes(&[&v]);
        assert!(
            eq(json!(5), json!("5"))
                && eq(json!(5), json!("5.0"))
                && eq(json!(1.5), json!(" 1.5 "))
        );
        assert!(!eq(json!(5), json!("6")) && eq(json!(1), json!(true)));
        for yes in [
            json!("true"),
            json!("Yes"),
            json!(" on "),
            json!("1"),
            json!(1),
            json!(1.0),
        ] {
            assert!(eq(json!(true), yes.clone()), "{yes}");
        }
        for no in [json!("false"), json!("OFF"), json!("n"), json!(0)] {
            assert!(
                eq(json!(false), no.clone()) && !eq(json!(true), no.clone()),
                "{no}"
            );
        }
        assert!(!eq(json!(true), json!("maybe")) && !eq(json!("5"), json!(5)));
    }
}
