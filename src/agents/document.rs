//! The interface of a config file's format: its server entries, located by byte span, and
//! edits of one member of one entry at a time.
//!
//! Every format (JSON/JSONC, TOML, YAML) implements [`Document`] over the file's text as
//! it was read. Entries are read as JSON values (TOML and YAML converted) so the wrapping
//! logic is written once; edits are byte ranges of the original text and their new text,
//! applied together by [`apply_edits`]. An edit of a member keeps the file's style where
//! it adds text (indentation, quotes, separators, flow or block form).

use std::ops::Range;

use serde_json::Value;

/// A config file's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(dead_code)] // Toml and Yaml: the codex and goose agents (h15-formats)
pub enum Format {
    /// JSON as agents write it, read as JSONC: comments and trailing commas allowed and
    /// kept (VS Code, Zed and others).
    Json,
    /// TOML (Codex CLI), edited in place (`toml_edit`).
    Toml,
    /// YAML (Goose), comments kept.
    Yaml,
}

/// One server entry of a config file.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The key path from the document root to the servers' container, then the entry's
    /// own key: `["mcpServers", "github"]`, `["projects", "/abs/cwd", "mcpServers", "x"]`.
    pub path: Vec<String>,
    /// The byte range of the entry's value in the text (the object, table or mapping).
    /// For a TOML table written as `[a.b]` with its key/value lines, the range runs
    /// from the header's first byte to the end of its last line.
    pub span: Range<usize>,
    /// The entry's value, read as JSON.
    pub value: Value,
}

impl Entry {
    /// The entry's own key: the server's name.
    pub fn name(&self) -> &str {
        self.path.last().map(String::as_str).unwrap_or("")
    }
}

/// A change of the text: the bytes of `span` become `text` (an empty span inserts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// The byte range of the original text that is replaced.
    pub span: Range<usize>,
    /// What replaces it.
    pub text: String,
}

/// Why a config file's text could not be read as its format, or an edit not made.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DocError {
    /// The text is not valid in its format.
    #[error("line {line}, column {column}: {message}")]
    Syntax {
        /// 1-based line.
        line: usize,
        /// 1-based column (in characters).
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// The edit cannot be expressed in this file (named why).
    #[error("{0}")]
    Unsupported(String),
}

/// A config file's text with its server entries located.
pub trait Document {
    /// The server entries found under `container` (a key path from the root, such as
    /// `["mcpServers"]`), in file order; none when the container is absent. A container
    /// that is present but not a map (an object, table or mapping) is an error.
    fn entries(&self, container: &[&str]) -> Result<Vec<Entry>, DocError>;

    /// The edits that set member `key` of `entry` to `value`: its value replaced when the
    /// member exists, else the member added after the entry's last member, in the style
    /// of the entry's other members. `None` removes the member (with its separator and,
    /// when it was alone on its lines, those lines). Keys of `value`'s objects keep their
    /// order.
    fn set_member(
        &self,
        entry: &Entry,
        key: &str,
        value: Option<&Value>,
    ) -> Result<Vec<Edit>, DocError>;
}

/// `text` with `edits` applied: sorted by position (edits at the same position in the
/// order given); overlapping edits are an error.
pub fn apply_edits(text: &str, mut edits: Vec<Edit>) -> Result<String, DocError> {
    // A stable sort keeps inserts at one position in the order they were made.
    edits.sort_by_key(|e| (e.span.start, e.span.end));
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for edit in edits {
        let Range { start, end } = edit.span;
        if start < at || end > text.len() || start > end {
            return Err(DocError::Unsupported(format!(
                "overlapping or out-of-range edits at byte {start}"
            )));
        }
        if !text.is_char_boundary(start) || !text.is_char_boundary(end) {
            return Err(DocError::Unsupported(format!(
                "an edit at byte {start} splits a character"
            )));
        }
        out.push_str(&text[at..start]);
        out.push_str(&edit.text);
        at = end;
    }
    out.push_str(&text[at..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(start: usize, end: usize, text: &str) -> Edit {
        Edit {
            span: start..end,
            text: text.to_owned(),
        }
    }

    #[test]
    fn edits_apply_in_position_order_and_inserts_keep_their_order() {
        let text = "abcdef";
        let out = apply_edits(
            text,
            vec![
                edit(4, 5, "E"),
                edit(1, 1, "x"),
                edit(1, 1, "y"),
                edit(2, 3, ""),
            ],
        )
        .expect("apply");
        assert_eq!(out, "axybdEf");
    }

    #[test]
    fn overlapping_edits_are_refused() {
        let err = apply_edits("abcdef", vec![edit(1, 4, "x"), edit(2, 3, "y")]);
        assert!(err.is_err());
        assert!(apply_edits("é", vec![edit(1, 1, "x")]).is_err());
    }
}
