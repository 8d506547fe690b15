//! The YAML [`Document`] (Goose's `config.yaml`, servers under `extensions:`).
//!
//! The text is parsed once into a tree of nodes with byte spans (`yaml_tree.rs`, over
//! `saphyr-parser`) and never re-serialised: an edit replaces, inserts or removes the
//! bytes of one member, so comments, indentation, block or flow style and quoting
//! elsewhere stay as they were.
//!
//! Style of what is written: a new member of a block mapping is a new line at the
//! indentation of its siblings; of a flow mapping, a new `key: value` before `}` with the
//! separator already used. A block sequence that is replaced stays a block sequence with
//! the same dash indentation; strings stay plain where YAML reads them back as the same
//! string, else take the quote style of the value they replace (or of the entry).
//! Two mappings are edited key by key.
//!
//! Refused, never guessed: a second document in the file (an error), and edits of an
//! entry that holds an anchor, alias or tag (editing one place of a shared node would
//! change others); such an entry is still read, its aliases resolved within a budget.

use saphyr_parser::ScalarStyle;
use serde_json::Value;

use super::document::{DocError, Document, Edit, Entry};
use super::text::{indent_of, line_end, line_start, newline_of, starts_line};
use super::yaml_render::{Quote, flow_value, key_repr};
use super::yaml_tree::{Kind, NodeId, Tree};

/// How deep a value may nest before the document refuses to read it.
const MAX_DEPTH: usize = 64;
/// How many nodes reading one entry may visit (aliases can multiply them).
const MAX_VISITS: usize = 100_000;

/// A YAML config file's text, parsed with its spans.
#[derive(Debug)]
pub struct YamlDocument {
    text: String,
    tree: Tree,
}

impl YamlDocument {
    /// Parses `text`; a syntax error names its line and column.
    pub fn parse(text: &str) -> Result<Self, DocError> {
        Ok(YamlDocument {
            tree: Tree::parse(text)?,
            text: text.to_owned(),
        })
    }

    fn line_of(&self, at: usize) -> usize {
        self.text.as_bytes()[..at.min(self.text.len())]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }

    /// The mapping at `path`: `Ok(None)` when absent or empty (`extensions:` alone).
    fn map_at(&self, path: &[&str]) -> Result<Option<NodeId>, DocError> {
        let Some(mut node) = self.tree.root else {
            return Ok(None);
        };
        for (i, seg) in std::iter::once(&"").chain(path).enumerate() {
            if i > 0 {
                match self.tree.get(node, seg) {
                    Some((_, v)) => node = v,
                    None => return Ok(None),
                }
            }
            match &self.tree.nodes[node].kind {
                Kind::Map(_) => {}
                Kind::Scalar(s, ScalarStyle::Plain) if is_null(s) => return Ok(None),
                _ => {
                    return Err(DocError::Unsupported(format!(
                        "`{}` is not a mapping (line {})",
                        if i == 0 {
                            "the document".to_owned()
                        } else {
                            path[..i].join(".")
                        },
                        self.line_of(self.tree.nodes[node].span.start)
                    )));
                }
            }
        }
        Ok(Some(node))
    }

    fn to_json(&self, id: NodeId, depth: usize, visits: &mut usize) -> Result<Value, DocError> {
        *visits += 1;
        if depth > MAX_DEPTH || *visits > MAX_VISITS {
            return Err(DocError::Unsupported(format!(
                "the value at line {} nests or repeats (aliases) too much to read",
                self.line_of(self.tree.nodes[id].span.start)
            )));
        }
        let node = &self.tree.nodes[id];
        Ok(match &node.kind {
            Kind::Scalar(s, ScalarStyle::Plain) => plain_json(s),
            Kind::Scalar(s, _) => Value::String(s.clone()),
            Kind::Seq(items) => Value::Array(
                items
                    .iter()
                    .map(|&c| self.to_json(c, depth + 1, visits))
                    .collect::<Result<_, _>>()?,
            ),
            Kind::Map(pairs) => {
                let mut map = serde_json::Map::new();
                for &(k, v) in pairs {
                    let key = self.tree.key_text(k).ok_or_else(|| {
                        DocError::Unsupported(format!(
                            "a key that is not a scalar at line {}",
                            self.line_of(self.tree.nodes[k].span.start)
                        ))
                    })?;
                    map.insert(key.to_owned(), self.to_json(v, depth + 1, visits)?);
                }
                Value::Object(map)
            }
            Kind::Alias(Some(target)) => self.to_json(*target, depth + 1, visits)?,
            Kind::Alias(None) => {
                return Err(DocError::Unsupported(format!(
                    "an alias to an unknown anchor at line {}",
                    self.line_of(node.span.start)
                )));
            }
        })
    }

