//! Agents' past sessions made into tapes: each session's MCP tool calls, read from the
//! agent's own transcript files, become one tape with one connection per server.
//!
//! Parts: one reader per agent's transcript format (Claude Code's session JSONL, Codex's
//! rollout JSONL), each producing [`ImportedSession`]s; one writer that turns a session
//! into a tape (a synthesized handshake and the calls in order, every entry marked
//! `_meta.source` as imported), so replay and verify can tell what was recorded on the
//! wire from what was reconstructed.

use serde_json::Value;

pub mod claude;
pub mod codex;
pub mod codex_home;
mod error;
pub mod file;
pub mod find;
pub mod hints;
pub mod summary;
pub mod tape;

pub use error::ImportError;

/// One past session of an agent, as its transcript tells it.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedSession {
    /// The agent's id of the session (Claude Code's session id, Codex's rollout id).
    pub id: String,
    /// The file it was read from (and, for Claude Code, its subagents' files beside it).
    pub source: std::path::PathBuf,
    /// When the session began (RFC 3339, as the transcript says), if it says.
    pub started: Option<String>,
    /// The working directory the agent ran in, where the transcript says.
    pub cwd: Option<String>,
    /// The MCP tool calls, in transcript order.
    pub calls: Vec<ImportedCall>,
    /// Tool uses that were not MCP calls (Bash, Edit, …), counted and skipped.
    pub skipped_tools: usize,
}

/// One MCP `tools/call` and what came back, as an agent's transcript recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedCall {
    /// The MCP server's name in the agent's config.
    pub server: String,
    /// The tool's name on that server.
    pub tool: String,
    /// The call's arguments (a JSON object).
    pub arguments: Value,
    /// The answer: a `CallToolResult` (`content`, `isError`, `structuredContent`,
    /// `_meta`) or a JSON-RPC error object (`code`, `message`), or `None` when the
    /// transcript holds no answer (the session ended first).
    pub answer: Option<Answer>,
    /// When the agent made the call (RFC 3339, as the transcript says), if known.
    pub called_at: Option<String>,
    /// When the answer came, if known.
    pub answered_at: Option<String>,
    /// Set when the transcript holds a shortened answer (truncated, or kept aside in a
    /// file that is gone): what is missing, for the tape's entry.
    pub incomplete: Option<String>,
}

/// What a server answered a call, as far as the transcript tells.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// A JSON-RPC result: the `CallToolResult` object.
    Result(Value),
    /// A JSON-RPC error object.
    Error(Value),
}
