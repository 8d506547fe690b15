//! A side of a diff: what one server listed, kind by kind ([`Family`]).
//!
//! From a tape: the client's `tools/list` (…) requests of that server's connections,
//! paired with their answers ([`crate::exchange::Exchanges`]). A request without a
//! `cursor` starts a listing, one with a cursor adds its page to the listing open on that
//! connection; the listing whose first request comes last in the tape is the side's
//! (a client that listed again after `list_changed` saw the newest). Error answers,
//! unanswered requests and refused ones list nothing. A kind the client never listed is
//! `None`: "never listed", not "lists nothing".

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::DiffError;
use crate::exchange::{Exchanges, Status};
use crate::tape::{Direction, Tape};

/// A kind of item a server lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// `tools/list`, keyed by `name`.
    Tool,
    /// `resources/list`, keyed by `uri`.
    Resource,
    /// `resources/templates/list`, keyed by `uriTemplate`.
    ResourceTemplate,
    /// `prompts/list`, keyed by `name`.
    Prompt,
}

impl Family {
    /// Every kind, in report order.
    pub const ALL: [Family; 4] = [
        Family::Tool,
        Family::Resource,
        Family::ResourceTemplate,
        Family::Prompt,
    ];

    /// The list method.
    pub fn method(self) -> &'static str {
        match self {
            Family::Tool => "tools/list",
            Family::Resource => "resources/list",
            Family::ResourceTemplate => "resources/templates/list",
            Family::Prompt => "prompts/list",
        }
    }

    /// The result member that holds the items.
    pub fn member(self) -> &'static str {
        match self {
            Family::Tool => "tools",
            Family::Resource => "resources",
            Family::ResourceTemplate => "resourceTemplates",
            Family::Prompt => "prompts",
        }
    }

    /// The member that names an item.
    pub fn key(self) -> &'static str {
        match self {
            Family::Tool | Family::Prompt => "name",
            Family::Resource => "uri",
            Family::ResourceTemplate => "uriTemplate",
        }
    }

    /// The server capability that says it lists them (`initialize`'s result).
    pub fn capability(self) -> &'static str {
        match self {
            Family::Tool => "tools",
            Family::Resource | Family::ResourceTemplate => "resources",
            Family::Prompt => "prompts",
        }
    }

    /// `tool`, for one item.
    pub fn word(self) -> &'static str {
        match self {
            Family::Tool => "tool",
            Family::Resource => "resource",
            Family::ResourceTemplate => "resource template",
            Family::Prompt => "prompt",
        }
    }

    /// `tools`, for all.
    pub fn plural(self) -> &'static str {
        match self {
            Family::Tool => "tools",
            Family::Resource => "resources",
            Family::ResourceTemplate => "resource templates",
            Family::Prompt => "prompts",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// One listed item.
#[derive(Debug, Clone)]
pub struct Item {
    /// Its key ([`Family::key`]).
    pub key: String,
    /// The item as listed.
    pub value: Value,
    /// The tape line of the page that listed it.
    pub line: Option<usize>,
}

/// Every item of one listing, all pages merged, in order.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    /// The items (a key listed twice: the later one).
    pub items: Vec<Item>,
}

impl Listing {
    /// Adds the items of one page's `result`; `side`/`line` name it in errors.
    pub fn add_page(
        &mut self,
        family: Family,
        result: &Value,
        side: &str,
        line: Option<usize>,
    ) -> Result<Option<Value>, DiffError> {
        let bad = |problem: String| DiffError::BadListing {
            side: side.to_owned(),
            at: line.map(|l| format!(" at line {l}")).unwrap_or_default(),
            method: family.method(),
            problem,
        };
        let Value::Object(result) = result else {
            return Err(bad(format!(
                "has a result that is not an object: {}",
                short(result)
            )));
        };
        let items = match result.get(family.member()) {
            Some(Value::Array(items)) => items,
            Some(other) => {
                return Err(bad(format!(
                    "has a `{}` that is not an array: {}",
                    family.member(),
                    short(other)
                )));
            }
            None => return Err(bad(format!("has no `{}` member", family.member()))),
        };
        for (i, v) in items.iter().enumerate() {
            let Some(key) = v.get(family.key()).and_then(Value::as_str) else {
                return Err(bad(format!(
                    "has an item {i} with no string `{}`",
                    family.key()
                )));
            };
            self.items.retain(|it| it.key != key);
            self.items.push(Item {
                key: key.to_owned(),
                value: v.clone(),
                line,
            });
        }
        Ok(result.get("nextCursor").filter(|c| !c.is_null()).cloned())
    }

