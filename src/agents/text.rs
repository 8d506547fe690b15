//! Line arithmetic shared by the TOML and YAML documents: where a line starts and ends,
//! its indentation, the file's line ending, and a byte offset as a line and column.
//!
//! Every function works on byte offsets into the text as read and never panics on an
//! offset past the end (it is clamped).

use serde_json::Value;

use super::document::{DocError, Document, Edit, Entry, apply_edits};

/// The most bytes a config file may have for the TOML and YAML documents: agents' configs
/// are kilobytes; a bigger file is refused before parsing rather than parsed slowly.
pub const MAX_CONFIG_BYTES: usize = 16 * 1024 * 1024;

/// The byte offset where the line holding `at` starts.
pub fn line_start(text: &str, at: usize) -> usize {
    let at = at.min(text.len());
    text.as_bytes()[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1)
}

/// The byte offset just past the line ending of the line holding `at` (the text's end
/// when the line has none).
pub fn line_end(text: &str, at: usize) -> usize {
    let at = at.min(text.len());
    text.as_bytes()[at..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(text.len(), |i| at + i + 1)
}

/// The spaces and tabs that open the line holding `at`.
pub fn indent_of(text: &str, at: usize) -> &str {
    let start = line_start(text, at);
    let rest = &text[start..];
    let n = rest.len() - rest.trim_start_matches([' ', '\t']).len();
    &rest[..n]
}

/// The file's line ending: `\r\n` when its first line ends so, else `\n`.
pub fn newline_of(text: &str) -> &'static str {
    match text.find('\n') {
        Some(i) if i > 0 && text.as_bytes()[i - 1] == b'\r' => "\r\n",
        _ => "\n",
    }
}

/// Whether only spaces and tabs stand between the line's start and `at`.
pub fn starts_line(text: &str, at: usize) -> bool {
    let start = line_start(text, at);
    text[start..at.min(text.len())]
        .bytes()
        .all(|b| b == b' ' || b == b'\t')
}

/// A syntax error at byte `at` of `text`, with its 1-based line and column (characters).
pub fn syntax_at(text: &str, at: usize, message: impl Into<String>) -> DocError {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let line = text.as_bytes()[..at]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1;
    let column = text[line_start(text, at)..at].chars().count() + 1;
    DocError::Syntax {
        line,
        column,
        message: message.into(),
    }
}

/// Refuses a text larger than [`MAX_CONFIG_BYTES`] before any parser sees it.
pub fn check_size(text: &str) -> Result<(), DocError> {
    if text.len() > MAX_CONFIG_BYTES {
        return Err(DocError::Unsupported(format!(
            "the file has {} bytes, more than the {MAX_CONFIG_BYTES} a config may have",
            text.len()
        )));
    }
    Ok(())
}

/// `edits` when the text they make reads back with member `key` of `entry` set to
/// `value` (absent for `None`), else an error: a document never hands out an edit that
/// would leave a file its parser refuses or reads differently.
pub fn verified<D: Document>(
    text: &str,
    entry: &Entry,
    key: &str,
    value: Option<&Value>,
    edits: Vec<Edit>,
    parse: impl Fn(&str) -> Result<D, DocError>,
) -> Result<Vec<Edit>, DocError> {
    let refused = || {
        DocError::Unsupported(format!(
            "setting `{key}` of `{}` here would not read back as written; edit it by hand",
            entry.name()
        ))
    };
    let out = apply_edits(text, edits.clone())?;
    let again = parse(&out).map_err(|_| refused())?;
    let container: Vec<&str> = entry.path[..entry.path.len().saturating_sub(1)]
        .iter()
        .map(String::as_str)
        .collect();
    let now = again
        .entries(&container)
        .map_err(|_| refused())?
        .into_iter()
        .find(|e| e.path == entry.path);
    let ok = match now {
        Some(e) => e.value.get(key) == value,
        // Removing the one member of a table that exists only through it.
        None => value.is_none() && entry.value.as_object().is_some_and(|o| o.len() == 1),
    };
    if ok { Ok(edits) } else { Err(refused()) }
}

/// `s` as a double-quoted string with backslash escapes (`\"`, `\\`, `\n`, `\t`, `\r`,
/// `\uXXXX` for other controls): the same text in a TOML basic string and a YAML
/// double-quoted scalar.
pub fn double_quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_positions() {
        let text = "a = 1\r\n  b = 2\nc";
        assert_eq!(line_start(text, 9), 7);
        assert_eq!(line_end(text, 9), 15);
        assert_eq!(line_end(text, 15), 16);
        assert_eq!(indent_of(text, 10), "  ");
        assert_eq!(newline_of(text), "\r\n");
        assert_eq!(newline_of("x\ny"), "\n");
        assert!(starts_line(text, 9));
        assert!(!starts_line(text, 10));
        assert_eq!(
            syntax_at(text, 9, "x"),
            DocError::Syntax {
                line: 2,
                column: 3,
                message: "x".into()
            }
        );
        assert_eq!(line_end(text, 999), text.len());
    }
}
