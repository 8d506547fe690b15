//! The TOML [`Document`] (Codex CLI's `config.toml`, servers under `[mcp_servers.NAME]`).
//!
//! The text is parsed once with `toml_edit` into a span-carrying document; nothing is
//! ever re-serialised. An edit is computed from the spans of the keys and values it
//! touches, so every byte outside them stays as it was: comments, blank lines, key order,
//! quoting, whitespace and line endings.
//!
//! An entry may be written three ways and all are read and edited in their own style:
//! - a table, `[mcp_servers.x]` with `key = value` lines (and subtables such as
//!   `[mcp_servers.x.env]`): a new member is a new line after the table's last one;
//! - dotted keys, `mcp_servers.x.command = "…"` (or `x.command` under `[mcp_servers]`):
//!   a new member is a new line with the same dotted prefix;
//! - an inline table, `x = { command = "…" }`: a new member goes before `}` with the
//!   separator the table already uses.
//!
//! A member whose old and new values are both tables is edited key by key (so the
//! `[mcp_servers.x.env]` subtable keeps its lines); an array keeps the old array's layout
//! (padding, separators, trailing comma) and a string its quote style.
//!
//! Not done: TOML has no null (setting one is refused); a table that exists only through
//! its subtables (no `[mcp_servers.x]` header, no key of its own) takes no new member.

use std::ops::Range;

use serde_json::Value;
use toml_edit::{InlineTable, Item, Table};

use super::document::{DocError, Document, Edit, Entry};
use super::text::{check_size, indent_of, line_end, line_start, newline_of, syntax_at};

/// How deep tables and arrays may nest before the document refuses to walk them.
const MAX_DEPTH: usize = 64;

/// A TOML config file's text, parsed with its spans.
pub struct TomlDocument {
    text: String,
    doc: toml_edit::Document<String>,
}

impl std::fmt::Debug for TomlDocument {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TomlDocument")
            .field("bytes", &self.text.len())
            .finish()
    }
}

impl TomlDocument {
    /// Parses `text`; a syntax error names its line and column.
    pub fn parse(text: &str) -> Result<Self, DocError> {
        check_size(text)?;
        let doc = toml_edit::Document::parse(text.to_owned()).map_err(|e| {
            let at = e.span().map_or(0, |s| s.start);
            syntax_at(text, at, e.message().trim().to_owned())
        })?;
        Ok(TomlDocument {
            text: text.to_owned(),
            doc,
        })
    }

    /// The node at `path` from the root: a table (with its style) or an inline table.
    fn node(&self, path: &[&str]) -> Result<Option<Node<'_>>, DocError> {
        let mut node = Node::Table(self.doc.as_table(), Style::Table);
        for (i, seg) in path.iter().enumerate() {
            let Some(next) = node.child(seg) else {
                return Ok(None);
            };
            match next {
                Some(n) => node = n,
                None => {
                    return Err(DocError::Unsupported(format!(
                        "`{}` is not a table",
                        path[..=i].join(".")
                    )));
                }
            }
        }
        Ok(Some(node))
    }
}

/// How a table's members are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    /// Under a `[header]` (or the root): one `key = value` line each.
    Table,
    /// Dotted keys: `a.b.key = value` lines.
    Dotted,
    /// Inside `{ … }`.
    Inline,
}

/// A table of the document, as written.
#[derive(Clone, Copy)]
enum Node<'a> {
    Table(&'a Table, Style),
    Inline(&'a InlineTable),
}

/// One member of a table, located.
struct Member<'a> {
    key: String,
    /// Where its (first) key starts.
    key_start: usize,
    /// The value's own span, when the member is a plain `key = value`.
    value: Option<&'a toml_edit::Value>,
    /// The bytes that hold the member: whole lines for line styles, key to value inline.
    extent: Range<usize>,
    /// The member as a table, when it is one.
    child: Option<Node<'a>>,
    /// Whether it is written in the table's own lines (not a subtable with a header).
    in_body: bool,
    /// A plain value whose key is the member's own (not dotted further).
    direct: bool,
}

