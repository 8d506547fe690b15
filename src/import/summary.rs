//! What `scan` says of one session: its id, date and working directory, and per server
//! how many MCP calls it made and how many of those were of read-only tools (by the
//! hints the recordings hold, [`crate::import::hints`]), or how many are unknown.

use serde_json::{Value, json};

use crate::import::ImportedSession;
use crate::import::hints::ReadOnlyHints;

/// One server's calls in a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerCount {
    /// The server's name in the agent's config.
    pub server: String,
    /// MCP calls to it.
    pub calls: usize,
    /// Of them, calls of tools a tape lists with `readOnlyHint: true`.
    pub read_only: usize,
    /// Of them, calls of tools no tape lists.
    pub unknown: usize,
}

/// One session as `scan` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// `claude-code` or `codex`.
    pub agent: &'static str,
    /// The agent's session id.
    pub id: String,
    /// The transcript file.
    pub file: String,
    /// When it began, as the transcript says.
    pub started: Option<String>,
    /// Its working directory.
    pub cwd: Option<String>,
    /// Per server, in the order of first call.
    pub servers: Vec<ServerCount>,
    /// Tool uses that were not MCP calls.
    pub other_tools: usize,
    /// The tape `import` writes it to in this run (a session name, from the run's
    /// [`crate::import::tape::Names`]); `None` for a session with no MCP call, which
    /// writes none.
    pub tape: Option<String>,
}

impl Summary {
    /// The summary of `session`, read from `agent`'s transcript; `tape` is the name the
    /// run gives its tape.
    pub fn of(
        agent: &'static str,
        session: &ImportedSession,
        tape: Option<String>,
        hints: &ReadOnlyHints,
    ) -> Summary {
        let mut servers: Vec<ServerCount> = Vec::new();
        for call in &session.calls {
            let index = match servers.iter().position(|s| s.server == call.server) {
                Some(i) => i,
                None => {
                    servers.push(ServerCount {
                        server: call.server.clone(),
                        calls: 0,
                        read_only: 0,
                        unknown: 0,
                    });
                    servers.len() - 1
                }
            };
            let count = &mut servers[index];
            count.calls += 1;
            match hints.read_only(&call.server, &call.tool) {
                Some(true) => count.read_only += 1,
                Some(false) => {}
                None => count.unknown += 1,
            }
        }
        Summary {
            agent,
            id: session.id.clone(),
            file: session.source.to_string_lossy().into_owned(),
            started: session.started.clone(),
            cwd: session.cwd.clone(),
            servers,
            other_tools: session.skipped_tools,
            tape,
        }
    }

    /// Every MCP call of the session.
    pub fn calls(&self) -> usize {
        self.servers.iter().map(|s| s.calls).sum()
    }

    /// The read-only column: `2 of 3`, `1 of 3 (2 unknown)`, `unknown`, or `-` without
    /// calls.
    pub fn read_only_cell(&self) -> String {
        let calls = self.calls();
        let read_only: usize = self.servers.iter().map(|s| s.read_only).sum();
        let unknown: usize = self.servers.iter().map(|s| s.unknown).sum();
        match (calls, unknown) {
            (0, _) => "-".into(),
            (_, 0) => format!("{read_only} of {calls}"),
            (c, u) if u == c => "unknown".into(),
            _ => format!("{read_only} of {calls} ({unknown} unknown)"),
        }
    }

    /// The servers column: `example 3, docs 4`.
    pub fn servers_cell(&self) -> String {
        let cells: Vec<String> = self
            .servers
            .iter()
            .map(|s| format!("{} {}", s.server, s.calls))
            .collect();
        cells.join(", ")
    }

    /// The summary as `scan --json` writes it; `read_only` is `null` for a server none of
    /// whose called tools any tape lists.
    pub fn to_json(&self) -> Value {
        let servers: Vec<Value> = self
            .servers
            .iter()
            .map(|s| {
                json!({"server": s.server, "calls": s.calls,
                    "read_only": if s.unknown == s.calls { Value::Null } else { json!(s.read_only) },
                    "unknown": s.unknown})
            })
            .collect();
        json!({"agent": self.agent, "session": self.id, "file": self.file,
            "started": self.started, "cwd": self.cwd, "mcp_calls": self.calls(),
            "servers": servers, "other_tools": self.other_tools, "tape": self.tape})
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::import::ImportedCall;
    use crate::tape::Tape;

    fn call(server: &str, tool: &str) -> ImportedCall {
        ImportedCall {
            server: server.into(),
            tool: tool.into(),
            arguments: json!({}),
            answer: None,
            called_at: None,
            answered_at: None,
            incomplete: None,
        }
    }

    #[test]
    fn counts_per_server_with_read_only_and_unknown() {
        let session = ImportedSession {
            id: "0199a1b2-7c3d".into(),
            source: "r.jsonl".into(),
            started: Some("2025-11-20T10:15:30.101Z".into()),
            cwd: Some("/w".into()),
            calls: vec![
                call("ex", "echo"),
                call("ex", "note"),
                call("gh", "issue"),
                call("ex", "echo"),
            ],
            skipped_tools: 2,
        };
        let tape = Tape::parse(
            std::path::Path::new("t.ndjson"),
            br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","annotations":{"readOnlyHint":true}},{"name":"note"}]},"_meta":{"dir":"recv","server":"ex"}}
"#,
        )
        .expect("tape");
        let mut hints = ReadOnlyHints::default();
        hints.add_tape(&tape);
        let name = crate::import::tape::Names::default().next("codex", &session);
        let s = Summary::of("codex", &session, Some(name), &hints);
        assert_eq!(s.servers_cell(), "ex 3, gh 1");
        assert_eq!(s.read_only_cell(), "2 of 4 (1 unknown)");
        assert_eq!(s.tape.as_deref(), Some("codex-0199a1b2"));
        let j = s.to_json();
        assert_eq!(
            j["servers"][0],
            json!({"server": "ex", "calls": 3, "read_only": 2, "unknown": 0})
        );
        assert_eq!(
            j["servers"][1],
            json!({"server": "gh", "calls": 1, "read_only": null, "unknown": 1})
        );
        assert_eq!(j["mcp_calls"], 4);
        let none = Summary::of("codex", &session, None, &ReadOnlyHints::default());
        assert_eq!(none.read_only_cell(), "unknown");
    }
}
