//! The tools a server listed, as the gate saw them pass (`tools/list` answers), for the
//! rules that match annotations.
//!
//! One index per [`crate::layer::Stack`], shared by all of its connections (an HTTP
//! front serves many sessions, and each sessionless request is a connection of its own),
//! kept per server; the newest listing wins: a first page (no `cursor`) replaces what
//! was known, the pages after it add to it. A tool never listed has no entry, and the
//! rules then read the MCP spec's defaults for its hints ([`Hint::default_value`]).
//! <https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool-annotations>

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;

/// The most tools kept per server (a hostile listing cannot grow the index without bound).
pub const MAX_TOOLS: usize = 100_000;

/// A tool annotation a rule may match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hint {
    /// `readOnlyHint`: the tool changes nothing.
    ReadOnly,
    /// `destructiveHint`: the tool may destroy (meaningful when not read-only).
    Destructive,
    /// `idempotentHint`: calling it again with the same arguments does nothing more.
    Idempotent,
    /// `openWorldHint`: the tool reaches outside entities (the web, other systems).
    OpenWorld,
}

/// Every hint, for reading a name back.
pub const HINTS: [Hint; 4] = [
    Hint::ReadOnly,
    Hint::Destructive,
    Hint::Idempotent,
    Hint::OpenWorld,
];

impl Hint {
    /// The annotation's name, as the spec spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Hint::ReadOnly => "readOnlyHint",
            Hint::Destructive => "destructiveHint",
            Hint::Idempotent => "idempotentHint",
            Hint::OpenWorld => "openWorldHint",
        }
    }

    /// The hint of a name; `None` for an unknown one.
    pub fn parse(name: &str) -> Option<Hint> {
        HINTS.into_iter().find(|h| h.as_str() == name)
    }

    /// The spec's default, for a tool that does not say (or was never listed).
    pub fn default_value(self) -> bool {
        match self {
            Hint::ReadOnly => false,
            Hint::Destructive => true,
            Hint::Idempotent => false,
            Hint::OpenWorld => true,
        }
    }
}

/// What a listing said of one tool.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolInfo {
    /// The hints it gave (`None`: not given).
    pub read_only: Option<bool>,
    /// `destructiveHint`, when given.
    pub destructive: Option<bool>,
    /// `idempotentHint`, when given.
    pub idempotent: Option<bool>,
    /// `openWorldHint`, when given.
    pub open_world: Option<bool>,
    /// True when it declared an `outputSchema` (a dry run must not claim a success that
    /// lacks the structured content the schema promises).
    pub output_schema: bool,
}

impl ToolInfo {
    /// What a `tools/list` entry says.
    pub fn of(tool: &Value) -> ToolInfo {
        let a = &tool["annotations"];
        let hint = |name: &str| a[name].as_bool();
        ToolInfo {
            read_only: hint("readOnlyHint"),
            destructive: hint("destructiveHint"),
            idempotent: hint("idempotentHint"),
            open_world: hint("openWorldHint"),
            output_schema: tool.get("outputSchema").is_some_and(|s| !s.is_null()),
        }
    }

    /// The hint's value for the rules: as given, else the spec's default. A read-only
    /// tool is read as neither destructive nor anything but idempotent, whatever it says
    /// of those: the spec gives them meaning only for tools that may write.
    pub fn hint(info: Option<&ToolInfo>, hint: Hint) -> bool {
        let given = |i: &ToolInfo| match hint {
            Hint::ReadOnly => i.read_only,
            Hint::Destructive => i.destructive,
            Hint::Idempotent => i.idempotent,
            Hint::OpenWorld => i.open_world,
        };
        let read_only = info.and_then(|i| i.read_only).unwrap_or(false);
        match hint {
            Hint::Destructive if read_only => false,
            Hint::Idempotent if read_only => true,
            _ => info.and_then(given).unwrap_or(hint.default_value()),
        }
    }
}

/// The tools each server listed, shared by a stack's connections.
#[derive(Debug, Clone, Default)]
pub struct ToolIndex {
    servers: Arc<Mutex<HashMap<String, HashMap<String, ToolInfo>>>>,
}

impl ToolIndex {
    /// An empty index.
    pub fn new() -> ToolIndex {
        ToolIndex::default()
    }

    /// Takes in a `tools/list` result of `server`: a first page replaces the server's
    /// tools, a later page (`paged`: its request had a cursor) adds to them.
    pub fn listed(&self, server: &str, result: &Value, paged: bool) {
        let Some(tools) = result["tools"].as_array() else {
            return;
        };
        let Ok(mut servers) = self.servers.lock() else {
            return;
        };
        let known = servers.entry(server.to_owned()).or_default();
        if !paged {
            known.clear();
        }
        for tool in tools {
            let Some(name) = tool["name"].as_str() else {
                continue;
            };
            if known.len() >= MAX_TOOLS && !known.contains_key(name) {
                break;
            }
            known.insert(name.to_owned(), ToolInfo::of(tool));
        }
    }

    /// What `server` listed of `tool`; `None` when it never listed it.
    pub fn get(&self, server: &str, tool: &str) -> Option<ToolInfo> {
        let servers = self.servers.lock().ok()?;
        servers.get(server)?.get(tool).cloned()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_newest_listing_wins_and_pages_add() {
        let index = ToolIndex::new();
        index.listed(
            "s",
            &json!({"tools": [{"name": "a", "annotations": {"readOnlyHint": true}}]}),
            false,
        );
        index.listed("s", &json!({"tools": [{"name": "b"}]}), true);
        assert!(index.get("s", "a").is_some() && index.get("s", "b").is_some());
        index.listed(
            "s",
            &json!({"tools": [{"name": "c", "outputSchema": {"type": "object"}}]}),
            false,
        );
        assert!(index.get("s", "a").is_none());
        assert!(index.get("s", "c").expect("c").output_schema);
        assert!(index.get("other", "c").is_none());
    }

    #[test]
    fn hints_default_as_the_spec_says_and_read_only_is_never_destructive() {
        assert!(ToolInfo::hint(None, Hint::Destructive));
        assert!(!ToolInfo::hint(None, Hint::ReadOnly));
        assert!(ToolInfo::hint(None, Hint::OpenWorld));
        assert!(!ToolInfo::hint(None, Hint::Idempotent));
        let bare = ToolInfo::of(&json!({"name": "x"}));
        assert!(ToolInfo::hint(Some(&bare), Hint::Destructive));
        let ro = ToolInfo::of(
            &json!({"name": "x", "annotations": {"readOnlyHint": true, "destructiveHint": true}}),
        );
        assert!(!ToolInfo::hint(Some(&ro), Hint::Destructive));
        assert!(ToolInfo::hint(Some(&ro), Hint::Idempotent));
        let safe = ToolInfo::of(&json!({"name": "x", "annotations": {"destructiveHint": false}}));
        assert!(!ToolInfo::hint(Some(&safe), Hint::Destructive));
    }
}
