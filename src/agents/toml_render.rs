//! TOML text for JSON values written into an existing file, in the style of the value
//! they replace: an array keeps the old array's padding, separators and trailing comma; a
//! literal string (`'…'`) stays literal when it can. New tables are inline (`{ k = v }`).

use std::ops::Range;

use serde_json::Value;

use super::document::DocError;

/// How deep a written value may nest.
const MAX_DEPTH: usize = 64;

/// `v` as TOML text (`text` is the file, `old` the value it replaces, if any).
pub(super) fn render_value(
    text: &str,
    v: &Value,
    old: Option<&toml_edit::Value>,
    depth: usize,
) -> Result<String, DocError> {
    if depth > MAX_DEPTH {
        return Err(DocError::Unsupported("values nest too deeply".into()));
    }
    Ok(match v {
        Value::Null => {
            return Err(DocError::Unsupported(
                "TOML has no null: the member cannot be set to it".into(),
            ));
        }
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(f)) => toml_edit::Value::from(f).to_string().trim().to_owned(),
            _ => {
                return Err(DocError::Unsupported(format!(
                    "the number {n} is out of range"
                )));
            }
        },
        Value::String(s) => render_string(s, old.and_then(|o| o.span()).map(|s| &text[s])),
        Value::Array(items) => {
            let old_arr = old.and_then(toml_edit::Value::as_array);
            let layout = old_arr
                .and_then(|a| ArrayLayout::of(text, a))
                .unwrap_or_default();
            let model = old_arr.and_then(|a| a.iter().find(|e| e.is_str()));
            let mut parts = Vec::with_capacity(items.len());
            for item in items {
                parts.push(render_value(text, item, model, depth + 1)?);
            }
            if parts.is_empty() {
                "[]".to_owned()
            } else {
                format!(
                    "[{}{}{}]",
                    layout.open,
                    parts.join(&layout.sep),
                    layout.close
                )
            }
        }
        Value::Object(map) => {
            if map.is_empty() {
                return Ok("{}".to_owned());
            }
            let mut parts = Vec::with_capacity(map.len());
            for (k, item) in map {
                let key = toml_edit::Key::new(k.as_str()).display_repr().into_owned();
                parts.push(format!(
                    "{key} = {}",
                    render_value(text, item, None, depth + 1)?
                ));
            }
            format!("{{ {} }}", parts.join(", "))
        }
    })
}

/// A string in the quote style of `old` (a literal `'…'` stays literal when it can).
fn render_string(s: &str, old: Option<&str>) -> String {
    let literal_ok = !s.contains('\'') && !s.chars().any(|c| c.is_control());
    if literal_ok && old.is_some_and(|o| o.starts_with('\'') && !o.starts_with("'''")) {
        return format!("'{s}'");
    }
    super::text::double_quoted(s)
}

/// How an array is laid out: the text after `[`, between elements, and before `]`.
struct ArrayLayout {
    open: String,
    sep: String,
    close: String,
}

impl Default for ArrayLayout {
    fn default() -> Self {
        ArrayLayout {
            open: String::new(),
            sep: ", ".into(),
            close: String::new(),
        }
    }
}

impl ArrayLayout {
    /// The layout of `a` as written, when it has elements and no comments between them.
    fn of(text: &str, a: &toml_edit::Array) -> Option<ArrayLayout> {
        let span = a.span()?;
        let spans: Vec<Range<usize>> = a.iter().map(|e| e.span()).collect::<Option<_>>()?;
        let first = spans.first()?;
        let last = spans.last()?;
        let open = text.get(span.start + 1..first.start)?;
        let close = text.get(last.end..span.end.checked_sub(1)?)?;
        let sep = match spans.get(1) {
            Some(second) => text.get(first.end..second.start)?.to_owned(),
            None if open.contains('\n') => format!(",{open}"),
            None => ", ".to_owned(),
        };
        if open.contains('#') || close.contains('#') || sep.contains('#') || sep.trim() != "," {
            return None;
        }
        Some(ArrayLayout {
            open: open.to_owned(),
            sep,
            close: close.to_owned(),
        })
    }
}
