//! Codex CLI rollouts (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl`) read
//! into an [`ImportedSession`].
//!
//! A rollout is JSONL of `RolloutLine`s (codex-rs/protocol `protocol.rs`): `{"timestamp",
//! "type", "payload"}`, where `type` names the `RolloutItem` (`session_meta`,
//! `response_item`, `event_msg`, `turn_context`, `compacted`, …). The MCP calls are the
//! `event_msg` payloads of type `mcp_tool_call_end`: `call_id`, `invocation {server, tool,
//! arguments}`, `duration {secs, nanos}` (serde's `std::time::Duration`) and `result`,
//! serde's `Result<CallToolResult, String>`: `{"Ok": {content, structuredContent, isError,
//! _meta}}` or `{"Err": "…"}`. The server and tool come from the invocation, never from
//! the model-visible function name (`mcp__server__tool`, sanitized and hashed when long).
//! An `mcp_tool_call_begin`, where present, gives the call's start; without one the start
//! is the end's time less the duration.
//!
//! Decisions:
//! - `Err(text)` is Codex's own failure to get an answer (the server was gone, the call
//!   timed out, the server answered a JSON-RPC error that Codex turned into text): it
//!   becomes a JSON-RPC error `{"code": -32603, "message": text}` rather than an `isError`
//!   result, which would claim the tool ran and said so.
//! - Types of line, of event and of response item that this reader does not use are
//!   skipped: Codex adds them often. A line that is not JSON, not an object, or an MCP
//!   event without its members is an error naming the file and line. A last line the file
//!   ends in the middle of (Codex stopped mid-write) is skipped with a warning.
//! - A part of arguments or results nested deeper than [`crate::depth::MAX_JSON_DEPTH`]
//!   becomes the depth module's marker, and the call says so in `incomplete`.
//! - Tool calls of other kinds (`shell`, `apply_patch`, web search…), told by the
//!   `response_item`s whose `call_id` no MCP event has, are counted in `skipped_tools`.
//!   Among them, function calls named `mcp__…` with no MCP event (a rollout written
//!   without extended history, where Codex keeps no `mcp_tool_call_end`) are also said in
//!   a warning: their server and tool cannot be told from the sanitized name.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::import::file::{Lines, MAX_LINE_BYTES};
use crate::import::{Answer, ImportError, ImportedCall, ImportedSession};

/// The JSON-RPC error code an `Err` result becomes (JSON-RPC's "internal error").
pub const ERR_CODE: i64 = -32603;
/// The agent's name on tapes (`_meta.source.imported`) and in tape names.
pub const AGENT: &str = "codex";

/// A session read from its rollout, and what did not stop the reading.
#[derive(Debug)]
pub struct Rollout {
    /// The session.
    pub session: ImportedSession,
    /// Lines skipped (a torn last line), one sentence each, naming file and line.
    pub warnings: Vec<String>,
}

/// Reads the rollout at `path`, one line at a time.
pub fn read(path: &Path) -> Result<Rollout, ImportError> {
    let mut reader = Reader::new(path);
    let mut lines = Lines::open(path)?;
    while let Some(line) = lines.next_line()? {
        reader.line(line.number, &line.bytes, line.terminated)?;
    }
    reader.finish()
}

/// Reads a rollout already in memory (`path` names it in errors).
pub fn parse(path: &Path, bytes: &[u8]) -> Result<Rollout, ImportError> {
    let mut reader = Reader::new(path);
    let mut rest = bytes;
    let mut number = 0;
    while !rest.is_empty() {
        number += 1;
        let (line, terminated, next) = match memchr::memchr(b'\n', rest) {
            Some(i) => (&rest[..i], true, &rest[i + 1..]),
            None => (rest, false, &rest[rest.len()..]),
        };
        if line.len() > MAX_LINE_BYTES {
            return Err(ImportError::TooLong {
                path: path.to_path_buf(),
                line: number,
                max: MAX_LINE_BYTES,
            });
        }
        reader.line(number, line, terminated)?;
        rest = next;
    }
    reader.finish()
}

