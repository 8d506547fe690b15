//! YAML text for JSON values written into an existing file: scalars plain where YAML
//! reads them back as the same string, else quoted in the file's style; collections in
//! flow form (`[a, b]`, `{k: v}`), which is valid at any place of a block document.

use serde_json::Value;

use super::document::DocError;

/// How deep a written value may nest.
const MAX_DEPTH: usize = 64;

/// The quotes a string that needs them gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quote {
    /// `'…'` (serde_yaml's and so Goose's choice).
    Single,
    /// `"…"`, with escapes.
    Double,
}

/// `s` as a YAML scalar: plain when that reads back as the same string (in a flow
/// collection when `in_flow`), else quoted with `quote` (double when it has control
/// characters, which single quotes cannot carry).
pub fn scalar(s: &str, quote: Quote, in_flow: bool) -> String {
    if plain_ok(s, in_flow) {
        return s.to_owned();
    }
    if quote == Quote::Single && !s.chars().any(char::is_control) {
        return format!("'{}'", s.replace('\'', "''"));
    }
    super::text::double_quoted(s)
}

/// A mapping key.
pub fn key_repr(key: &str, quote: Quote) -> String {
    scalar(key, quote, true)
}

/// Whether `s` written plain reads back as the string `s` (YAML 1.1 and 1.2 readers
/// alike: words such as `yes`, `on`, numbers and nulls are quoted).
fn plain_ok(s: &str, in_flow: bool) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    if s.trim() != s || s.chars().any(|c| c.is_control() || c == '\u{feff}') {
        return false;
    }
    let second = s.chars().nth(1);
    let indicator = match first {
        '-' | '?' | ':' => second.is_none_or(|c| c == ' ' || (in_flow && ",[]{}".contains(c))),
        ',' | '[' | ']' | '{' | '}' | '#' | '&' | '*' | '!' | '|' | '>' | '\'' | '"' | '%'
        | '@' | '`' => true,
        _ => false,
    };
    if indicator || s.contains(": ") || s.contains(" #") || s.ends_with(':') {
        return false;
    }
    if in_flow && s.contains([',', '[', ']', '{', '}']) {
        return false;
    }
    if s.starts_with("---") || s.starts_with("...") {
        return false;
    }
    let lower = s.to_ascii_lowercase();
    if matches!(
        lower.as_str(),
        "~" | "null"
            | "true"
            | "false"
            | "yes"
            | "no"
            | "on"
            | "off"
            | "y"
            | "n"
            | ".inf"
            | "-.inf"
            | "+.inf"
            | ".nan"
    ) {
        return false;
    }
    // Anything number-like (ints, floats, 0x/0o, 1_000, dates) stays quoted.
    let numeric = s.starts_with(|c: char| c.is_ascii_digit() || c == '+' || c == '.')
        || (s.starts_with('-') && s[1..].starts_with(|c: char| c.is_ascii_digit() || c == '.'));
    !numeric
}

/// `v` as YAML in flow form (a scalar, `[…]` or `{…}`).
pub fn flow_value(v: &Value, quote: Quote, in_flow: bool) -> Result<String, DocError> {
    render(v, quote, in_flow, 0)
}

fn render(v: &Value, quote: Quote, in_flow: bool, depth: usize) -> Result<String, DocError> {
    if depth > MAX_DEPTH {
        return Err(DocError::Unsupported("values nest too deeply".into()));
    }
    Ok(match v {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => scalar(s, quote, in_flow),
        Value::Array(items) => {
            let parts: Vec<String> = items
                .iter()
                .map(|i| render(i, quote, true, depth + 1))
                .collect::<Result<_, _>>()?;
            format!("[{}]", parts.join(", "))
        }
        Value::Object(map) => {
            let parts: Vec<String> = map
                .iter()
                .map(|(k, i)| {
                    Ok(format!(
                        "{}: {}",
                        key_repr(k, quote),
                        render(i, quote, true, depth + 1)?
                    ))
                })
                .collect::<Result<_, DocError>>()?;
            format!("{{{}}}", parts.join(", "))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_plain_only_when_they_read_back_the_same() {
        assert_eq!(scalar("npx", Quote::Single, false), "npx");
        assert_eq!(scalar("-y", Quote::Single, false), "-y");
        assert_eq!(scalar("--server", Quote::Single, true), "--server");
        assert_eq!(scalar("@scope/pkg", Quote::Double, false), "\"@scope/pkg\"");
        assert_eq!(scalar("yes", Quote::Single, false), "'yes'");
        assert_eq!(scalar("123", Quote::Single, false), "'123'");
        assert_eq!(scalar("a: b", Quote::Single, false), "'a: b'");
        assert_eq!(scalar("it's", Quote::Single, false), "it's");
        assert_eq!(scalar("'q", Quote::Single, false), "'''q'");
        assert_eq!(scalar("a\nb", Quote::Single, false), "\"a\\nb\"");
        assert_eq!(scalar("", Quote::Single, false), "''");
        assert_eq!(scalar("a,b", Quote::Single, true), "'a,b'");
        assert_eq!(
            scalar("/usr/bin/mcptape", Quote::Single, false),
            "/usr/bin/mcptape"
        );
        assert_eq!(
            scalar("https://x.example/mcp", Quote::Single, false),
            "https://x.example/mcp"
        );
    }
}
