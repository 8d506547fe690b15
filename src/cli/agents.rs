//! The clap types of the agent commands: `install`, `uninstall`, `import` and `scan`.
//! Data only; their behaviour is in `cmd/install.rs`, `cmd/import.rs` and `cmd/scan.rs`.

use std::path::PathBuf;

use clap::Args;

/// An agent whose MCP config `install` edits (`--agent`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, clap::ValueEnum)]
pub enum AgentName {
    /// Claude Code: `.mcp.json`, `~/.claude.json` (top level and `projects["<cwd>"]`).
    ClaudeCode,
    /// Claude Desktop: its per-OS `claude_desktop_config.json`.
    ClaudeDesktop,
    /// Cursor: `~/.cursor/mcp.json`, `.cursor/mcp.json`.
    Cursor,
    /// VS Code: `.vscode/mcp.json` and the user profile's `mcp.json` (key `servers`).
    Vscode,
    /// Windsurf: `~/.codeium/windsurf/mcp_config.json`.
    Windsurf,
    /// Codex CLI: `$CODEX_HOME/config.toml` (`[mcp_servers.NAME]`).
    Codex,
    /// Gemini CLI: `~/.gemini/settings.json`, `.gemini/settings.json`.
    Gemini,
    /// Zed: `settings.json` `context_servers` (user and `.zed/settings.json`).
    Zed,
    /// Cline: `cline_mcp_settings.json` in the VS Code extension's storage.
    Cline,
    /// Goose: `~/.config/goose/config.yaml` (`extensions`).
    Goose,
}

/// Which of an agent's config files (`--scope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    /// The user's own files (in the home directory).
    User,
    /// The files of the project in the working directory (and, for Claude Code, the
    /// project's entry in `~/.claude.json`).
    Project,
}

/// What `install` and `uninstall` act on.
#[derive(Debug, Args)]
pub struct Targets {
    /// Only this agent's files (repeatable). Without it: every agent whose files exist.
    #[arg(long = "agent", value_name = "AGENT", value_enum)]
    pub agents: Vec<AgentName>,
    /// Only the files of this scope. Without it: both, where the agent has both.
    #[arg(long, value_enum, value_name = "SCOPE")]
    pub scope: Option<Scope>,
    /// Only the servers of this name (repeatable); a name in none of the chosen files is
    /// an error.
    #[arg(long = "server", value_name = "NAME")]
    pub servers: Vec<String>,
    /// Print what would change as a unified diff per file (stdout), and write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// `mcptape install [--agent A]... [--scope user|project] [--server NAME]... [--dry-run]`
#[derive(Debug, Args)]
#[command(after_long_help = crate::reference::for_command("install", ""))]
pub struct Install {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub targets: Targets,
    /// List the agents' files found, each server in them, and whether it is wrapped;
    /// change nothing.
    #[arg(long, conflicts_with = "dry_run")]
    pub list: bool,
    /// How a wrapped entry starts mcptape: this program (and words), instead of the
    /// absolute path of this binary: `--command mcptape`, `--command 'npx -y mcptape'`.
    #[arg(long, value_name = "CMD")]
    pub command: Option<String>,
}

/// `mcptape uninstall [--agent A]... [--scope user|project] [--server NAME]... [--dry-run]`
#[derive(Debug, Args)]
#[command(after_long_help = crate::reference::for_command("uninstall", ""))]
pub struct Uninstall {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub targets: Targets,
}

/// An agent whose past sessions `import` and `scan` read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, clap::ValueEnum)]
pub enum TranscriptAgent {
    /// Claude Code: `~/.claude/projects/<escaped cwd>/<session>.jsonl`.
    ClaudeCode,
    /// Codex CLI: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`.
    Codex,
}

/// What `import --help` says before its lists.
const IMPORT_NOTES: &str = "\
Each session with MCP calls becomes the tape <agent>-<session id prefix> in
$MCPTAPE_HOME/recordings (a previous one kept as .prev): one connection per
server, a made-up handshake, each call as tools/call with its answer, every
entry marked _meta.source. Every transcript is read first: one that does not
read is an error naming file and line, and nothing is written.

Then `mcptape verify TAPE --server NAME -- SERVER_CMD` plays the agent's real
calls against a new build of the server, and `mcptape replay TAPE -- CLIENT`
answers a client from the tape. docs/import.md says what is read and how.

Codex: the calls are its rollouts' mcp_tool_call_end events (server and tool from
their invocation); an Err result, Codex's own failure to get an answer, becomes
the JSON-RPC error -32603 with Codex's text.";

/// What `scan --help` says before its lists.
const SCAN_NOTES: &str = "\
A call counts as read-only when a tape in $MCPTAPE_HOME/recordings recorded a
tools/list of its server that marks the tool readOnlyHint: true; a tool no tape
lists is unknown. A transcript that cannot be read is named on stderr, the rest
listed, and scan exits 2 (with --import, nothing is written then).";

/// `mcptape import claude-code|codex [PATH]...`
#[derive(Debug, Args)]
#[command(after_long_help = crate::reference::for_command("import", IMPORT_NOTES))]
pub struct Import {
    /// Whose transcripts these are.
    #[arg(value_enum, value_name = "AGENT")]
    pub agent: TranscriptAgent,
    /// Transcript files or directories to import (a directory is walked for *.jsonl;
    /// for Codex, rollout-*.jsonl). Without one: every session of the agent found in its
    /// usual place (Claude Code: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects;
    /// Codex: $CODEX_HOME/sessions, else ~/.codex/sessions).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

/// `mcptape scan [--agent A]... [--import] [--json]`
#[derive(Debug, Args)]
#[command(after_long_help = crate::reference::for_command("scan", SCAN_NOTES))]
pub struct Scan {
    /// Only this agent's sessions (repeatable). Without it: every agent's.
    #[arg(long = "agent", value_name = "AGENT", value_enum)]
    pub agents: Vec<TranscriptAgent>,
    /// Also import every session found that made MCP calls (as `mcptape import` does).
    #[arg(long)]
    pub import: bool,
    /// One JSON array of sessions (agent, session, file, started, cwd, mcp_calls, servers
    /// with calls, read_only and unknown, other_tools, tape) instead of a table.
    #[arg(long)]
    pub json: bool,
}
