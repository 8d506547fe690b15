//! Claude Code's session transcripts → [`ImportedSession`]s.
//!
//! Claude Code appends one JSON object per line to
//! `<config dir>/projects/<escaped cwd>/<session id>.jsonl` (the config dir is
//! `$CLAUDE_CONFIG_DIR`, else `~/.claude`); a subagent's lines go to
//! `<session id>/subagents/agent-<id>.jsonl` beside it, and results too long for the model
//! to `<session id>/tool-results/`. Of the entries, three kinds matter here:
//!
//! - `"type": "assistant"`: `message.content` holds `tool_use` blocks (`id`, `name`,
//!   `input`); an MCP call is named `mcp__<server>__<tool>` (the server's name with every
//!   character outside `[A-Za-z0-9_-]` made `_`; plugin servers `plugin_<plugin>_<server>`),
//!   split at the first `__` as Claude Code does. Any other tool is counted as skipped.
//! - `"type": "user"`: `message.content` holds `tool_result` blocks (`tool_use_id`,
//!   `content`, `is_error`), with `toolUseResult`, `mcpMeta` and `permissionDecision`
//!   beside them on the entry ([`result`] makes the MCP answer of them). A call the user
//!   or the settings refused (`permissionDecision.decision` `reject`) never reached the
//!   server: it is skipped, not imported.
//! - `"type": "attachment"` with `attachment.type` `mcp_instructions_delta`: the
//!   connected servers' real names (`addedNames`), which undo the name mangling.
//!
//! Each entry's `timestamp` is when it was written (the call's, the answer's); `sessionId`
//! and `cwd` are on every entry. Other entries are skipped. A tool use id seen twice (a
//! resumed session repeats history) is read once. A call with no result is kept,
//! unanswered. A last line cut off without its `\n` (Claude Code killed mid-write) is
//! skipped with a warning; any other line that is not a JSON object is an error naming
//! file and line. The subagents' calls join the session's, in time order: they used the
//! same server connections.

mod result;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::import::file::Lines;
use crate::import::{ImportError, ImportedCall, ImportedSession};

/// The prefix of an MCP tool's name in Claude Code.
const MCP_PREFIX: &str = "mcp__";
/// The agent's name on tapes (`_meta.source.imported`) and in tape names.
pub const AGENT: &str = "claude-code";

/// A session read from its transcript, and what did not stop the reading.
#[derive(Debug)]
pub struct Transcript {
    /// The session.
    pub session: ImportedSession,
    /// Lines skipped (a torn last line), one sentence each, naming file and line.
    pub warnings: Vec<String>,
    /// MCP calls that never reached their server (refused permission), not imported.
    pub refused: usize,
    /// The subagent transcripts read with it.
    pub subagents: Vec<PathBuf>,
}

/// Reads the session at `path` and the subagent transcripts beside it.
pub fn read(path: &Path) -> Result<Transcript, ImportError> {
    let dir = path.with_extension("");
    let results = dir.join("tool-results");
    let mut reader = Reader::new(&results);
    reader.file(path)?;
    let subagents = subagent_files(&dir.join("subagents"));
    for sub in &subagents {
        reader.file(sub)?;
    }
    Ok(reader.finish(path, subagents))
}

/// Joins the transcripts of one session: older Claude Code versions wrote a subagent's
/// lines to `agent-<id>.jsonl` beside the session's file, with the session's id. Each
/// session's calls are then in one time order; the first file (a non-`agent-` one when
/// there is one) names it.
pub fn merge(transcripts: Vec<Transcript>) -> Vec<Transcript> {
    let mut out: Vec<Transcript> = Vec::new();
    let is_agent = |t: &Transcript| {
        t.session
            .source
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("agent-"))
    };
    let (mains, agents): (Vec<Transcript>, Vec<Transcript>) =
        transcripts.into_iter().partition(|t| !is_agent(t));
    for t in mains.into_iter().chain(agents) {
        // Only files of one directory join: the same id elsewhere (or a file stem standing
        // for a missing `sessionId`, `s.jsonl` in three projects) is another session.
        let dir = |t: &Transcript| t.session.source.parent().map(Path::to_path_buf);
        match out
            .iter_mut()
            .find(|o| o.session.id == t.session.id && dir(o) == dir(&t))
        {
            Some(o) => {
                o.session.calls.extend(t.session.calls);
                o.session
                    .calls
                    .sort_by_key(|c| timestamp(c.called_at.as_deref()));
                o.session.skipped_tools += t.session.skipped_tools;
                o.warnings.extend(t.warnings);
                o.refused += t.refused;
                o.subagents.push(t.session.source);
                o.subagents.extend(t.subagents);
            }
            None => out.push(t),
        }
    }
    out
}