impl<'a> Node<'a> {
    /// The member `key` as a node: `Some(Some(n))` a table, `Some(None)` not a table.
    fn child(&self, key: &str) -> Option<Option<Node<'a>>> {
        let item = match self {
            Node::Table(t, _) => t.get(key)?,
            Node::Inline(t) => t.get_key_value(key)?.1,
        };
        Some(node_of(item))
    }

    fn members(&self, text: &str, depth: usize) -> Result<Vec<Member<'a>>, DocError> {
        if depth > MAX_DEPTH {
            return Err(DocError::Unsupported("tables nest too deeply".into()));
        }
        let mut out = Vec::new();
        match self {
            Node::Table(t, style) => {
                for (key, item) in t.iter() {
                    let Some((k, _)) = t.get_key_value(key) else {
                        continue;
                    };
                    let child = node_of(item);
                    let extent = extent_of(item, depth + 1)?;
                    let Some(extent) = extent else { continue };
                    let in_body = match item {
                        Item::Value(_) => true,
                        Item::Table(st) => st.is_dotted(),
                        _ => false,
                    };
                    let key_start = k.span().map_or(extent.start, |s| s.start);
                    let (extent, key_start) = if *style == Style::Inline {
                        (extent, key_start)
                    } else if in_body {
                        (
                            line_start(text, extent.start)..line_end(text, extent.end),
                            key_start,
                        )
                    } else {
                        (extent.start..line_end(text, extent.end), key_start)
                    };
                    out.push(Member {
                        key: key.to_owned(),
                        key_start,
                        value: item.as_value(),
                        extent,
                        child,
                        in_body,
                        direct: matches!(item, Item::Value(_)),
                    });
                }
            }
            Node::Inline(t) => {
                for (key, value) in t.iter() {
                    let Some((k, item)) = t.get_key_value(key) else {
                        continue;
                    };
                    let Some(extent) = extent_of(item, depth + 1)? else {
                        continue;
                    };
                    let key_start = k.span().map_or(extent.start, |s| s.start);
                    out.push(Member {
                        key: key.to_owned(),
                        key_start,
                        value: Some(value),
                        extent: key_start.min(extent.start)..extent.end,
                        child: node_of(item),
                        in_body: true,
                        direct: true,
                    });
                }
            }
        }
        Ok(out)
    }
}

fn node_of(item: &Item) -> Option<Node<'_>> {
    match item {
        Item::Table(t) if t.is_dotted() => Some(Node::Table(t, Style::Dotted)),
        Item::Table(t) => Some(Node::Table(t, Style::Table)),
        Item::Value(toml_edit::Value::InlineTable(t)) => Some(Node::Inline(t)),
        _ => None,
    }
}

/// The bytes an item occupies (header to last value for tables), `None` when it has
/// no span at all (an empty implicit table).
fn extent_of(item: &Item, depth: usize) -> Result<Option<Range<usize>>, DocError> {
    if depth > MAX_DEPTH {
        return Err(DocError::Unsupported("tables nest too deeply".into()));
    }
    let join = |a: Option<Range<usize>>, b: Range<usize>| match a {
        Some(a) => Some(a.start.min(b.start)..a.end.max(b.end)),
        None => Some(b),
    };
    Ok(match item {
        Item::None => None,
        Item::Value(v) => v.span(),
        Item::Table(t) => {
            let mut acc = t.span().filter(|s| !s.is_empty() && !t.is_dotted());
            for (key, sub) in t.iter() {
                if let Some(s) = extent_of(sub, depth + 1)? {
                    acc = join(acc, s);
                }
                if let Some(s) = t.key(key).and_then(|k| k.span()) {
                    acc = join(acc, s);
                }
            }
            acc
        }
        Item::ArrayOfTables(a) => {
            let mut acc = None;
            for t in a.iter() {
                let item = Item::Table(t.clone());
                if let Some(s) = extent_of(&item, depth + 1)? {
                    acc = join(acc, s);
                }
            }
            acc
        }
    })
}

/// A TOML item read as JSON (datetimes as their text, non-finite floats as text).
fn to_json(item: &Item, depth: usize) -> Result<Value, DocError> {
    if depth > MAX_DEPTH {
        return Err(DocError::Unsupported("values nest too deeply".into()));
    }
    Ok(match item {
        Item::None => Value::Null,
        Item::Value(v) => value_json(v, depth)?,
        Item::Table(t) => {
            let mut map = serde_json::Map::new();
            for (k, v) in t.iter() {
                map.insert(k.to_owned(), to_json(v, depth + 1)?);
            }
            Value::Object(map)
        }
        Item::ArrayOfTables(a) => {
            let mut out = Vec::new();
            for t in a.iter() {
                out.push(to_json(&Item::Table(t.clone()), depth + 1)?);
            }
            Value::Array(out)
        }
    })
}

