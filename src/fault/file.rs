//! `--faults FILE`: many rules in JSON or TOML (by the extension, `.json` or `.toml`, or
//! else by the content), each one either the rule's text or an object/table of fields
//! (`method`, `name`, `nth`, `p`, `seed`, `effect`, `code`, `message`, `text`, `ms`,
//! `status`):
//!
//! ```json
//! {"rules": [{"method": "tools/call", "name": "search", "nth": 2,
//!             "effect": "error", "code": -32000, "message": "rate limited"},
//!            "notifications/progress: drop"]}
//! ```
//!
//! ```toml
//! [[rules]]
//! method = "tools/call"
//! effect = "tool-error"
//! text = "disk full"
//! ```
//!
//! A bare JSON array of rules is read too. Errors name the file, the rule's number in it
//! and its line, and the bad field.

use std::path::Path;

use serde_json::value::RawValue;

use crate::error::{Error, Result};
use crate::fault::rule::{self, Effect, RuleError, Selector};

/// The largest rules file read.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// One rule read from a file: what it picks, what it does, and its text.
pub type FileRule = (Selector, Effect, String);

/// A rule's fields: each name and its value as text (a string's contents, or a number).
type Fields = Vec<(String, String)>;

/// Reads the rules of `path`.
pub fn load(path: &Path) -> Result<Vec<FileRule>> {
    let shown = crate::term::line(&path.display().to_string()).into_owned();
    let text = read(path, &shown)?;
    parse(&text, path, &shown)
}

/// Reads the rules of `text`, the contents of `path` (its extension picks JSON or TOML,
/// else the text's first character does), named `shown` in errors.
pub fn parse(text: &str, path: &Path, shown: &str) -> Result<Vec<FileRule>> {
    let toml = match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("toml") => true,
        Some(e) if e.eq_ignore_ascii_case("json") => false,
        _ => {
            let t = text.trim_start();
            !(t.starts_with('{') || (t.starts_with('[') && !t.starts_with("[[")))
        }
    };
    let raw = if toml {
        toml_rules(text)
    } else {
        json_rules(text)
    };
    let fail = |what: String| {
        Error::Usage(crate::term::line(&format!("--faults `{shown}`: {what}")).into_owned())
    };
    let mut rules = Vec::new();
    for (n, (line, item)) in raw.map_err(fail)?.into_iter().enumerate() {
        let at = match line {
            Some(l) => format!("rule {} (line {l})", n + 1),
            None => format!("rule {}", n + 1),
        };
        let built = match item {
            Item::Text(t) => rule::parse(&t).map(|(s, e)| (s, e, t)),
            Item::Fields(f) => from_fields(&f),
        };
        rules.push(built.map_err(|e| fail(format!("{at}: {e}")))?);
    }
    Ok(rules)
}

fn read(path: &Path, shown: &str) -> Result<String> {
    use std::io::Read;
    let io = |source| Error::Io {
        what: format!("cannot read --faults `{shown}`"),
        source,
    };
    // A FIFO or a device would block the open or the read for ever: only a regular file
    // (a symlink to one is fine) is read.
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_file() {
        return Err(Error::Usage(format!(
            "--faults `{shown}`: not a regular file"
        )));
    }
    let file = std::fs::File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(Error::Usage(format!(
            "--faults `{shown}`: larger than {MAX_FILE_BYTES} bytes"
        )));
    }
    String::from_utf8(bytes)
        .map_err(|_| Error::Usage(format!("--faults `{shown}`: not UTF-8 text")))
}

/// A rule as a file gives it.
enum Item {
    Text(String),
    Fields(Fields),
}

/// Where a text's lines start, to name the line of a byte offset in O(log n) (a file of
/// many rules would be rescanned once per rule otherwise).
struct Lines(Vec<usize>);

impl Lines {
    fn of(text: &str) -> Lines {
        Lines(newlines(text))
    }

    /// The line of byte `at`, from 1.
    fn line(&self, at: usize) -> usize {
        self.0.partition_point(|&nl| nl < at) + 1
    }
}

/// The offsets of a text's newlines.
fn newlines(text: &str) -> Vec<usize> {
    text.bytes()
        .enumerate()
        .filter(|(_, b)| *b == b'\n')
        .map(|(i, _)| i)
        .collect()
}

fn json_rules(text: &str) -> Result<Vec<(Option<usize>, Item)>, String> {
    let top: &RawValue = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let list = match top.get().trim_start().as_bytes().first() {
        Some(b'{') => crate::message::raw_member(text, &["rules"])
            .ok_or("a JSON file holds {\"rules\": [...]} or an array of rules")?,
        _ => top.get(),
    };
    let items: Vec<&RawValue> = serde_json::from_str(list)
        .map_err(|_| "`rules` is an array of rules (objects or rule texts)".to_owned())?;
    if items.len() > super::MAX_RULES {
        return Err(format!(
            "{} rules: at most {} fault rules",
            items.len(),
            super::MAX_RULES
        ));
    }
    let base = text.as_ptr() as usize;
    let lines = Lines::of(text);
    let mut out = Vec::new();
    for (n, raw) in items.into_iter().enumerate() {
        let line = lines.line(raw.get().as_ptr() as usize - base);
        let value: serde_json::Value =
            serde_json::from_str(raw.get()).map_err(|e| format!("rule {}: {e}", n + 1))?;
        let item = match value {
            serde_json::Value::String(s) => Item::Text(s),
            serde_json::Value::Object(map) => {
                let mut fields = Fields::new();
                for (k, v) in map {
                    let v = match v {
                        serde_json::Value::String(s) => s,
                        serde_json::Value::Number(n) => n.to_string(),
                        other => {
                            return Err(format!(
                                "rule {} (line {line}): `{k}`: a string or a number, not {other}",
                                n + 1
                            ));
                        }
                    };
                    fields.push((k, v));
                }
                Item::Fields(fields)
            }
            _ => {
                return Err(format!(
                    "rule {} (line {line}): an object or a rule's text",
                    n + 1
                ));
            }
        };
        out.push((Some(line), item));
    }
    Ok(out)
}