/// One rollout line, its payload kept raw until its type is known.
#[derive(Deserialize)]
#[serde(expecting = "a rollout line (a JSON object)")]
struct RawLine<'a> {
    #[serde(default, borrow)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(rename = "type", default, borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    payload: Option<&'a RawValue>,
    /// Rollouts written before `RolloutLine` (2025) began with a bare `SessionMeta`.
    #[serde(default, borrow)]
    id: Option<Cow<'a, str>>,
}

/// `SessionMeta`'s members that matter here (the line flattens it with `git`).
#[derive(Deserialize)]
#[serde(expecting = "a session_meta payload (an object)")]
struct MetaPayload {
    id: String,
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(default)]
    cwd: Option<String>,
}

/// What kind of event or response item a payload is.
#[derive(Deserialize)]
#[serde(expecting = "a payload object with a `type`")]
struct Typed<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default)]
    call_id: Option<String>,
    /// A function call's model-visible name (only to say what could not be imported).
    #[serde(default)]
    name: Option<String>,
}

/// `McpInvocation`.
#[derive(Deserialize)]
struct Invocation<'a> {
    server: String,
    tool: String,
    #[serde(default, borrow)]
    arguments: Option<&'a RawValue>,
}

/// `McpToolCallBeginEvent`.
#[derive(Deserialize)]
struct Begin<'a> {
    call_id: String,
    #[serde(borrow)]
    invocation: Invocation<'a>,
}

/// `McpToolCallEndEvent`.
#[derive(Deserialize)]
struct End<'a> {
    call_id: String,
    #[serde(borrow)]
    invocation: Invocation<'a>,
    #[serde(default, borrow)]
    duration: Option<&'a RawValue>,
    #[serde(borrow)]
    result: CallResult<'a>,
}

/// serde's `Result<CallToolResult, String>`.
#[derive(Deserialize)]
enum CallResult<'a> {
    Ok(#[serde(borrow)] &'a RawValue),
    Err(String),
}

/// serde's `std::time::Duration`.
#[derive(Deserialize)]
struct SerdeDuration {
    secs: u64,
    nanos: u32,
}

/// The state of one rollout being read.
struct Reader<'p> {
    path: &'p Path,
    id: Option<String>,
    started: Option<String>,
    cwd: Option<String>,
    calls: Vec<ImportedCall>,
    /// Calls begun and not yet ended, by `call_id`.
    open: HashMap<String, usize>,
    /// Every `call_id` an MCP event used.
    mcp_ids: HashSet<String>,
    /// The tool calls of `response_item`s (their `call_id`, when they have one).
    tool_items: Vec<(Option<String>, bool)>,
    /// Lines read that were rollout lines (had a `type`, or were a bare meta).
    rollout_lines: usize,
    warnings: Vec<String>,
}

