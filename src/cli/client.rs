//! The client commands' types: `call`, `client`, `tools`, `servers`, and the MCP config
//! they read.

use clap::Args;

use super::{Faults, Guard};

/// Where the MCP client configuration comes from.
#[derive(Debug, Args, Default)]
pub struct ConfigArg {
    /// The MCP config file (default: the first of ./.mcp.json, ./mcp.json,
    /// ./.cursor/mcp.json, ./.vscode/mcp.json, $MCPTAPE_HOME/config.json that exists).
    #[arg(long, value_name = "FILE", env = "MCPTAPE_CONFIG")]
    pub config: Option<std::path::PathBuf>,
}

/// How `call` prints the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Output {
    /// Text content as text; structured and non-text content readable; progress on stderr.
    Text,
    /// The result object as JSON.
    Json,
    /// The JSON-RPC response line exactly as the server wrote it (not escaped).
    Raw,
}

/// `mcptape call SERVER.TOOL [ARG]...`
#[derive(Debug, Args)]
#[command(after_long_help = crate::reference::for_command("call", "\
ARG is key:value or key=value. A value that parses as JSON (5, true, [1,2], {\"a\":1}) is
that JSON, anything else a string; key=@FILE reads the value from FILE (JSON if it parses;
one trailing newline dropped); key:@text is the text `@text`.

tools/call asks for progress (_meta.progressToken); with --output text it is shown on
stderr: a bar on a terminal (MCPTAPE_PROGRESS=0: none), else one line each. While
recording, the server is started with MCPTAPE_RECORD= and MCPTAPE_REPLAY= (empty: off),
so an `mcptape proxy` in the config does not record it again."))]
pub struct Call {
    /// The server's name in the config, a dot, and the tool: `everything.echo`.
    #[arg(value_name = "SERVER.TOOL")]
    pub target: String,
    /// Tool arguments, `key:value` or `key=value`.
    #[arg(value_name = "ARG")]
    pub arguments: Vec<String>,
    /// The whole arguments object as JSON (ARGs are set on top of it).
    #[arg(long = "args", value_name = "JSON")]
    pub args_json: Option<String>,
    /// How to print the result.
    #[arg(long, value_enum, default_value = "text")]
    pub output: Output,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub guard: Guard,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub client: Client,
}

/// What `call` and `tools` share: the config, the time limit, and the modes.
#[derive(Debug, Args)]
pub struct Client {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub config: ConfigArg,
    /// Give up after this many seconds (exit 124); more than 0, at most 86400.
    #[arg(long, value_name = "SECS", default_value = "60.0", value_parser = crate::duration::timeout, allow_negative_numbers = true)]
    pub timeout: std::time::Duration,
    /// Record into this session or tape path, whatever the environment says.
    #[arg(long, value_name = "SESSION")]
    pub record: Option<String>,
    /// Answer from this session or tape path: start no server.
    #[arg(long, value_name = "SESSION")]
    pub replay: Option<String>,
    /// Record without redacting secrets (the tape is marked so).
    #[arg(long)]
    pub no_redact: bool,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub faults: Faults,
}

/// `mcptape tools SERVER [--json]`
#[derive(Debug, Args)]
#[command(after_long_help = crate::reference::for_command("tools", ""))]
pub struct Tools {
    /// The server's name in the config.
    pub server: String,
    /// Print the tools as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub client: Client,
}

/// `mcptape servers [--json]`
#[derive(Debug, Args)]
#[command(after_long_help = crate::reference::for_command("servers", ""))]
pub struct Servers {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub config: ConfigArg,
    /// Print the servers as JSON (name, transport, command and args or url, cwd, the
    /// config file; of `env` and `headers` only the names, never the values). Both outputs
    /// show a credential in a command line or URL as `[REDACTED]`.
    #[arg(long)]
    pub json: bool,
}