fn value_json(v: &toml_edit::Value, depth: usize) -> Result<Value, DocError> {
    use toml_edit::Value as V;
    if depth > MAX_DEPTH {
        return Err(DocError::Unsupported("values nest too deeply".into()));
    }
    Ok(match v {
        V::String(s) => Value::String(s.value().clone()),
        V::Integer(i) => Value::from(*i.value()),
        V::Float(f) => serde_json::Number::from_f64(*f.value())
            .map_or_else(|| Value::String(f.value().to_string()), Value::Number),
        V::Boolean(b) => Value::Bool(*b.value()),
        V::Datetime(d) => Value::String(d.value().to_string()),
        V::Array(a) => Value::Array(
            a.iter()
                .map(|e| value_json(e, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        V::InlineTable(t) => {
            let mut map = serde_json::Map::new();
            for (k, item) in t.iter() {
                map.insert(k.to_owned(), value_json(item, depth + 1)?);
            }
            Value::Object(map)
        }
    })
}

impl Document for TomlDocument {
    fn entries(&self, container: &[&str]) -> Result<Vec<Entry>, DocError> {
        let Some(node) = self.node(container)? else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        let items: Vec<(&str, &Item)> = match node {
            Node::Table(t, _) => t.iter().collect(),
            Node::Inline(t) => t
                .iter()
                .filter_map(|(k, _)| t.get_key_value(k).map(|(_, i)| (k, i)))
                .collect(),
        };
        for (name, item) in items {
            let Some(extent) = extent_of(item, 1)? else {
                continue;
            };
            let span = match node_of(item) {
                Some(Node::Table(_, Style::Dotted)) => {
                    line_start(&self.text, extent.start)..line_end(&self.text, extent.end)
                }
                Some(Node::Table(..)) => extent.start..line_end(&self.text, extent.end),
                _ => extent,
            };
            let mut path: Vec<String> = container.iter().map(|s| (*s).to_owned()).collect();
            path.push(name.to_owned());
            out.push(Entry {
                path,
                span,
                value: to_json(item, 1)?,
            });
        }
        Ok(out)
    }

    fn set_member(
        &self,
        entry: &Entry,
        key: &str,
        value: Option<&Value>,
    ) -> Result<Vec<Edit>, DocError> {
        let path: Vec<&str> = entry.path.iter().map(String::as_str).collect();
        let node = match self.node(&path) {
            Ok(Some(n)) => n,
            Ok(None) => {
                return Err(DocError::Unsupported(format!(
                    "entry `{}` is no longer in the file",
                    entry.name()
                )));
            }
            Err(_) => {
                return Err(DocError::Unsupported(format!(
                    "entry `{}` is not a table",
                    entry.name()
                )));
            }
        };
        let mut edits = Vec::new();
        self.set_in(node, key, value, &mut edits, 0)?;
        // A removed `[table]` takes the blank lines before it, but never those before the
        // entry: when the table is the entry's first line, they belong to what precedes.
        for edit in &mut edits {
            if edit.span.start < entry.span.start && entry.span.start <= edit.span.end {
                edit.span.start = entry.span.start;
            }
        }
        super::text::verified(&self.text, entry, key, value, edits, TomlDocument::parse)
    }
}

/// The start of the blank lines just before the line of `at`, when that line holds only
/// spaces before `at` and blank lines precede it.
fn blank_lines_before(text: &str, at: usize) -> Option<usize> {
    let mut start = line_start(text, at);
    if !text[start..at].trim().is_empty() {
        return None;
    }
    let line = start;
    while start > 0 {
        let prev = line_start(text, start - 1);
        if !text[prev..start].trim().is_empty() {
            break;
        }
        start = prev;
    }
    (start < line).then_some(start)
}

impl TomlDocument {
    fn set_in(
        &self,
        node: Node<'_>,
        key: &str,
        new: Option<&Value>,
        edits: &mut Vec<Edit>,
        depth: usize,
    ) -> Result<(), DocError> {
        if depth > MAX_DEPTH {
            return Err(DocError::Unsupported("values nest too deeply".into()));
        }
        let members = node.members(&self.text, depth)?;
        let found = members.iter().position(|m| m.key == key);
        match (found, new) {
            (None, None) => Ok(()),
            (Some(i), None) => {
                edits.push(self.removal(node, &members, i));
                Ok(())
            }
            (None, Some(v)) => {
                edits.push(self.addition(node, &members, key, v)?);
                Ok(())
            }
            (Some(i), Some(v)) => {
                let m = &members[i];
                let old = match (node, m.value) {
                    (_, Some(val)) => value_json(val, 0)?,
                    (Node::Table(t, _), None) => match t.get(key) {
                        Some(item) => to_json(item, 0)?,
                        None => Value::Null,
                    },
                    (Node::Inline(_), None) => Value::Null,
                };
                if &old == v {
                    return Ok(());
                }
                // Key by key, except an inline table that loses keys: its separators
                // would not survive separate edits, so it is written anew.
                if let (Some(child), Value::Object(new_map), Value::Object(old_map)) =
                    (m.child, v, &old)
                    && !(matches!(child, Node::Inline(_))
                        && old_map.keys().any(|k| !new_map.contains_key(k)))
                {
                    for (k, nv) in new_map {
                        self.set_in(child, k, Some(nv), edits, depth + 1)?;
                    }
                    for k in old_map.keys().filter(|k| !new_map.contains_key(*k)) {
                        self.set_in(child, k, None, edits, depth + 1)?;
                    }
                    return Ok(());
                }
                let Some(val) = m.value.filter(|_| m.direct) else {
                    return Err(DocError::Unsupported(format!(
                        "`{key}` is written as a table; it can only be replaced by a table"
                    )));
                };
                let span = val.span().ok_or_else(|| {
                    DocError::Unsupported(format!("`{key}` has no position in the file"))
                })?;
                edits.push(Edit {
                    span,
                    text: self.render(v, Some(val))?,
                });
                Ok(())
            }
        }
    }

    fn removal(&self, node: Node<'_>, members: &[Member<'_>], i: usize) -> Edit {
        let m = &members[i];
        let span = match node {
            Node::Inline(_) => {
                if members.len() == 1 {
                    m.key_start..m.extent.end
                } else if i == 0 {
                    m.key_start..members[1].key_start
                } else {
                    members[i - 1].extent.end..m.extent.end
                }
            }
            // A `[table]` of its own takes the blank lines before it along: the blank
            // lines after it then part what it parted, and none is left at the end.
            Node::Table(..) if !m.in_body => {
                blank_lines_before(&self.text, m.extent.start).unwrap_or(m.extent.start)
                    ..m.extent.end
            }
            Node::Table(..) => m.extent.clone(),
        };
        Edit {
            span,
            text: String::new(),
        }
    }

    fn addition(
        &self,
        node: Node<'_>,
        members: &[Member<'_>],
        key: &str,
        v: &Value,
    ) -> Result<Edit, DocError> {
        let text = &self.text;
        let key_repr = toml_edit::Key::new(key).display_repr().into_owned();
        let rendered = self.render(v, None)?;
        let nl = newline_of(text);
        let line = |at: usize, prefix: &str, indent: &str| {
            let lead = if at == text.len() && !text.is_empty() && !text.ends_with('\n') {
                nl
            } else {
                ""
            };
            Edit {
                span: at..at,
                text: format!("{lead}{indent}{prefix}{key_repr} = {rendered}{nl}"),
            }
        };
        match node {
            Node::Table(t, Style::Table) => {
                let body: Vec<&Member<'_>> = members.iter().filter(|m| m.in_body).collect();
                if let Some(last) = body.iter().max_by_key(|m| m.extent.end) {
                    let indent = indent_of(text, last.key_start).to_owned();
                    Ok(line(last.extent.end, "", &indent))
                } else if let Some(h) = t.span().filter(|s| !s.is_empty() && !t.is_implicit()) {
                    Ok(line(line_end(text, h.end), "", ""))
                } else {
                    Err(DocError::Unsupported(
                        "the table has no header or key of its own to add a member after".into(),
                    ))
                }
            }
            Node::Table(_, _) => {
                let last = members
                    .iter()
                    .max_by_key(|m| m.extent.end)
                    .ok_or_else(|| DocError::Unsupported("an empty dotted table".into()))?;
                let model = members.iter().find(|m| m.direct).ok_or_else(|| {
                    DocError::Unsupported(
                        "a dotted table with no key of its own to copy the prefix from".into(),
                    )
                })?;
                let indent = indent_of(text, model.key_start);
                let from = line_start(text, model.key_start) + indent.len();
                let prefix = &text[from..model.key_start];
                Ok(line(last.extent.end, prefix, indent))
            }
            Node::Inline(t) => {
                if let Some(last) = members.last() {
                    let sep = match members.get(1) {
                        Some(second) => &text[members[0].extent.end..second.key_start],
                        None => ", ",
                    };
                    let sep = if sep.contains('#') || sep.trim() != "," {
                        if sep.contains('\n') { ",\n" } else { ", " }
                    } else {
                        sep
                    };
                    Ok(Edit {
                        span: last.extent.end..last.extent.end,
                        text: format!("{sep}{key_repr} = {rendered}"),
                    })
                } else {
                    let span = t.span().ok_or_else(|| {
                        DocError::Unsupported("an inline table with no position".into())
                    })?;
                    Ok(Edit {
                        span,
                        text: format!("{{ {key_repr} = {rendered} }}"),
                    })
                }
            }
        }
    }

    /// `v` as TOML text, in the style of `old` (the value it replaces) where it has one.
    fn render(&self, v: &Value, old: Option<&toml_edit::Value>) -> Result<String, DocError> {
        super::toml_render::render_value(&self.text, v, old, 0)
    }
}

#[cfg(test)]
#[path = "toml_tests.rs"]
mod tests;
