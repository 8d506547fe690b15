//! The JSON/JSONC [`Document`]: agents' JSON configs read with comments (`//`, `/* */`)
//! and trailing commas allowed, every value located by byte range (`jsonc-parser`, whose
//! nesting limit keeps a deep file an error instead of a stack overflow), and edits that
//! add members in the entry's own style: its indentation unit, one-line or multi-line
//! form, `": "` spacing and the file's newline.

use jsonc_parser::{CollectOptions, ParseOptions, parse_to_ast};
use serde_json::Value;

use crate::agents::document::{DocError, Document, Edit, Entry};

mod index;

use index::Index;

/// A JSON or JSONC config file's text, parsed once into a span [`Index`].
#[derive(Debug, Clone)]
pub struct JsonDocument {
    text: String,
    index: Index,
    /// The file's newline (`\r\n` when it has one), found once: not per edit.
    newline: &'static str,
}

/// Strict JSON plus what agents' JSONC allows: comments and trailing commas.
fn options() -> ParseOptions {
    ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

impl JsonDocument {
    /// Reads `text` as JSONC; a syntax error names its line and column. An empty file
    /// (only whitespace) is an empty object.
    pub fn parse(text: &str) -> Result<JsonDocument, DocError> {
        Ok(JsonDocument {
            text: text.to_owned(),
            index: Index::build(text, &options())?,
            newline: if text.contains("\r\n") { "\r\n" } else { "\n" },
        })
    }

    fn newline(&self) -> &'static str {
        self.newline
    }

    /// The indentation of the line that holds byte `at`.
    fn indent_at(&self, at: usize) -> &str {
        let start = self.text[..at].rfind('\n').map(|i| i + 1).unwrap_or(0);
        let line = &self.text[start..at];
        let end = line
            .find(|c: char| c != ' ' && c != '\t')
            .unwrap_or(line.len());
        &line[..end]
    }
}

/// How new text is laid out to fit where it goes.
struct Style<'t> {
    /// Spread objects and arrays over lines.
    multiline: bool,
    /// The indentation of the member being written.
    indent: String,
    /// One level of indentation.
    unit: String,
    newline: &'t str,
    /// Between a key and its value (`": "`, without the quote).
    colon: String,
    /// Between the items of a one-line array or object.
    comma: &'t str,
}

/// `value` as text in `style`. Objects and arrays nest only as deep as the values install
/// writes (a command line, an environment), so the recursion is shallow.
fn render(value: &Value, style: &Style<'_>, depth: usize) -> String {
    let inner = format!("{}{}", style.indent, style.unit.repeat(depth + 1));
    let close = format!("{}{}", style.indent, style.unit.repeat(depth));
    let (items, open, end): (Vec<String>, &str, &str) = match value {
        Value::Array(a) if !a.is_empty() => (
            a.iter().map(|v| render(v, style, depth + 1)).collect(),
            "[",
            "]",
        ),
        Value::Object(o) if !o.is_empty() => (
            o.iter()
                .map(|(k, v)| {
                    format!(
                        "{}{}{}",
                        Value::String(k.clone()),
                        style.colon,
                        render(v, style, depth + 1)
                    )
                })
                .collect(),
            "{",
            "}",
        ),
        other => return other.to_string(),
    };
    // Arrays of plain words stay on one line, as agents' own files write `args`.
    let one_line = !style.multiline
        || matches!(value, Value::Array(a) if a.iter().all(|v| !v.is_object() && !v.is_array()));
    if one_line {
        format!("{open}{}{end}", items.join(style.comma))
    } else {
        let sep = format!(",{}{inner}", style.newline);
        format!(
            "{open}{}{inner}{}{}{close}{end}",
            style.newline,
            items.join(&sep),
            style.newline
        )
    }
}

impl JsonDocument {
    /// The edits that add `member` on a line of its own after the last member, whose
    /// value ends at `end`. A comment after that member on its line stays with it: the
    /// new line goes after the comment, and the separator before it.
    fn append_line(&self, end: usize, indent: &str, member: &str) -> Vec<Edit> {
        let nl = self.newline();
        let rest = &self.text[end..];
        let line_end = rest.find(['\r', '\n']).map_or(self.text.len(), |i| end + i);
        let tail = &self.text[end..line_end];
        let comma = tail.trim_start().starts_with(',');
        let after_comma = if comma {
            tail.trim_start()[1..].trim_start()
        } else {
            tail.trim_start()
        };
        if !after_comma.starts_with("//") {
            return vec![Edit {
                span: end..end,
                text: format!(",{nl}{indent}{member}"),
            }];
        }
        // `"b": 2, // note` gets `"k": v,` below (the file's trailing-comma style);
        // `"b": 2 // note` gets a comma after its value and `"k": v` below.
        let mut edits = Vec::new();
        if !comma {
            edits.push(Edit {
                span: end..end,
                text: ",".into(),
            });
        }
        let trailing = if comma { "," } else { "" };
        edits.push(Edit {
            span: line_end..line_end,
            text: format!("{nl}{indent}{member}{trailing}"),
        });
        edits
    }
}