    /// The item of this key.
    pub fn get(&self, key: &str) -> Option<&Item> {
        self.items.iter().find(|i| i.key == key)
    }
}

/// A value cut for an error message.
fn short(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
}

/// One side: its name for people, its server, and its listings.
#[derive(Debug)]
pub struct Side {
    /// `v1.ndjson`, or the live command or URL.
    pub label: String,
    /// The tape, for a tape side.
    pub path: Option<PathBuf>,
    /// The server compared.
    pub server: String,
    /// The tape itself (the calls compare it).
    pub tape: Option<Tape>,
    /// Per [`Family`] (in [`Family::ALL`] order): the listing, or `None` when the side
    /// never listed that kind.
    pub lists: [Option<Listing>; 4],
}

impl Side {
    /// The listing of `family`, if the side listed it.
    pub fn listing(&self, family: Family) -> Option<&Listing> {
        self.lists[family.index()].as_ref()
    }

    /// The side a tape is, for `server` (the one asked for, else the tape's only one, else
    /// `prefer` when the tape holds it).
    pub fn of_tape(
        tape: Tape,
        asked: Option<&str>,
        prefer: Option<&str>,
    ) -> Result<Side, DiffError> {
        let path = tape.path.clone();
        let server = choose_server(&tape, &path, asked, prefer)?;
        let label = path.display().to_string();
        let side_name = format!("tape `{label}`");
        let exchanges = Exchanges::of(&tape);
        let mut lists: [Option<Listing>; 4] = Default::default();
        for family in Family::ALL {
            // connection → (the listing open there, where it started).
            let mut open: HashMap<usize, (Listing, usize)> = HashMap::new();
            let mut last: Option<(Listing, usize)> = None;
            for ex in exchanges.exchanges.iter().filter(|e| {
                e.from == Direction::Send
                    && e.method == family.method()
                    && exchanges.connections[e.conn].server == server
            }) {
                let (Status::Ok, Some(answer)) = (&ex.status, ex.answer) else {
                    continue;
                };
                let request = tape.entries[ex.request].message.value();
                let entry = &tape.entries[answer];
                let value = entry.message.value();
                let first = request["params"].get("cursor").is_none_or(Value::is_null);
                let (listing, started) = match (first, open.remove(&ex.conn)) {
                    (false, Some(o)) => o,
                    _ => (Listing::default(), ex.request),
                };
                let mut listing = listing;
                let more =
                    listing.add_page(family, &value["result"], &side_name, Some(entry.line))?;
                if more.is_some() {
                    open.insert(ex.conn, (listing.clone(), started));
                }
                if last.as_ref().is_none_or(|(_, s)| *s <= started) {
                    last = Some((listing, started));
                }
            }
            lists[family.index()] = last.map(|(l, _)| l);
        }
        Ok(Side {
            label,
            path: Some(path),
            server,
            tape: Some(tape),
            lists,
        })
    }
}

/// The server to compare in `tape`.
fn choose_server(
    tape: &Tape,
    path: &Path,
    asked: Option<&str>,
    prefer: Option<&str>,
) -> Result<String, DiffError> {
    let servers: BTreeSet<String> = tape.connections().into_iter().map(|c| c.server).collect();
    let list = || servers.iter().cloned().collect::<Vec<_>>().join(", ");
    match asked {
        Some(s) if servers.contains(s) => return Ok(s.to_owned()),
        Some(s) => {
            return Err(DiffError::UnknownServer {
                path: path.to_owned(),
                server: s.to_owned(),
                list: list(),
            });
        }
        None => {}
    }
    if servers.is_empty() {
        return Err(DiffError::Empty {
            path: path.to_owned(),
        });
    }
    if servers.len() == 1 {
        return Ok(servers.into_iter().next().unwrap_or_default());
    }
    match prefer {
        Some(p) if servers.contains(p) => Ok(p.to_owned()),
        _ => Err(DiffError::Servers {
            path: path.to_owned(),
            list: list(),
        }),
    }
}

#[cfg(test)]
#[path = "lists_tests.rs"]
mod tests;
