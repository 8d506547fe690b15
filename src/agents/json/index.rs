//! The span index of a JSONC text, built once per parse: every object reachable through
//! object members, with each member's name, its byte ranges and, when its value is an
//! object, that object. Edits and lookups then never parse the whole text again.

use std::collections::HashMap;
use std::ops::Range;

use jsonc_parser::ast::{Object, ObjectPropName, Value as Ast};
use jsonc_parser::common::Ranged;
use jsonc_parser::{CollectOptions, ParseOptions, parse_to_ast};

use crate::agents::document::DocError;
use crate::agents::text::syntax_at;

/// One member of an object.
#[derive(Debug, Clone)]
pub struct Prop {
    /// Its key.
    pub name: String,
    /// Where its key ends (after the closing quote).
    pub name_end: usize,
    /// The member: from its key's first byte to its value's last.
    pub range: Range<usize>,
    /// Its value.
    pub value: Range<usize>,
    /// The value's index, when it is an object.
    pub object: Option<usize>,
}

/// One object.
#[derive(Debug, Clone)]
pub struct Obj {
    /// From `{` to `}`.
    pub range: Range<usize>,
    /// Its members in text order.
    pub properties: Vec<Prop>,
    /// Each member's place in `properties`, by key: a lookup in a container of N servers
    /// costs O(1), not O(N) (N lookups of it would be quadratic).
    by_name: HashMap<String, usize>,
}

impl Obj {
    fn new(range: Range<usize>) -> Obj {
        Obj {
            range,
            properties: Vec::new(),
            by_name: HashMap::new(),
        }
    }

    /// The member `name`.
    pub fn get(&self, name: &str) -> Option<&Prop> {
        self.by_name.get(name).map(|&i| &self.properties[i])
    }
}

/// The objects of a text; the first is the root.
#[derive(Debug, Clone, Default)]
pub struct Index {
    objs: Vec<Obj>,
}

fn range(r: jsonc_parser::common::Range) -> Range<usize> {
    r.start..r.end
}

impl Index {
    /// Parses `text` (an error names the line and column) and indexes its objects; the
    /// top level must be an object, or nothing but whitespace and comments.
    pub fn build(text: &str, options: &ParseOptions) -> Result<Index, DocError> {
        let parsed = parse_to_ast(text, &CollectOptions::default(), options).map_err(|e| {
            DocError::Syntax {
                line: e.line_display(),
                column: e.column_display(),
                message: e.kind().to_string(),
            }
        })?;
        let root = match &parsed.value {
            None => return Ok(Index::default()),
            Some(Ast::Object(o)) => o,
            Some(_) => {
                return Err(DocError::Unsupported(
                    "the top level is not a JSON object".into(),
                ));
            }
        };
        let mut objs = vec![Obj::new(range(root.range))];
        // An explicit stack: the parser bounds nesting, and this walk needs no call depth.
        let mut stack: Vec<(&Object<'_>, usize)> = vec![(root, 0)];
        while let Some((obj, at)) = stack.pop() {
            let mut seen = std::collections::HashSet::new();
            for p in &obj.properties {
                // An agent's JSON.parse keeps the last of two equal keys; an edit would
                // change one and leave the other deciding. Refuse rather than guess.
                if !seen.insert(p.name.as_str()) {
                    return Err(syntax_at(
                        text,
                        p.range.start,
                        format!(
                            "duplicate key `{}` in one object (which one the agent reads is \
                             its own choice: remove one)",
                            crate::term::line(p.name.as_str())
                        ),
                    ));
                }
                let object = match &p.value {
                    Ast::Object(child) => {
                        objs.push(Obj::new(range(child.range)));
                        stack.push((child, objs.len() - 1));
                        Some(objs.len() - 1)
                    }
                    _ => None,
                };
                let name_end = match &p.name {
                    ObjectPropName::String(s) => s.range.end,
                    ObjectPropName::Word(w) => w.range.end,
                };
                let o = &mut objs[at];
                o.by_name
                    .insert(p.name.as_str().to_owned(), o.properties.len());
                o.properties.push(Prop {
                    name: p.name.as_str().to_owned(),
                    name_end,
                    range: range(p.range),
                    value: range(p.value.range()),
                    object,
                });
            }
        }
        Ok(Index { objs })
    }

    /// The object at `path` from the root: `Ok(None)` when a key is missing (or the text
    /// is empty), an error when a value on the way is not an object.
    pub fn walk(&self, path: &[&str]) -> Result<Option<&Obj>, DocError> {
        let Some(mut obj) = self.objs.first() else {
            return Ok(None);
        };
        for (i, key) in path.iter().enumerate() {
            match obj.get(key) {
                None => return Ok(None),
                Some(Prop {
                    object: Some(at), ..
                }) => obj = &self.objs[*at],
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
}
