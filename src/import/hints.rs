//! Which tools are read-only, as far as the recordings know: every `tools/list` answer in
//! the tapes of the recordings directory gives, per server and tool, its `readOnlyHint`
//! annotation (absent means `false`, as the MCP spec's `ToolAnnotations` says). A tool no
//! tape lists is unknown, never guessed. When tapes disagree, the answer recorded last
//! (by `_meta.ts`) wins. `scan` uses this to say how many of a session's calls only read.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::tape::{Direction, Tape, store};

/// One tool's hint and where it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Hint {
    read_only: bool,
    ts: Option<String>,
}

/// The read-only hints of every server's tools that some tape recorded a `tools/list` of.
#[derive(Debug, Default)]
pub struct ReadOnlyHints {
    tools: HashMap<(String, String), Hint>,
    /// Tapes that could not be read (path, why): said, not fatal.
    pub unreadable: Vec<(PathBuf, String)>,
}

impl ReadOnlyHints {
    /// Reads the hints from every tape in `home`'s recordings directory.
    pub fn from_recordings(home: &Path) -> ReadOnlyHints {
        let mut hints = ReadOnlyHints::default();
        let listed = match store::list(home) {
            Ok(listed) => listed,
            Err(e) => {
                hints
                    .unreadable
                    .push((store::recordings_dir(home), e.to_string()));
                return hints;
            }
        };
        for tape in listed {
            match Tape::load(&tape.path) {
                Ok(loaded) => hints.add_tape(&loaded),
                Err(e) => hints.unreadable.push((tape.path, e.to_string())),
            }
        }
        hints
    }

    /// Adds the `tools/list` answers of one tape.
    pub fn add_tape(&mut self, tape: &Tape) {
        for entry in &tape.entries {
            // Only server answers; a cheap look before parsing each one.
            if entry.meta.dir != Direction::Recv || !entry.message.text().contains("\"tools\"") {
                continue;
            }
            let value = entry.message.value();
            let Some(tools) = value.pointer("/result/tools").and_then(Value::as_array) else {
                continue;
            };
            for tool in tools {
                let Some(name) = tool.get("name").and_then(Value::as_str) else {
                    continue;
                };
                let read_only =
                    tool.pointer("/annotations/readOnlyHint") == Some(&Value::Bool(true));
                let key = (entry.meta.server.clone(), name.to_owned());
                let hint = Hint {
                    read_only,
                    ts: entry.meta.ts.clone(),
                };
                match self.tools.get(&key) {
                    Some(old) if old.ts > hint.ts => {}
                    _ => {
                        self.tools.insert(key, hint);
                    }
                }
            }
        }
    }

    /// Is `tool` of `server` read-only? `None` when no tape lists it.
    pub fn read_only(&self, server: &str, tool: &str) -> Option<bool> {
        self.tools
            .get(&(server.to_owned(), tool.to_owned()))
            .map(|h| h.read_only)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tape(lines: &[&str]) -> Tape {
        let text = lines.join("\n") + "\n";
        Tape::parse(Path::new("t.ndjson"), text.as_bytes()).expect("tape")
    }

    #[test]
    fn hints_come_from_tools_list_answers_and_the_latest_wins() {
        let mut hints = ReadOnlyHints::default();
        hints.add_tape(&tape(&[
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","annotations":{"readOnlyHint":true}},{"name":"note","annotations":{}},{"name":"bare"}]},"_meta":{"dir":"recv","server":"ex","ts":"2025-01-01T00:00:00.000Z"}}"#,
            // A client sending "tools" is no answer.
            r#"{"jsonrpc":"2.0","id":2,"method":"x","params":{"result":{"tools":[{"name":"other","annotations":{"readOnlyHint":true}}]}},"_meta":{"dir":"send","server":"ex"}}"#,
        ]));
        assert_eq!(hints.read_only("ex", "echo"), Some(true));
        assert_eq!(hints.read_only("ex", "note"), Some(false));
        assert_eq!(hints.read_only("ex", "bare"), Some(false));
        assert_eq!(hints.read_only("ex", "other"), None);
        assert_eq!(hints.read_only("else", "echo"), None);
        hints.add_tape(&tape(&[
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo"}]},"_meta":{"dir":"recv","server":"ex","ts":"2024-01-01T00:00:00.000Z"}}"#,
        ]));
        assert_eq!(
            hints.read_only("ex", "echo"),
            Some(true),
            "an older listing loses"
        );
        hints.add_tape(&tape(&[
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo"}]},"_meta":{"dir":"recv","server":"ex","ts":"2026-01-01T00:00:00.000Z"}}"#,
        ]));
        assert_eq!(
            hints.read_only("ex", "echo"),
            Some(false),
            "a newer listing wins"
        );
    }
}