    /// The quote style the entry already uses for strings that need quotes.
    fn quote_of(&self, entry: NodeId) -> Quote {
        let mut todo = vec![entry];
        while let Some(n) = todo.pop() {
            match &self.tree.nodes[n].kind {
                Kind::Scalar(_, ScalarStyle::DoubleQuoted) => return Quote::Double,
                Kind::Scalar(_, ScalarStyle::SingleQuoted) => return Quote::Single,
                Kind::Seq(items) => todo.extend(items.iter().rev()),
                Kind::Map(pairs) => todo.extend(pairs.iter().rev().flat_map(|&(k, v)| [v, k])),
                _ => {}
            }
        }
        Quote::Single
    }
}

/// A plain scalar read the way YAML (and serde_yaml, which Goose uses) reads it.
fn plain_json(s: &str) -> Value {
    if is_null(s) {
        return Value::Null;
    }
    match s {
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    if let Ok(i) = s.parse::<i64>() {
        return Value::from(i);
    }
    if s.chars().any(|c| c.is_ascii_digit())
        && !s.contains(['x', 'o', 'X', 'O'])
        && let Ok(f) = s.parse::<f64>()
        && let Some(n) = serde_json::Number::from_f64(f)
    {
        return Value::Number(n);
    }
    Value::String(s.to_owned())
}

fn is_null(s: &str) -> bool {
    matches!(s, "" | "~" | "null" | "Null" | "NULL")
}

impl Document for YamlDocument {
    fn entries(&self, container: &[&str]) -> Result<Vec<Entry>, DocError> {
        let Some(map) = self.map_at(container)? else {
            return Ok(Vec::new());
        };
        let Kind::Map(pairs) = &self.tree.nodes[map].kind else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for &(k, v) in pairs {
            let Some(name) = self.tree.key_text(k) else {
                continue;
            };
            let node = &self.tree.nodes[v];
            let span = if node.flow || !matches!(node.kind, Kind::Map(_) | Kind::Seq(_)) {
                node.span.clone()
            } else {
                // A block collection owns its lines, indentation included.
                let start = if starts_line(&self.text, node.span.start) {
                    line_start(&self.text, node.span.start)
                } else {
                    node.span.start
                };
                start..line_end(&self.text, node.span.end.saturating_sub(1))
            };
            let mut path: Vec<String> = container.iter().map(|s| (*s).to_owned()).collect();
            path.push(name.to_owned());
            out.push(Entry {
                path,
                span,
                value: self.to_json(v, 1, &mut 0)?,
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
        let (parent, name) = path.split_at(path.len().saturating_sub(1));
        let map = self.map_at(parent)?;
        let node = map
            .and_then(|m| name.first().and_then(|n| self.tree.get(m, n)))
            .map(|(_, v)| v)
            .ok_or_else(|| {
                DocError::Unsupported(format!("entry `{}` is no longer in the file", entry.name()))
            })?;
        if let Some(n) = self.tree.has_special(node) {
            return Err(DocError::Unsupported(format!(
                "entry `{}` uses a YAML anchor, alias or tag (line {}); edit it by hand",
                entry.name(),
                self.line_of(self.tree.nodes[n].span.start)
            )));
        }
        if !matches!(self.tree.nodes[node].kind, Kind::Map(_)) {
            return Err(DocError::Unsupported(format!(
                "entry `{}` is not a mapping",
                entry.name()
            )));
        }
        let mut edits = Vec::new();
        let quote = self.quote_of(node);
        self.set_in(node, key, value, quote, &mut edits, 0)?;
        super::text::verified(&self.text, entry, key, value, edits, YamlDocument::parse)
    }
}

impl YamlDocument {
    fn set_in(
        &self,
        map: NodeId,
        key: &str,
        new: Option<&Value>,
        quote: Quote,
        edits: &mut Vec<Edit>,
        depth: usize,
    ) -> Result<(), DocError> {
        if depth > MAX_DEPTH {
            return Err(DocError::Unsupported("values nest too deeply".into()));
        }
        let Kind::Map(pairs) = &self.tree.nodes[map].kind else {
            return Err(DocError::Unsupported("not a mapping".into()));
        };
        if pairs.iter().any(|&(_, v)| self.keyless_empty(v)) {
            return Err(DocError::Unsupported(format!(
                "a mapping with a key and no `:` (line {}); edit it by hand",
                self.line_of(self.tree.nodes[map].span.start)
            )));
        }
        let found = pairs
            .iter()
            .position(|&(k, _)| self.tree.key_text(k) == Some(key));
        match (found, new) {
            (None, None) => Ok(()),
            (Some(i), None) => {
                edits.push(self.removal(map, pairs, i)?);
                Ok(())
            }
            (None, Some(v)) => {
                edits.push(self.addition(map, pairs, key, v, quote)?);
                Ok(())
            }
            (Some(i), Some(v)) => {
                let (k, old) = pairs[i];
                let old_json = self.to_json(old, 0, &mut 0)?;
                if &old_json == v {
                    return Ok(());
                }
                // Key by key, except a flow mapping that loses keys, or a block one
                // that loses them all: that one is written anew.
                if let (Kind::Map(_), Value::Object(new_map), Value::Object(old_map)) =
                    (&self.tree.nodes[old].kind, v, &old_json)
                    && !(old_map.keys().any(|k| !new_map.contains_key(k))
                        && (self.tree.nodes[old].flow
                            || !old_map.keys().any(|k| new_map.contains_key(k))))
                {
                    for (nk, nv) in new_map {
                        self.set_in(old, nk, Some(nv), quote, edits, depth + 1)?;
                    }
                    for ok in old_map.keys().filter(|ok| !new_map.contains_key(*ok)) {
                        self.set_in(old, ok, None, quote, edits, depth + 1)?;
                    }
                    return Ok(());
                }
                edits.push(self.replacement(k, old, v, quote)?);
                Ok(())
            }
        }
    }

    /// An empty value whose key has no `:` (`{a}`, `? a`): it has no place to edit.
    fn keyless_empty(&self, id: NodeId) -> bool {
        let node = &self.tree.nodes[id];
        matches!(&node.kind, Kind::Scalar(s, ScalarStyle::Plain) if s.is_empty())
            && !self.text[..node.span.start.min(self.text.len())].ends_with(':')
    }

    /// The edit that makes the value `old` of key `k` into `v`.
    fn replacement(
        &self,
        k: NodeId,
        old: NodeId,
        v: &Value,
        quote: Quote,
    ) -> Result<Edit, DocError> {
        let text = &self.text;
        let node = &self.tree.nodes[old];
        let nl = newline_of(text);
        match (&node.kind, v) {
            (Kind::Seq(items), Value::Array(new)) if !node.flow && !new.is_empty() => {
                let model = items.iter().find_map(|&c| match &self.tree.nodes[c].kind {
                    Kind::Scalar(_, ScalarStyle::DoubleQuoted) => Some(Quote::Double),
                    Kind::Scalar(_, ScalarStyle::SingleQuoted) => Some(Quote::Single),
                    _ => None,
                });
                let indent = &text[line_start(text, node.span.start)..node.span.start];
                if !starts_line(text, node.span.start) {
                    return Err(DocError::Unsupported(
                        "a sequence that shares its line".into(),
                    ));
                }
                let mut parts = Vec::with_capacity(new.len());
                for item in new {
                    parts.push(format!(
                        "- {}",
                        flow_value(item, model.unwrap_or(quote), false)?
                    ));
                }
                Ok(Edit {
                    span: node.span.clone(),
                    text: parts.join(&format!("{nl}{indent}")),
                })
            }
            (Kind::Scalar(_, _), _) if node.span.is_empty() => Ok(Edit {
                // `key:` with nothing after it: the value goes after the colon.
                span: node.span.clone(),
                text: format!(" {}", flow_value(v, quote, false)?),
            }),
            (Kind::Scalar(_, style), _)
                if !matches!(style, ScalarStyle::Literal | ScalarStyle::Folded) =>
            {
                let q = match style {
                    ScalarStyle::DoubleQuoted => Quote::Double,
                    ScalarStyle::SingleQuoted => Quote::Single,
                    _ => quote,
                };
                Ok(Edit {
                    span: node.span.clone(),
                    text: flow_value(v, q, false)?,
                })
            }
            _ if node.flow => Ok(Edit {
                span: node.span.clone(),
                text: flow_value(v, quote, false)?,
            }),
            _ => {
                // A block value (or a block scalar): everything after the key's colon.
                let after_key = self.tree.nodes[k].span.end;
                let colon = text[after_key..]
                    .find(':')
                    .map(|i| after_key + i + 1)
                    .filter(|&c| c <= node.span.start)
                    .ok_or_else(|| DocError::Unsupported("a key without its colon".into()))?;
                Ok(Edit {
                    span: colon..node.span.end,
                    text: format!(" {}", flow_value(v, quote, false)?),
                })
            }
        }
    }

    fn removal(&self, map: NodeId, pairs: &[(NodeId, NodeId)], i: usize) -> Result<Edit, DocError> {
        let text = &self.text;
        let nodes = &self.tree.nodes;
        let (k, v) = pairs[i];
        let span = if nodes[map].flow {
            if pairs.len() == 1 {
                nodes[map].span.start + 1..nodes[map].span.end - 1
            } else if i == 0 {
                nodes[k].span.start..nodes[pairs[1].0].span.start
            } else {
                nodes[pairs[i - 1].1].span.end..nodes[v].span.end
            }
        } else {
            if !starts_line(text, nodes[k].span.start) || pairs.len() == 1 {
                return Err(DocError::Unsupported(format!(
                    "`{}` cannot be removed from its line",
                    self.tree.key_text(k).unwrap_or("")
                )));
            }
            let end = nodes[v].span.end.max(nodes[k].span.end);
            line_start(text, nodes[k].span.start)
                ..line_end(text, end.saturating_sub(1).max(nodes[k].span.start))
        };
        Ok(Edit {
            span,
            text: String::new(),
        })
    }

    fn addition(
        &self,
        map: NodeId,
        pairs: &[(NodeId, NodeId)],
        key: &str,
        v: &Value,
        quote: Quote,
    ) -> Result<Edit, DocError> {
        let text = &self.text;
        let nodes = &self.tree.nodes;
        let node = &nodes[map];
        let k = key_repr(key, quote);
        if node.flow {
            let Some(&(_, last)) = pairs.last() else {
                return Ok(Edit {
                    span: node.span.clone(),
                    text: format!("{{{k}: {}}}", flow_value(v, quote, true)?),
                });
            };
            let sep = match pairs.get(1) {
                Some(&(second, _)) => &text[nodes[pairs[0].1].span.end..nodes[second].span.start],
                None => ", ",
            };
            let sep = if sep.trim() == "," { sep } else { ", " };
            let at = nodes[last].span.end;
            return Ok(Edit {
                span: at..at,
                text: format!("{sep}{k}: {}", flow_value(v, quote, true)?),
            });
        }
        let &(first_key, _) = pairs
            .first()
            .ok_or_else(|| DocError::Unsupported("an empty block mapping".into()))?;
        let col = nodes[first_key].span.start - line_start(text, nodes[first_key].span.start);
        let indent = if starts_line(text, nodes[first_key].span.start) {
            indent_of(text, nodes[first_key].span.start).to_owned()
        } else {
            " ".repeat(col)
        };
        if indent.contains('\t')
            || text[line_start(text, nodes[first_key].span.start)..nodes[first_key].span.start]
                .contains('\t')
        {
            // YAML indents with spaces only; a tab there is not ours to copy.
            return Err(DocError::Unsupported(format!(
                "a tab before `{}` (line {})",
                self.tree.key_text(first_key).unwrap_or(""),
                self.line_of(nodes[first_key].span.start)
            )));
        }
        let last_end = pairs
            .iter()
            .map(|&(k, v)| nodes[v].span.end.max(nodes[k].span.end))
            .max()
            .unwrap_or(node.span.end);
        let at = line_end(text, last_end.saturating_sub(1));
        let nl = newline_of(text);
        let lead = if at == text.len() && !text.ends_with('\n') {
            nl
        } else {
            ""
        };
        let body = match v {
            Value::Object(m) if !m.is_empty() => {
                let step = self.step_of(map).unwrap_or(2);
                let inner = format!("{indent}{}", " ".repeat(step));
                let mut s = String::from(":");
                for (ck, cv) in m {
                    s.push_str(&format!(
                        "{nl}{inner}{}: {}",
                        key_repr(ck, quote),
                        flow_value(cv, quote, false)?
                    ));
                }
                s
            }
            Value::Array(items) if !items.is_empty() && self.dash_offset().is_some() => {
                let dash = " ".repeat(self.dash_offset().unwrap_or(0));
                let mut s = String::from(":");
                for item in items {
                    s.push_str(&format!(
                        "{nl}{indent}{dash}- {}",
                        flow_value(item, quote, false)?
                    ));
                }
                s
            }
            _ => format!(": {}", flow_value(v, quote, false)?),
        };
        Ok(Edit {
            span: at..at,
            text: format!("{lead}{indent}{k}{body}{nl}"),
        })
    }

    /// How far the file's first block sequence under a key puts its dashes past the
    /// key (0 for Goose's own `args:\n- a`), so a new sequence looks like the others.
    fn dash_offset(&self) -> Option<usize> {
        let nodes = &self.tree.nodes;
        let col = |at: usize| at - line_start(&self.text, at);
        nodes.iter().find_map(|n| match &n.kind {
            Kind::Map(pairs) if !n.flow => pairs.iter().find_map(|&(k, v)| {
                let seq = &nodes[v];
                (matches!(seq.kind, Kind::Seq(_))
                    && !seq.flow
                    && starts_line(&self.text, seq.span.start)
                    && starts_line(&self.text, nodes[k].span.start))
                .then(|| col(seq.span.start).checked_sub(col(nodes[k].span.start)))
                .flatten()
            }),
            _ => None,
        })
    }

    /// How far a nested block mapping of `map` is indented past `map`'s own keys.
    fn step_of(&self, map: NodeId) -> Option<usize> {
        let nodes = &self.tree.nodes;
        let Kind::Map(pairs) = &nodes[map].kind else {
            return None;
        };
        let col = |id: NodeId| nodes[id].span.start - line_start(&self.text, nodes[id].span.start);
        let (k0, _) = pairs.first()?;
        pairs.iter().find_map(|&(_, v)| match &nodes[v].kind {
            Kind::Map(inner) if !nodes[v].flow => {
                let (ik, _) = inner.first()?;
                col(*ik).checked_sub(col(*k0)).filter(|&s| s > 0)
            }
            _ => None,
        })
    }
}

#[cfg(test)]
#[path = "yaml_tests.rs"]
mod tests;