impl<'p> Reader<'p> {
    fn new(path: &'p Path) -> Reader<'p> {
        Reader {
            path,
            id: None,
            started: None,
            cwd: None,
            calls: Vec::new(),
            open: HashMap::new(),
            mcp_ids: HashSet::new(),
            tool_items: Vec::new(),
            rollout_lines: 0,
            warnings: Vec::new(),
        }
    }

    fn bad(&self, line: usize, why: impl std::fmt::Display) -> ImportError {
        ImportError::Shape {
            path: self.path.to_path_buf(),
            line,
            why: why.to_string(),
        }
    }

    fn line(&mut self, n: usize, bytes: &[u8], terminated: bool) -> Result<(), ImportError> {
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        if bytes.trim_ascii_start().first() != Some(&b'{') && terminated {
            return Err(ImportError::NotObject {
                path: self.path.to_path_buf(),
                line: n,
            });
        }
        let raw: RawLine<'_> = match serde_json::from_slice(bytes) {
            Ok(raw) => raw,
            Err(e) if !terminated && e.is_eof() => {
                self.warnings.push(format!(
                    "`{}` line {n}: skipped, the file ends in the middle of it (Codex stopped while writing it)",
                    self.path.display()
                ));
                return Ok(());
            }
            Err(e) if e.is_syntax() || e.is_eof() => {
                return Err(ImportError::BadLine {
                    path: self.path.to_path_buf(),
                    line: n,
                    why: e.to_string(),
                });
            }
            Err(e) => return Err(self.bad(n, e)),
        };
        let ts = raw.timestamp.map(Cow::into_owned);
        match (raw.kind.as_deref(), raw.payload) {
            (Some("session_meta"), Some(payload)) => {
                self.rollout_lines += 1;
                let meta: MetaPayload = serde_json::from_str(payload.get())
                    .map_err(|e| self.bad(n, format_args!("session_meta: {e}")))?;
                if self.id.is_none() {
                    self.id = Some(meta.id);
                    self.started = meta.timestamp.or(ts);
                    self.cwd = meta.cwd;
                }
            }
            (Some("event_msg"), Some(payload)) => {
                self.rollout_lines += 1;
                self.event(n, ts, payload)?;
            }
            (Some("response_item"), Some(payload)) => {
                self.rollout_lines += 1;
                let item: Typed<'_> = serde_json::from_str(payload.get())
                    .map_err(|e| self.bad(n, format_args!("response_item: {e}")))?;
                if matches!(
                    &*item.kind,
                    "function_call" | "custom_tool_call" | "local_shell_call" | "web_search_call"
                ) {
                    let mcp_named = item.name.as_deref().is_some_and(|n| n.starts_with("mcp__"));
                    self.tool_items.push((item.call_id, mcp_named));
                }
            }
            (Some(kind @ ("session_meta" | "event_msg" | "response_item")), None) => {
                return Err(self.bad(n, format_args!("a `{kind}` line without its `payload`")));
            }
            (Some(_), _) => self.rollout_lines += 1,
            (None, _) => {
                if let (Some(id), true) = (raw.id, self.id.is_none() && self.rollout_lines == 0) {
                    self.rollout_lines += 1;
                    self.id = Some(id.into_owned());
                    self.started = ts;
                }
            }
        }
        Ok(())
    }