/// True when `path` is a directory itself, not a symlink to one.
pub(crate) fn real_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

/// The subagent transcripts of a session (`agent-*.jsonl` regular files), by name; none
/// when `dir` or the session's directory above it is a symlink (no link is followed).
fn subagent_files(dir: &Path) -> Vec<PathBuf> {
    if !real_dir(dir) || !dir.parent().is_some_and(real_dir) {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter(|e| e.file_name().to_string_lossy().starts_with("agent-"))
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    files
}

/// The reading state of one session (its files read one after the other).
struct Reader<'a> {
    results: &'a Path,
    id: Option<String>,
    cwd: Option<String>,
    /// The first entry's time: when the session began.
    started: Option<String>,
    calls: Vec<Call>,
    /// Tool use id → index in `calls`.
    pending: HashMap<String, usize>,
    /// Ids of tool uses seen (MCP or not), so a repeat is read once.
    seen: HashSet<String>,
    skipped: usize,
    refused: usize,
    /// Real server names, from `mcp_instructions_delta`.
    names: Vec<String>,
    warnings: Vec<String>,
    /// Files read so far.
    files: usize,
}

/// A call as read, before its server's name is resolved.
struct Call {
    call: ImportedCall,
    refused: bool,
    /// Which file it came from (0: the session's), and where, for a stable time order.
    order: (usize, usize),
}