impl JsonDocument {
    /// The edits that remove the last member (`start..end`) when a comment follows the
    /// member before it (which ends at `prev_end`): the comment stays where it is, and the
    /// separator goes with the removed line.
    fn remove_last_after_comment(&self, prev_end: usize, start: usize, end: usize) -> Vec<Edit> {
        let text = &self.text;
        let line_start = text[..start].rfind('\n').unwrap_or(start);
        let line_start = if text[..line_start].ends_with('\r') {
            line_start - 1
        } else {
            line_start
        };
        let after = text[end..].trim_start_matches([' ', '\t']);
        // Only a member alone on its line takes the line break before it: text after it
        // on its line (`"cwd": "x", }`) must not join the comment's line, where it would
        // become part of the comment.
        let alone_to = |at: usize| {
            let rest = text[at..].trim_start_matches([' ', '\t']);
            rest.is_empty() || rest.starts_with(['\r', '\n'])
        };
        if after.starts_with(',') {
            // `"b": 1, // c` + `"url": "u",`: the trailing comma stays with `b`.
            let comma_end = text.len() - after.len() + 1;
            let from = if alone_to(comma_end) {
                line_start
            } else {
                start
            };
            return vec![Edit {
                span: from..comma_end,
                text: String::new(),
            }];
        }
        let from = if alone_to(end) { line_start } else { start };
        let mut edits = vec![Edit {
            span: from..end,
            text: String::new(),
        }];
        let between = &text[prev_end..start];
        if let Some(at) = between
            .find(',')
            .filter(|at| between[..*at].trim().is_empty())
        {
            edits.push(Edit {
                span: prev_end + at..prev_end + at + 1,
                text: String::new(),
            });
        }
        edits
    }
}

impl Document for JsonDocument {
    fn entries(&self, container: &[&str]) -> Result<Vec<Entry>, DocError> {
        let Some(obj) = self.index.walk(container)? else {
            return Ok(Vec::new());
        };
        obj.properties
            .iter()
            .map(|p| {
                let mut path: Vec<String> = container.iter().map(|s| (*s).to_owned()).collect();
                path.push(p.name.clone());
                // The entry's own text is a JSONC value: read it alone.
                let value = parse_to_ast(
                    &self.text[p.value.clone()],
                    &CollectOptions::default(),
                    &options(),
                )
                .map_err(|e| DocError::Unsupported(format!("entry `{}`: {}", p.name, e.kind())))?
                .value
                .map(Value::from)
                .unwrap_or(Value::Null);
                Ok(Entry {
                    path,
                    span: p.value.clone(),
                    value,
                })
            })
            .collect()
    }

    fn set_member(
        &self,
        entry: &Entry,
        key: &str,
        value: Option<&Value>,
    ) -> Result<Vec<Edit>, DocError> {
        let path: Vec<&str> = entry.path.iter().map(String::as_str).collect();
        let obj = match self.index.walk(&path)? {
            Some(o) if o.range.start == entry.span.start => o,
            _ => {
                return Err(DocError::Unsupported(format!(
                    "entry `{}` is not an object where it was read",
                    entry.name()
                )));
            }
        };
        let props = &obj.properties;
        let text = &self.text;
        let multiline = props
            .first()
            .is_some_and(|p| text[obj.range.start..p.range.start].contains('\n'))
            || (props.is_empty() && text[obj.range.start..obj.range.end].contains('\n'));
        let entry_indent = self.indent_at(obj.range.start).to_owned();
        let indent = match props.last() {
            Some(p) if multiline => self.indent_at(p.range.start).to_owned(),
            _ => format!("{entry_indent}  "),
        };
        let unit = indent
            .strip_prefix(entry_indent.as_str())
            .filter(|u| !u.is_empty())
            .unwrap_or("  ")
            .to_owned();
        let colon = props
            .last()
            .map(|p| {
                let between = &text[p.name_end..p.value.start];
                if between.contains('\n') || between.contains('/') {
                    ": ".to_owned()
                } else {
                    between.to_owned()
                }
            })
            .unwrap_or_else(|| ": ".to_owned());
        let comma = if colon == ":" { "," } else { ", " };
        let at = props.iter().position(|p| p.name == key);
        let style = |multi: bool| Style {
            multiline: multi,
            indent: indent.clone(),
            unit: unit.clone(),
            newline: self.newline(),
            colon: colon.clone(),
            comma,
        };
        let edit = |span: std::ops::Range<usize>, text: String| vec![Edit { span, text }];
        Ok(match (at, value) {
            (Some(i), Some(v)) => {
                let r = props[i].value.clone();
                let multi = text[r.start..r.end].contains('\n') || (multiline && !v.is_array());
                edit(r.start..r.end, render(v, &style(multi), 0))
            }
            (Some(i), None) => {
                let span = if let Some(next) = props.get(i + 1) {
                    props[i].range.start..next.range.start
                } else if i > 0 && text[props[i - 1].range.end..props[i].range.start].contains('/')
                {
                    return Ok(self.remove_last_after_comment(
                        props[i - 1].range.end,
                        props[i].range.start,
                        props[i].range.end,
                    ));
                } else if i > 0 {
                    props[i - 1].range.end..props[i].range.end
                } else {
                    obj.range.start + 1..obj.range.end - 1
                };
                // A trailing comma left after the removed last member stays (JSONC).
                edit(span, String::new())
            }
            (None, Some(v)) => {
                let member = format!(
                    "{}{}{}",
                    Value::String(key.to_owned()),
                    colon,
                    render(v, &style(multiline), 0)
                );
                match props.last() {
                    Some(last) if multiline => self.append_line(last.range.end, &indent, &member),
                    Some(last) => {
                        edit(last.range.end..last.range.end, format!("{}{member}", comma))
                    }
                    None => edit(obj.range.start + 1..obj.range.start + 1, member),
                }
            }
            (None, None) => Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests;