    fn event(
        &mut self,
        n: usize,
        ts: Option<String>,
        payload: &RawValue,
    ) -> Result<(), ImportError> {
        let typed: Typed<'_> = serde_json::from_str(payload.get())
            .map_err(|e| self.bad(n, format_args!("event_msg: {e}")))?;
        match &*typed.kind {
            "mcp_tool_call_begin" => {
                let begin: Begin<'_> = serde_json::from_str(payload.get())
                    .map_err(|e| self.bad(n, format_args!("mcp_tool_call_begin: {e}")))?;
                let mut call = self.new_call(&begin.invocation);
                call.called_at = ts;
                self.mcp_ids.insert(begin.call_id.clone());
                self.open.insert(begin.call_id, self.calls.len());
                self.calls.push(call);
            }
            "mcp_tool_call_end" => {
                let end: End<'_> = serde_json::from_str(payload.get())
                    .map_err(|e| self.bad(n, format_args!("mcp_tool_call_end: {e}")))?;
                let (answer, deep) = match end.result {
                    CallResult::Ok(result) => {
                        let (value, deep) = value_of(result);
                        let Value::Object(mut result) = value else {
                            return Err(
                                self.bad(n, "mcp_tool_call_end: `result.Ok` is not an object")
                            );
                        };
                        for (old, new) in [
                            ("is_error", "isError"),
                            ("structured_content", "structuredContent"),
                        ] {
                            if !result.contains_key(new)
                                && let Some(v) = result.remove(old)
                            {
                                result.insert(new.to_owned(), v);
                            }
                        }
                        (Answer::Result(Value::Object(result)), deep)
                    }
                    CallResult::Err(text) => (
                        Answer::Error(serde_json::json!({"code": ERR_CODE, "message": text})),
                        false,
                    ),
                };
                let index = match self.open.remove(&end.call_id) {
                    Some(index) => index,
                    None => {
                        let mut call = self.new_call(&end.invocation);
                        call.called_at = started_before(ts.as_deref(), end.duration);
                        self.calls.push(call);
                        self.calls.len() - 1
                    }
                };
                self.mcp_ids.insert(end.call_id);
                let call = &mut self.calls[index];
                call.answer = Some(answer);
                call.answered_at = ts;
                if deep {
                    call.incomplete = Some(too_deep_note(call.incomplete.take()));
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn new_call(&self, invocation: &Invocation<'_>) -> ImportedCall {
        let (arguments, deep) = match invocation.arguments {
            Some(raw) => value_of(raw),
            None => (Value::Object(serde_json::Map::new()), false),
        };
        let arguments = match arguments {
            Value::Null => Value::Object(serde_json::Map::new()),
            other => other,
        };
        ImportedCall {
            server: invocation.server.clone(),
            tool: invocation.tool.clone(),
            arguments,
            answer: None,
            called_at: None,
            answered_at: None,
            incomplete: deep.then(|| too_deep_note(None)),
        }
    }

    fn finish(self) -> Result<Rollout, ImportError> {
        let Some(id) = self.id else {
            let reason = if self.rollout_lines == 0 {
                "it has no rollout line (`{\"timestamp\", \"type\", \"payload\"}`)"
            } else {
                "it has no `session_meta` line"
            };
            return Err(ImportError::NotSession {
                path: self.path.to_path_buf(),
                agent: "Codex",
                why: reason.to_owned(),
            });
        };
        let unpaired: Vec<bool> = self
            .tool_items
            .iter()
            .filter(|(id, _)| id.as_ref().is_none_or(|id| !self.mcp_ids.contains(id)))
            .map(|(_, mcp_named)| *mcp_named)
            .collect();
        let skipped_tools = unpaired.len();
        let mcp_named = unpaired.iter().filter(|m| **m).count();
        let mut warnings = self.warnings;
        if mcp_named > 0 {
            warnings.push(format!(
                "`{}`: {mcp_named} function call{s} named `mcp__…` {have} no mcp_tool_call_end event \
                 (Codex keeps those only with extended history); not imported, counted as other tool calls",
                self.path.display(),
                s = if mcp_named == 1 { "" } else { "s" },
                have = if mcp_named == 1 { "has" } else { "have" },
            ));
        }
        Ok(Rollout {
            session: ImportedSession {
                id,
                source: self.path.to_path_buf(),
                started: self.started,
                cwd: self.cwd,
                calls: self.calls,
                skipped_tools,
            },
            warnings,
        })
    }
}

/// A raw JSON value as a [`Value`], parts too deep replaced by markers (and whether any
/// were).
fn value_of(raw: &RawValue) -> (Value, bool) {
    let shallow = crate::depth::shallow(raw.get());
    let deep = matches!(shallow, Cow::Owned(_));
    // The shallow text is JSON nested at most MAX_JSON_DEPTH levels: it parses.
    let value = serde_json::from_str(&shallow).unwrap_or(Value::Null);
    (value, deep)
}

fn too_deep_note(before: Option<String>) -> String {
    let note = format!(
        "parts nested deeper than {} levels were replaced by markers",
        crate::depth::MAX_JSON_DEPTH
    );
    match before {
        Some(before) if before.contains(&note) => before,
        Some(before) => format!("{before}; {note}"),
        None => note,
    }
}

/// When a call that ended at `ended` after `duration` began, as RFC 3339 with
/// milliseconds; `None` when either is missing or unreadable, or when the duration would
/// put the start before 1970 (the formatter cannot write such a time, and a rollout's
/// duration is outside data: it must not panic the import).
fn started_before(ended: Option<&str>, duration: Option<&RawValue>) -> Option<String> {
    let ended = humantime::parse_rfc3339_weak(ended?).ok()?;
    let d: SerdeDuration = serde_json::from_str(duration?.get()).ok()?;
    let took = Duration::from_secs(d.secs).checked_add(Duration::from_nanos(u64::from(d.nanos)))?;
    let began = ended.checked_sub(took)?;
    began.duration_since(std::time::UNIX_EPOCH).ok()?;
    Some(crate::tape::format::timestamp(began))
}

#[cfg(test)]
#[path = "codex_tests.rs"]
mod tests;
