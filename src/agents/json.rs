//! The JSON/JSONC [`Document`]: agents' JSON configs read with comments (`//`, `/* */`)
//! and trailing commas allowed, every value located by byte range (`jsonc-parser`, whose
//! nesting limit keeps a deep file an error instead of a stack overflow), and edits that
//! add members in the entry's own style: its indentation unit, one-line or multi-line
//! form, `": "` spacing and the file's newline.

use jsonc_parser::ast::{Object, ObjectPropName, Value as Ast};
use jsonc_parser::common::Ranged;
use jsonc_parser::{CollectOptions, ParseOptions, parse_to_ast};
use serde_json::Value;

use crate::agents::document::{DocError, Document, Edit, Entry};

/// A JSON or JSONC config file's text.
#[derive(Debug, Clone)]
pub struct JsonDocument {
    text: String,
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
        let doc = JsonDocument {
            text: text.to_owned(),
        };
        doc.root()?;
        Ok(doc)
    }

    fn root(&self) -> Result<Option<Ast<'_>>, DocError> {
        let parsed =
            parse_to_ast(&self.text, &CollectOptions::default(), &options()).map_err(|e| {
                DocError::Syntax {
                    line: e.line_display(),
                    column: e.column_display(),
                    message: e.kind().to_string(),
                }
            })?;
        match parsed.value {
            None => Ok(None),
            Some(Ast::Object(o)) => Ok(Some(Ast::Object(o))),
            Some(_) => Err(DocError::Unsupported(
                "the top level is not a JSON object".into(),
            )),
        }
    }

    fn newline(&self) -> &'static str {
        if self.text.contains("\r\n") {
            "\r\n"
        } else {
            "\n"
        }
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

/// The object at `path` under `root`: `Ok(None)` when a key is missing, an error when a
/// value on the way is not an object.
fn walk<'r, 'a>(root: &'r Ast<'a>, path: &[&str]) -> Result<Option<&'r Object<'a>>, DocError> {
    let Ast::Object(root_obj) = root else {
        return Err(DocError::Unsupported(
            "the top level is not a JSON object".into(),
        ));
    };
    let mut obj = root_obj;
    for (i, key) in path.iter().enumerate() {
        match obj.get(key).map(|p| &p.value) {
            None => return Ok(None),
            Some(Ast::Object(o)) => obj = o,
            Some(_) => {
                return Err(DocError::Unsupported(format!(
                    "`{}` is not an object",
                    path[..=i].join(".")
                )));
            }
        }
    }
    Ok(Some(obj))
}

fn name_range(name: &ObjectPropName<'_>) -> std::ops::Range<usize> {
    match name {
        ObjectPropName::String(s) => s.range.start..s.range.end,
        ObjectPropName::Word(w) => w.range.start..w.range.end,
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

impl Document for JsonDocument {
    fn entries(&self, container: &[&str]) -> Result<Vec<Entry>, DocError> {
        let Some(root) = self.root()? else {
            return Ok(Vec::new());
        };
        let Some(obj) = walk(&root, container)? else {
            return Ok(Vec::new());
        };
        Ok(obj
            .properties
            .iter()
            .map(|p| {
                let mut path: Vec<String> = container.iter().map(|s| (*s).to_owned()).collect();
                path.push(p.name.as_str().to_owned());
                let r = p.value.range();
                Entry {
                    path,
                    span: r.start..r.end,
                    value: p.value.clone().into(),
                }
            })
            .collect())
    }

    fn set_member(
        &self,
        entry: &Entry,
        key: &str,
        value: Option<&Value>,
    ) -> Result<Vec<Edit>, DocError> {
        let Some(root) = self.root()? else {
            return Err(DocError::Unsupported("the file has no entries".into()));
        };
        let path: Vec<&str> = entry.path.iter().map(String::as_str).collect();
        let obj = match walk(&root, &path)? {
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
                let between = &text[name_range(&p.name).end..p.value.range().start];
                if between.contains('\n') || between.contains('/') {
                    ": ".to_owned()
                } else {
                    between.to_owned()
                }
            })
            .unwrap_or_else(|| ": ".to_owned());
        let comma = if colon == ":" { "," } else { ", " };
        let at = props.iter().position(|p| p.name.as_str() == key);
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
                let r = props[i].value.range();
                let multi = text[r.start..r.end].contains('\n') || (multiline && !v.is_array());
                edit(r.start..r.end, render(v, &style(multi), 0))
            }
            (Some(i), None) => {
                let span = if let Some(next) = props.get(i + 1) {
                    props[i].range.start..next.range.start
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
                    Some(last) if multiline => edit(
                        last.range.end..last.range.end,
                        format!(",{}{indent}{member}", self.newline()),
                    ),
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
