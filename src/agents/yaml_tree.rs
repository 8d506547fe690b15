//! A YAML text as a tree of nodes with byte spans, built from `saphyr-parser`'s events
//! without recursion (any depth of nesting builds; walks of it are bounded elsewhere).
//!
//! The parser's markers count characters; spans here are byte offsets into the text.
//! Block collections have no end token, so their span ends where their last child ends;
//! block scalars (`|`, `>`) end at their last content line.

use std::ops::Range;

use saphyr_parser::{Event, Parser, ScalarStyle};

use super::document::DocError;
use super::text::{check_size, syntax_at};

/// A node's index in [`Tree::nodes`].
pub type NodeId = usize;

/// What a node is.
#[derive(Debug, Clone)]
pub enum Kind {
    /// A scalar: its value as the parser read it, and how it was written.
    Scalar(String, ScalarStyle),
    /// A sequence and its items.
    Seq(Vec<NodeId>),
    /// A mapping and its (key, value) pairs in file order.
    Map(Vec<(NodeId, NodeId)>),
    /// `*name`: the node that defined the anchor, when it came earlier.
    Alias(Option<NodeId>),
}

/// One node of the tree.
#[derive(Debug, Clone)]
pub struct Node {
    /// What it is.
    pub kind: Kind,
    /// Its bytes in the text (for a block scalar, from its first content byte).
    pub span: Range<usize>,
    /// Written `{…}` / `[…]` (flow) rather than as indented lines (block).
    pub flow: bool,
    /// It defines an anchor (`&name`), has a tag (`!x`), or is an alias.
    pub special: bool,
}

/// A parsed YAML text of one document.
#[derive(Debug)]
pub struct Tree {
    /// Every node, parents before their children.
    pub nodes: Vec<Node>,
    /// The document's root, `None` for an empty document.
    pub root: Option<NodeId>,
}

/// Byte offset of each character index (only built for non-ASCII text).
struct Offsets(Option<Vec<usize>>);

impl Offsets {
    fn new(text: &str) -> Self {
        if text.is_ascii() {
            return Offsets(None);
        }
        let mut v: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        v.push(text.len());
        Offsets(Some(v))
    }

    fn byte(&self, char_index: usize, len: usize) -> usize {
        match &self.0 {
            None => char_index.min(len),
            Some(v) => v.get(char_index).copied().unwrap_or(len),
        }
    }
}

/// The position of the `-` that opens the block sequence item at `at`.
fn dash_before(text: &str, at: usize) -> usize {
    let bytes = text.as_bytes();
    if bytes.get(at) == Some(&b'-')
        && matches!(bytes.get(at + 1), None | Some(b' ' | b'\t' | b'\n' | b'\r'))
    {
        return at;
    }
    let mut i = at;
    while i > 0 && matches!(bytes[i - 1], b' ' | b'\t') {
        i -= 1;
    }
    if i > 0 && bytes[i - 1] == b'-' {
        i - 1
    } else {
        at
    }
}

/// An open collection while the events are read.
struct Open {
    id: NodeId,
    /// A mapping's key waiting for its value.
    key: Option<NodeId>,
}

impl Tree {
    /// Parses `text`; a syntax error names its line and column; a second document is
    /// refused (an agent's config is one document).
    pub fn parse(text: &str) -> Result<Tree, DocError> {
        check_size(text)?;
        // YAML takes a lone CR for a line break; the edits count lines by LF (and CRLF).
        if let Some(i) = text
            .bytes()
            .enumerate()
            .position(|(i, b)| b == b'\r' && text.as_bytes().get(i + 1) != Some(&b'\n'))
        {
            return Err(syntax_at(text, i, "a carriage return without a line feed"));
        }
        let offsets = Offsets::new(text);
        let mut nodes: Vec<Node> = Vec::new();
        let mut stack: Vec<Open> = Vec::new();
        let mut anchors: std::collections::HashMap<usize, NodeId> = Default::default();
        let mut root = None;
        let mut documents = 0;
        for ev in Parser::new_from_str(text) {
            let (ev, span) = ev.map_err(|e| {
                let at = offsets.byte(e.marker().index(), text.len());
                syntax_at(text, at, e.info().to_owned())
            })?;
            let start = offsets.byte(span.start.index(), text.len());
            let end = offsets.byte(span.end.index(), text.len()).max(start);
            let (kind, anchor, special, flow) = match ev {
                Event::DocumentStart(_) => {
                    documents += 1;
                    if documents > 1 {
                        return Err(DocError::Unsupported(format!(
                            "a second YAML document starts at line {}: a config has one",
                            span.start.line()
                        )));
                    }
                    continue;
                }
                Event::StreamStart | Event::StreamEnd | Event::DocumentEnd | Event::Nothing => {
                    continue;
                }
                Event::SequenceEnd | Event::MappingEnd => {
                    let open = stack.pop().ok_or_else(|| {
                        syntax_at(text, start, "a collection ends that never started")
                    })?;
                    let node = &nodes[open.id];
                    let new_end = if node.flow {
                        end
                    } else {
                        match &node.kind {
                            Kind::Seq(items) => items.last().map(|&c| nodes[c].span.end),
                            Kind::Map(pairs) => pairs.last().map(|&(_, v)| nodes[v].span.end),
                            _ => None,
                        }
                        .unwrap_or(node.span.start)
                    };
                    let start = nodes[open.id].span.start;
                    nodes[open.id].span = start..new_end.max(start);
                    Self::attach(&mut nodes, &mut stack, open.id, text, &mut root)?;
                    continue;
                }
                Event::Alias(id) => (Kind::Alias(anchors.get(&id).copied()), 0, true, false),
                Event::Scalar(value, style, anchor, tag) => (
                    Kind::Scalar(value.into_owned(), style),
                    anchor,
                    anchor != 0 || tag.is_some(),
                    false,
                ),
                Event::SequenceStart(anchor, tag) => (
                    Kind::Seq(Vec::new()),
                    anchor,
                    anchor != 0 || tag.is_some(),
                    text.as_bytes().get(start) == Some(&b'['),
                ),
                Event::MappingStart(anchor, tag) => (
                    Kind::Map(Vec::new()),
                    anchor,
                    anchor != 0 || tag.is_some(),
                    text.as_bytes().get(start) == Some(&b'{'),
                ),
            };
            let is_collection = matches!(kind, Kind::Seq(_) | Kind::Map(_));
            // A block sequence's mark may sit at its first item, after the dash.
            let start = match kind {
                Kind::Seq(_) if !flow => dash_before(text, start),
                _ => start,
            };
            let span = match &kind {
                Kind::Scalar(_, ScalarStyle::Literal | ScalarStyle::Folded) => {
                    let body = &text[start..end];
                    start..start + body.trim_end_matches([' ', '\t']).len()
                }
                _ => start..end,
            };
            let id = nodes.len();
            nodes.push(Node {
                kind,
                span,
                flow,
                special,
            });
            if anchor != 0 {
                anchors.insert(anchor, id);
            }
            if is_collection {
                stack.push(Open { id, key: None });
            } else {
                Self::attach(&mut nodes, &mut stack, id, text, &mut root)?;
            }
        }
        Self::check_unique_keys(&nodes, text)?;
        Ok(Tree { nodes, root })
    }