fn toml_rules(text: &str) -> Result<Vec<(Option<usize>, Item)>, String> {
    let doc = toml_edit::Document::parse(text).map_err(|e| format!("not TOML: {e}"))?;
    let lines = Lines::of(text);
    let mut out = Vec::new();
    let Some(item) = doc.get("rules") else {
        return Err("a TOML file holds [[rules]] tables (or rules = [\"…\"])".into());
    };
    if let Some(tables) = item.as_array_of_tables() {
        for (n, table) in tables.iter().enumerate() {
            let line = table.span().map(|s| lines.line(s.start));
            let mut fields = Fields::new();
            for (k, v) in table.iter() {
                let value = v
                    .as_value()
                    .and_then(scalar)
                    .ok_or_else(|| format!("rule {}: `{k}`: a string or a number", n + 1))?;
                fields.push((k.to_owned(), value));
            }
            out.push((line, Item::Fields(fields)));
        }
    } else if let Some(list) = item.as_array() {
        for (n, v) in list.iter().enumerate() {
            let line = v.span().map(|s| lines.line(s.start));
            let t = v
                .as_str()
                .ok_or_else(|| format!("rule {}: a rule's text", n + 1))?;
            out.push((line, Item::Text(t.to_owned())));
        }
    } else {
        return Err("`rules` is [[rules]] tables or an array of rule texts".into());
    }
    Ok(out)
}

fn scalar(v: &toml_edit::Value) -> Option<String> {
    match v {
        toml_edit::Value::String(s) => Some(s.value().clone()),
        toml_edit::Value::Integer(i) => Some(i.value().to_string()),
        toml_edit::Value::Float(f) => Some(f.value().to_string()),
        _ => None,
    }
}

/// A rule from its fields; `rule = "TEXT"` alone is its text.
fn from_fields(fields: &Fields) -> Result<FileRule, RuleError> {
    let bad = |word: &str, expected: &str| RuleError {
        word: word.to_owned(),
        expected: expected.to_owned(),
    };
    let get = |k: &str| fields.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    if let Some(text) = get("rule") {
        if fields.len() > 1 {
            return Err(bad("rule", "a rule's text, or its fields, not both"));
        }
        return rule::parse(text).map(|(s, e)| (s, e, text.to_owned()));
    }
    const KNOWN: [&str; 11] = [
        "method", "name", "nth", "p", "seed", "effect", "code", "message", "text", "ms", "status",
    ];
    if let Some((k, _)) = fields.iter().find(|(k, _)| !KNOWN.contains(&k.as_str())) {
        return Err(bad(
            k,
            "a rule's field: method, name, nth, p, seed, effect, code, message, text, ms, status (or rule)",
        ));
    }
    let word = |k: &str, v: &str| format!("{k}={v}");
    let selector = Selector {
        method: get("method").filter(|m| *m != "*").map(str::to_owned),
        name: get("name").map(str::to_owned),
        nth: get("nth")
            .map(|v| rule::nth(&word("nth", v), v))
            .transpose()?,
        p: get("p")
            .map(|v| rule::probability(&word("p", v), v))
            .transpose()?,
        seed: get("seed")
            .map(|v| rule::seed(&word("seed", v), v))
            .transpose()?,
    };
    rule::check_selector(&selector)?;
    let effect = match get("effect") {
        None => return Err(bad("effect", &format!("an effect: {}", rule::EFFECTS))),
        Some("error") => Effect::Error {
            code: match get("code") {
                Some(c) => rule::error_code(c)?,
                None => return Err(bad("code", "error takes a code, e.g. -32000")),
            },
            message: get("message")
                .unwrap_or(rule::DEFAULT_ERROR_MESSAGE)
                .to_owned(),
        },
        Some("tool-error") => Effect::ToolError {
            text: get("text").unwrap_or(rule::DEFAULT_TOOL_ERROR).to_owned(),
        },
        Some("delay") => Effect::Delay {
            ms: rule::delay(get("ms").unwrap_or(""))?,
        },
        Some("disconnect") => Effect::Disconnect {
            status: get("status").map(rule::status).transpose()?,
        },
        Some(other) => rule::parse_effect(other)?,
    };
    let text = rule::text_of(&selector, &effect);
    Ok((selector, effect, text))
}

#[cfg(test)]
mod tests;