impl<'a> Reader<'a> {
    fn new(results: &'a Path) -> Reader<'a> {
        Reader {
            results,
            id: None,
            cwd: None,
            started: None,
            calls: Vec::new(),
            pending: HashMap::new(),
            seen: HashSet::new(),
            skipped: 0,
            refused: 0,
            names: Vec::new(),
            warnings: Vec::new(),
            files: 0,
        }
    }

    fn file(&mut self, path: &Path) -> Result<(), ImportError> {
        let mut lines = Lines::open(path)?;
        let file_no = self.files;
        self.files += 1;
        while let Some(line) = lines.next_line()? {
            if line.bytes.trim_ascii().is_empty() {
                continue;
            }
            let value: Value = match serde_json::from_slice(&line.bytes) {
                Ok(v) => v,
                Err(_) if !line.terminated => {
                    self.warnings.push(format!(
                        "transcript `{}` line {} is cut off (Claude Code was stopped mid-write): skipped",
                        path.display(),
                        line.number
                    ));
                    continue;
                }
                Err(e) => {
                    return Err(ImportError::BadLine {
                        path: path.to_path_buf(),
                        line: line.number,
                        why: e.to_string(),
                    });
                }
            };
            if !value.is_object() {
                return Err(ImportError::NotObject {
                    path: path.to_path_buf(),
                    line: line.number,
                });
            }
            self.entry(&value, (file_no, line.number));
        }
        Ok(())
    }

    fn entry(&mut self, entry: &Value, order: (usize, usize)) {
        if self.id.is_none() {
            self.id = entry["sessionId"].as_str().map(str::to_owned);
        }
        if self.started.is_none() {
            self.started = entry["timestamp"].as_str().map(str::to_owned);
        }
        if self.cwd.is_none() {
            self.cwd = entry["cwd"].as_str().map(str::to_owned);
        }
        let content = entry["message"]["content"].as_array();
        match entry["type"].as_str() {
            Some("assistant") => {
                for block in content.into_iter().flatten() {
                    if block["type"] == "tool_use" {
                        self.tool_use(block, entry, order);
                    }
                }
            }
            Some("user") => {
                for block in content.into_iter().flatten() {
                    if block["type"] == "tool_result" {
                        self.tool_result(block, entry);
                    }
                }
            }
            Some("attachment") if entry["attachment"]["type"] == "mcp_instructions_delta" => {
                for name in entry["attachment"]["addedNames"]
                    .as_array()
                    .into_iter()
                    .flatten()
                {
                    if let Some(name) = name.as_str()
                        && !self.names.iter().any(|n| n == name)
                    {
                        self.names.push(name.to_owned());
                    }
                }
            }
            _ => {}
        }
    }

    fn tool_use(&mut self, block: &Value, entry: &Value, order: (usize, usize)) {
        let Some(id) = block["id"].as_str() else {
            return;
        };
        if !self.seen.insert(id.to_owned()) {
            return;
        }
        let Some((server, tool)) = block["name"].as_str().and_then(split_name) else {
            self.skipped += 1;
            return;
        };
        let arguments = match &block["input"] {
            Value::Object(_) => block["input"].clone(),
            _ => Value::Object(serde_json::Map::new()),
        };
        self.pending.insert(id.to_owned(), self.calls.len());
        self.calls.push(Call {
            call: ImportedCall {
                server: server.to_owned(),
                tool: tool.to_owned(),
                arguments,
                answer: None,
                called_at: entry["timestamp"].as_str().map(str::to_owned),
                answered_at: None,
                incomplete: None,
            },
            refused: false,
            order,
        });
    }

    fn tool_result(&mut self, block: &Value, entry: &Value) {
        let Some(&i) = block["tool_use_id"]
            .as_str()
            .and_then(|id| self.pending.get(id))
        else {
            return;
        };
        let Some(call) = self.calls.get_mut(i) else {
            return;
        };
        if call.call.answer.is_some() || call.refused {
            return;
        }
        if refused(block, entry) {
            call.refused = true;
            self.refused += 1;
            return;
        }
        let made = result::of(block, entry, self.results);
        call.call.answer = Some(made.answer);
        call.call.incomplete = made.incomplete;
        call.call.answered_at = entry["timestamp"].as_str().map(str::to_owned);
    }

    fn finish(self, path: &Path, subagents: Vec<PathBuf>) -> Transcript {
        let names = self.names;
        let mut calls: Vec<Call> = self.calls.into_iter().filter(|c| !c.refused).collect();
        // Subagents ran beside the main agent, on the same connections: one time order.
        calls.sort_by_key(|c| (timestamp(c.call.called_at.as_deref()), c.order));
        let calls = calls
            .into_iter()
            .map(|mut c| {
                if let Some(real) = names.iter().find(|n| mangle(n) == c.call.server) {
                    c.call.server = real.clone();
                }
                c.call
            })
            .collect();
        let id = self.id.unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
        Transcript {
            session: ImportedSession {
                id,
                source: path.to_path_buf(),
                started: self.started,
                cwd: self.cwd,
                calls,
                skipped_tools: self.skipped + self.refused,
            },
            warnings: self.warnings,
            refused: self.refused,
            subagents,
        }
    }
}

/// `mcp__<server>__<tool>` → (server, tool), split at the first `__` after the prefix.
pub fn split_name(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix(MCP_PREFIX)?;
    let (server, tool) = rest.split_once("__")?;
    (!server.is_empty() && !tool.is_empty()).then_some((server, tool))
}

/// A server's name as Claude Code spells it in tool names.
fn mangle(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// True when the call was refused before it reached the server.
fn refused(block: &Value, entry: &Value) -> bool {
    if let Some(decision) = entry["permissionDecision"]["decision"].as_str() {
        return decision == "reject" || decision == "deny";
    }
    // Transcripts without `permissionDecision`: Claude Code's own refusal words.
    block["is_error"] == Value::Bool(true)
        && block["content"].as_str().is_some_and(|t| {
            t.starts_with("Claude requested permissions to use ")
                || t.starts_with("The user doesn't want to proceed with this tool use")
        })
}

/// A timestamp for ordering; unreadable ones first, in file order.
fn timestamp(text: Option<&str>) -> Option<std::time::SystemTime> {
    humantime::parse_rfc3339_weak(text?.trim()).ok()
}

#[cfg(test)]
mod tests;