    /// A mapping with a key twice is an error (YAML forbids it, and Goose's serde_yaml
    /// refuses the file): an edit would change one of the two and reading takes the other.
    fn check_unique_keys(nodes: &[Node], text: &str) -> Result<(), DocError> {
        let mut seen = std::collections::HashSet::new();
        for node in nodes {
            let Kind::Map(pairs) = &node.kind else {
                continue;
            };
            seen.clear();
            for &(k, _) in pairs {
                if let Kind::Scalar(key, _) = &nodes[k].kind
                    && !seen.insert(key.as_str())
                {
                    return Err(syntax_at(
                        text,
                        nodes[k].span.start,
                        format!("duplicate key `{}`", crate::term::line(key)),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Adds a finished node to the collection open on top of the stack (or makes it the
    /// root).
    fn attach(
        nodes: &mut [Node],
        stack: &mut [Open],
        id: NodeId,
        text: &str,
        root: &mut Option<NodeId>,
    ) -> Result<(), DocError> {
        let Some(top) = stack.last_mut() else {
            *root = Some(id);
            return Ok(());
        };
        let parent = top.id;
        match &mut nodes[parent].kind {
            Kind::Seq(items) => items.push(id),
            Kind::Map(pairs) => match top.key.take() {
                None => top.key = Some(id),
                Some(k) => {
                    pairs.push((k, id));
                    // An empty value (`key:` alone) is marked at its key or where the
                    // next token is, maybe lines later: it is placed after the colon.
                    let (key_end, value) = (nodes[k].span.end, &nodes[id]);
                    if value.span.is_empty() && matches!(value.kind, Kind::Scalar(..)) {
                        let rest = text.get(key_end..).unwrap_or("");
                        let gap = rest.len() - rest.trim_start_matches([' ', '\t']).len();
                        if rest[gap..].starts_with(':') {
                            let at = key_end + gap + 1;
                            nodes[id].span = at..at;
                        }
                    }
                }
            },
            _ => {
                return Err(syntax_at(
                    text,
                    nodes[id].span.start,
                    "a value outside any collection",
                ));
            }
        }
        Ok(())
    }

    /// The scalar text of a mapping key, `None` for a key that is not a plain scalar.
    pub fn key_text(&self, id: NodeId) -> Option<&str> {
        match &self.nodes[id].kind {
            Kind::Scalar(s, _) => Some(s),
            _ => None,
        }
    }

    /// The value of `key` in mapping `map`, with the key's node.
    pub fn get(&self, map: NodeId, key: &str) -> Option<(NodeId, NodeId)> {
        match &self.nodes[map].kind {
            Kind::Map(pairs) => pairs
                .iter()
                .copied()
                .find(|&(k, _)| self.key_text(k) == Some(key)),
            _ => None,
        }
    }

    /// Whether `id` or anything under it is an anchor, alias or tagged node.
    pub fn has_special(&self, id: NodeId) -> Option<NodeId> {
        let mut todo = vec![id];
        while let Some(n) = todo.pop() {
            let node = &self.nodes[n];
            if node.special {
                return Some(n);
            }
            match &node.kind {
                Kind::Seq(items) => todo.extend(items),
                Kind::Map(pairs) => todo.extend(pairs.iter().flat_map(|&(k, v)| [k, v])),
                _ => {}
            }
        }
        None
    }
}
