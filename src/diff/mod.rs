//! `mcptape diff`: what two sides of one server listed — tools, resources, resource
//! templates, prompts — compared item by item, each change classified breaking,
//! compatible or info for the server's clients; and the answers to the calls both tapes
//! made.
//!
//! - [`lists`]: a side (a tape's last listing of each kind, all pages merged; or a live
//!   server's, asked by [`live`]);
//! - [`items`]: two listings compared, item by item and field by field;
//! - [`schema`]: two JSON Schemas compared (bounded in depth and size, local `$ref`s
//!   followed);
//! - [`rules`]: each change and its class (docs/DIFF.md is its table);
//! - [`calls`]: the calls both tapes made, their answers compared as verify does;
//! - [`report`]: text, JSON, JUnit XML, GitHub workflow commands.
//!
//! Nothing here runs a tool: a live side is initialized and listed, nothing else.

pub mod calls;
pub mod items;
pub mod lists;
pub mod live;
pub mod report;
pub mod rules;
pub mod schema;

use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;

pub use lists::{Family, Side};
pub use rules::Class;

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// An item only the new side lists.
    Added,
    /// An item only the old side lists.
    Removed,
    /// An item both list, changed in one field.
    Changed,
    /// A side never listed this kind of item: nothing of it is compared.
    Unlisted,
}

/// One difference between the two sides.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// Added, removed, changed, or a kind a side never listed.
    pub kind: Kind,
    /// `tool`, `resource`, `resource-template`, `prompt`.
    pub family: Family,
    /// The item's key: a tool's or prompt's name, a resource's URI, a template's URI
    /// template (empty for [`Kind::Unlisted`]).
    pub item: String,
    /// The field (`inputSchema`, `annotations`, `description`, …), empty for a whole
    /// item.
    pub field: String,
    /// The dot path inside the item (`inputSchema.properties.mode.enum`).
    pub path: String,
    /// The old value there, absent when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<Value>,
    /// The new value there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new: Option<Value>,
    /// Breaking, compatible or info.
    pub class: Class,
    /// The rule's id (docs/DIFF.md).
    pub rule: &'static str,
    /// What happened, in words.
    pub message: String,
    /// The old side's tape line of the listing that holds the item.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_line: Option<usize>,
    /// The new side's tape line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_line: Option<usize>,
}

impl Finding {
    /// `tool `lookup`` or `prompts`, for headings.
    pub fn title(&self) -> String {
        match self.kind {
            Kind::Unlisted => self.family.plural().to_owned(),
            _ => format!("{} `{}`", self.family.word(), self.item),
        }
    }

    /// True when it is a change between the sides (an unlisted kind is not).
    pub fn is_change(&self) -> bool {
        self.kind != Kind::Unlisted
    }
}

/// What could not be compared.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    /// The tape holds no connection at all.
    #[error("the tape `{path}` holds no connection: there is nothing to compare")]
    Empty {
        /// The tape.
        path: PathBuf,
    },
    /// Several servers and no `--server`.
    #[error("the tape `{path}` holds several servers ({list}): choose one with --server")]
    Servers {
        /// The tape.
        path: PathBuf,
        /// Its servers, comma-separated.
        list: String,
    },
    /// `--server` names a server the tape does not hold.
    #[error("the tape `{path}` holds no connection of server `{server}`; it holds: {list}")]
    UnknownServer {
        /// The tape.
        path: PathBuf,
        /// The server asked for.
        server: String,
        /// The servers it holds.
        list: String,
    },
    /// A listing answer that is not what the spec says.
    #[error("the `{method}` answer of {side}{at} {problem}")]
    BadListing {
        /// `tape `x.ndjson`` or `the live server`.
        side: String,
        /// ` at line N`, or nothing.
        at: String,
        /// `tools/list`, …
        method: &'static str,
        /// What is wrong, naming the member.
        problem: String,
    },
}

/// The options of one comparison.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Leave descriptions and titles out (and the calls).
    pub structure_only: bool,
}

/// Everything two sides differ in.
#[derive(Debug)]
pub struct Diff {
    /// Item findings, kind by kind (tools, resources, templates, prompts), each item's in
    /// order.
    pub findings: Vec<Finding>,
    /// The calls both tapes made (empty against a live side or with structure-only).
    pub calls: calls::Calls,
}

impl Diff {
    /// Compares `old` with `new`.
    pub fn of(old: &Side, new: &Side, options: Options) -> Diff {
        let mut findings = Vec::new();
        for family in Family::ALL {
            items::compare(old, new, family, options, &mut findings);
        }
        let calls = match (&old.tape, &new.tape) {
            (Some(a), Some(b)) if !options.structure_only => {
                calls::compare(a, &old.server, b, &new.server)
            }
            _ => calls::Calls::default(),
        };
        Diff { findings, calls }
    }

    /// How many changes of `class`.
    pub fn count(&self, class: Class) -> usize {
        self.findings
            .iter()
            .filter(|f| f.is_change() && f.class == class)
            .count()
    }

    /// True when anything changed: a finding, or a call's answer.
    pub fn any_change(&self) -> bool {
        self.findings.iter().any(Finding::is_change) || self.calls.changed() > 0
    }
}
