//! Command-line types (clap derive): data only, no behaviour. Each subcommand's `run`
//! lives in `src/cmd/<name>.rs`.

use clap::{Args, Parser, Subcommand};

use crate::framing::MAX_LINE_BYTES;

mod agents;
mod client;
mod guard;
mod look;
mod replay;
#[allow(unused_imports)] // until import uses TranscriptAgent (issue 15)
pub use agents::{AgentName, Scope, Targets, TranscriptAgent};
pub use agents::{Import, Install, Scan, Uninstall};
pub use client::{Call, Client, Output, Servers, Tools};
pub use guard::{Approvals, Approve, Commitments, CommitmentsAction, Deny, Guard};
pub use look::{
    Check, CheckFailOn, Diff, DiffFailOn, Export, ExportFormat, Note, ReportFormat, View,
};
pub use replay::{Faults, MatchMode, Matching, RecordMode};

/// What `record --help` says before its lists: how to play back what it recorded.
const RECORD_NOTES: &str = "\
Play back what it recorded: `mcptape replay SESSION -- CMD` runs CMD again with
every proxy answering from the tape (no server starts), and `mcptape verify
SESSION -- SERVER_CMD` plays the tape's client side against a (new) server and
reports every answer that changed.

Without CMD, the variables are printed and no tape is touched: the proxies
started with them append to the tape (the first one creates it).";

/// `--listen`: a bare port is on the loopback address.
fn listen_addr(text: &str) -> Result<std::net::SocketAddr, String> {
    match text.parse::<u16>() {
        Ok(port) => Ok(std::net::SocketAddr::from(([127, 0, 0, 1], port))),
        Err(_) => text
            .parse()
            .map_err(|e| format!("`{text}` is neither a port nor an address: {e}")),
    }
}

/// `--header 'Name: value'`: a name that is not empty, a colon, a value (both trimmed).
fn header(text: &str) -> Result<(String, String), String> {
    text.split_once(':')
        .filter(|(name, _)| !name.trim().is_empty())
        .map(|(name, value)| (name.trim().to_owned(), value.trim().to_owned()))
        .ok_or_else(|| format!("invalid --header `{text}`: write 'Name: value'"))
}

/// `--header-env NAME=VAR`: a header name and an environment variable name, neither empty.
fn header_env(text: &str) -> Result<(String, String), String> {
    text.split_once('=')
        .filter(|(name, var)| !name.trim().is_empty() && !var.trim().is_empty())
        .map(|(name, var)| (name.trim().to_owned(), var.trim().to_owned()))
        .ok_or_else(|| format!("invalid --header-env `{text}`: write NAME=VAR"))
}

/// Default of `--max-connections`: connections the HTTP front serves at once.
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;
/// Default of `--header-timeout`.
pub const DEFAULT_HEADER_TIMEOUT: &str = "10s";
/// Default of `--body-timeout`.
pub const DEFAULT_BODY_TIMEOUT: &str = "30s";
/// Default of `--session-idle`.
pub const DEFAULT_SESSION_IDLE: &str = "10m";

/// The default of `record --max-bytes`: 1 GiB.
pub const DEFAULT_MAX_BYTES: u64 = 1 << 30;

/// Record and replay the JSON-RPC traffic between MCP clients and servers.
#[derive(Debug, Parser)]
#[command(name = "mcptape", version, about, after_long_help = crate::reference::top_level())]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// Colour text for people: `auto` on a terminal only (stdout and stderr apart), or
    /// `always`, `never`. With `auto`, NO_COLOR (non-empty) turns it off, CLICOLOR_FORCE
    /// (non-empty, not `0`) on, CLICOLOR=0 off. JSON, JUnit and GitHub output never
    /// carries colour.
    #[arg(
        long,
        global = true,
        value_enum,
        value_name = "WHEN",
        default_value = "auto"
    )]
    pub color: ColorWhen,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a command with recording on: every `mcptape proxy` under it writes to the tape.
    Record(Record),
    /// Run a command with replay on: every `mcptape proxy` under it answers from the tape.
    Replay(Replay),
    /// Play a tape's client side against a live server and report every answer that changed.
    Verify(Verify),
    /// Stand between a client (stdin/stdout) and a stdio server, recording or replaying when asked.
    Proxy(Proxy),
    /// Call one tool of a configured server (recording or replaying when a mode is on).
    Call(Call),
    /// List a configured server's tools with their input schemas and annotations.
    Tools(Tools),
    /// List the configured servers and the file they come from.
    Servers(Servers),
    /// Redact secrets in an existing tape, or check that none is left (--check).
    Redact(Redact),
    /// Print a tape as a readable trace, one connection after another.
    Show(Show),
    /// Write a tape as one self-contained HTML page: a timeline of its connections.
    View(View),
    /// Compare two tapes (or a tape and a live server): tools, resources, prompts, answers.
    Diff(Diff),
    /// Check a recorded run against rules, for CI: tools called, errors, durations.
    Check(Check),
    /// Write a tape as HAR 1.2, OTLP/JSON traces, or plain JSON lines.
    Export(Export),
    /// Add a note to a tape (a heading in show and view), also while it is recording.
    Note(Note),
    /// List the recorded sessions.
    List(List),
    /// Wrap the MCP servers in agents' configs with `mcptape proxy` (keeping every other setting).
    Install(Install),
    /// Restore the entries `install` wrapped to exactly what they were.
    Uninstall(Uninstall),
    /// Turn an agent's past sessions (Claude Code, Codex) into tapes of their MCP calls.
    Import(Import),
    /// List an agent's past sessions and the MCP calls they made, per server.
    Scan(Scan),
    /// List the tool calls held for a person's decision (a policy's `ask`).
    Approvals(Approvals),
    /// Let a held tool call through to its server.
    Approve(Approve),
    /// Refuse a held tool call (the agent is told why).
    Deny(Deny),
    /// Recompute a tape's commitments, or check an answer against them.
    Commitments(Commitments),
    /// Print a completion script for a shell (bash, zsh, fish, powershell, elvish).
    Completions(Completions),
    /// Print the manual page (roff), for `man -l -` or a `man1` directory.
    Man(Man),
}

/// `mcptape completions SHELL`
#[derive(Debug, Args)]
#[command(after_help = "Install, for example:\n  \
    bash: mcptape completions bash > ~/.local/share/bash-completion/completions/mcptape\n  \
    zsh:  mcptape completions zsh > ~/.zfunc/_mcptape   (with ~/.zfunc in $fpath)\n  \
    fish: mcptape completions fish > ~/.config/fish/completions/mcptape.fish")]
pub struct Completions {
    /// The shell to complete in.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `mcptape man [SUBCOMMAND]`
#[derive(Debug, Args)]
#[command(
    after_help = "Read it with `mcptape man | man -l -`, or install the pages:\n  \
    mcptape man > ~/.local/share/man/man1/mcptape.1\n  \
    mcptape man record > ~/.local/share/man/man1/mcptape-record.1   (and so on)"
)]
pub struct Man {
    /// The page of this subcommand (`mcptape-record(1)`, …) instead of mcptape's own.
    pub subcommand: Option<String>,
}

/// `mcptape record SESSION [--server NAME]... [-- CMD...]`
#[derive(Debug, Args)]
#[command(after_long_help = crate::reference::for_command("record", RECORD_NOTES))]
pub struct Record {
    /// Session name (tape in $MCPTAPE_HOME/recordings) or a path (contains `/` or ends in
    /// `.ndjson`). A previous tape of that name is kept as `<session>.prev.ndjson`. A tape
    /// (or `.prev`) that is a symlink, or in a world-writable directory that is not sticky,
    /// is refused, and so is one that is a FIFO or has a second name (a hard link).
    pub session: String,
    /// Record only these servers (repeatable); other proxies pass traffic through.
    #[arg(long = "server", value_name = "NAME")]
    pub servers: Vec<String>,
    /// Record without redacting secrets (the tape is marked so). Also MCPTAPE_NO_REDACT=1.
    #[arg(long)]
    pub no_redact: bool,
    /// Stop recording (with a `$tape/truncated` entry, exit status 3) before the tape grows
    /// past this many bytes; live traffic goes on.
    #[arg(long, value_name = "BYTES", default_value_t = crate::cli::DEFAULT_MAX_BYTES)]
    pub max_bytes: u64,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub faults: Faults,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub guard: Guard,
    /// Write this note first (a `$note` entry, shown as a heading by show and view).
    #[arg(long, value_name = "TEXT")]
    pub note: Option<String>,
    /// The command to run with MCPTAPE_RECORD set. Without one, prints the variables to
    /// export in another shell.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// `mcptape proxy [--server NAME] [--record SESSION] (--url URL | -- CMD ARGS...)`
#[derive(Debug, Args)]
#[command(after_long_help = crate::reference::for_command("proxy", ""))]
pub struct Proxy {
    /// The server's name in the tape (default: derived from CMD, printed on stderr).
    #[arg(long, value_name = "NAME")]
    pub server: Option<String>,
    /// Record into this session or tape path, whatever the environment says (never through
    /// a symlink, a FIFO or a hard link). A recording not written whole turns a clean exit
    /// into status 3.
    #[arg(long, value_name = "SESSION")]
    pub record: Option<String>,
    /// Replay this session or tape path: answer from the tape, start no server.
    #[arg(long, value_name = "SESSION")]
    pub replay: Option<String>,
    /// Record without redacting secrets (the tape is marked so). Also MCPTAPE_NO_REDACT=1.
    #[arg(long)]
    pub no_redact: bool,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub matching: Matching,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub faults: Faults,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub guard: Guard,
    /// Lines longer than this are forwarded as they stream and recorded as their length
    /// and a prefix (a `$transport/oversize` entry): the tape loses that message, and
    /// replay ends the tape there.
    #[arg(long, value_name = "BYTES", env = "MCPTAPE_MAX_LINE_BYTES", default_value_t = MAX_LINE_BYTES)]
    pub max_line_bytes: usize,
    /// A remote Streamable HTTP server to stand in front of, instead of a command.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    pub url: Option<String>,
    /// Serve a local Streamable HTTP endpoint here instead of stdio: a port (on
    /// 127.0.0.1) or an address (`127.0.0.1:8080`; port 0 picks one, printed on stderr),
    /// forwarding to --url, or answering from the tape in replay mode. On a loopback
    /// address, requests whose Host is not localhost or a loopback address get 403.
    /// A session's GET carries what the server sends outside requests (event ids,
    /// Last-Event-ID resumption; one per session: a second gets 409; closed once 1,024
    /// events or 4 MiB wait unread, resumable). Progress goes on the stream of the
    /// request whose progressToken it names.
    /// Runs until SIGTERM/SIGINT/SIGHUP, then deletes the open sessions' upstream
    /// sessions, waiting at most 5 s (a second signal stops the wait). A sessionless
    /// request of the 2026-07-28 revision (its MCP-Protocol-Version header or body
    /// `_meta` says so) is served on its own: forwarded and recorded as a connection of
    /// its own, or matched alone against the tape's stateless exchanges.
    #[arg(long, value_name = "PORT|ADDR", conflicts_with = "command", value_parser = listen_addr)]
    pub listen: Option<std::net::SocketAddr>,
    /// A header for every request to --url (repeatable): `--header 'Authorization: Bearer …'`.
    /// Headers are never written to the tape.
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "url", value_parser = header)]
    pub headers: Vec<(String, String)>,
    /// A header for every request to --url whose value is environment variable VAR's
    /// (repeatable): `--header-env Authorization=MCPTAPE_HEADER_AUTHORIZATION` keeps the
    /// secret out of argv, where `ps` shows it. VAR unset or empty is an error.
    #[arg(long = "header-env", value_name = "NAME=VAR", requires = "url", value_parser = header_env)]
    pub header_envs: Vec<(String, String)>,
    /// The server command and its arguments.
    #[arg(last = true, required_unless_present_any = ["url", "listen"], value_name = "CMD")]
    pub command: Vec<String>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub front: FrontLimits,
    /// How a server command is relayed (a diagnostic switch): `bytes` as they come, or
    /// `lines`, one message at a time through the layers, as when a layer must read each
    /// message first. See docs/PERFORMANCE.md.
    #[arg(
        long,
        value_name = "MODE",
        env = "MCPTAPE_RELAY",
        default_value = "bytes"
    )]
    pub relay: Relay,
}

/// How the stdio proxy relays a server command (`--relay`, `MCPTAPE_RELAY`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Relay {
    /// Bytes as they arrive, lines cut for the layers afterwards (the fast path).
    Bytes,
    /// Line by line, each message through the layers before it is forwarded.
    Lines,
}

/// `mcptape replay SESSION [--server NAME]... [--ignore PATH]... [-- CMD...]`
#[derive(Debug, Args)]
#[command(after_long_help = crate::reference::for_command("replay", ""))]
pub struct Replay {
    /// Session name or tape path to answer from.
    pub session: String,
    /// Replay only these servers (repeatable); the others run live.
    #[arg(long = "server", value_name = "NAME")]
    pub servers: Vec<String>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub matching: Matching,
    /// How the verdicts are reported: `text` on stderr; `github` adds, once CMD has
    /// exited, one `::error` workflow command per connection that did not replay as
    /// recorded, on stdout (where the Actions runner reads them), after CMD's output.
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "text")]
    pub format: ReplayFormat,
    /// Whether to record: `none` replays only; `once` records (as `mcptape record`) when
    /// the tape does not exist yet, else replays; `new` replays what matches and forwards
    /// what does not to the real server, adding it to the tape as a connection marked
    /// added (stdio proxies; implies --match any, and refuses strict/unordered); `all`
    /// always records, keeping `.prev`. CI should say `none`, so that a missing tape
    /// fails instead of reaching the real server.
    #[arg(
        long,
        value_enum,
        value_name = "MODE",
        env = "MCPTAPE_MODE",
        default_value = "none"
    )]
    pub record_mode: RecordMode,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub faults: Faults,
    /// The command to run with MCPTAPE_REPLAY set. Without one, prints the variables to
    /// export in another shell.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// Report formats of `verify`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// For people: a summary, then each difference.
    Text,
    /// One JSON object per call, one per line.
    Json,
    /// JUnit XML: one testcase per call, for CI dashboards.
    Junit,
    /// GitHub workflow commands: an `::error` per changed call at its tape line, an
    /// `::warning` per skipped one, a `::notice` summary.
    Github,
}

/// `mcptape verify SESSION [--server NAME] [--ignore GLOB]... (--url URL | -- SERVER_CMD...)`
#[derive(Debug, Args)]
#[command(after_long_help = crate::reference::for_command("verify", "\
On a terminal, stderr shows a bar of the requests played (and of a big tape's loading);
MCPTAPE_PROGRESS=0 turns it off."))]
pub struct Verify {
    /// Session name or tape path.
    pub session: String,
    /// The recorded server to verify (needed when the tape holds several).
    #[arg(long, value_name = "NAME")]
    pub server: Option<String>,
    /// Leave this path out of the comparison (dot path from the message root; `*` one key
    /// or index, `**` any depth; JSON in text is parsed in place:
    /// `result.content.*.text.requestId`, `**.timestamp`). Repeatable.
    #[arg(long, value_name = "GLOB")]
    pub ignore: Vec<String>,
    /// Also play tool calls that may write (tools not marked readOnlyHint: true in the
    /// tape's recorded tools/list).
    #[arg(long)]
    pub allow_writes: bool,
    /// Report format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Write the report to this file instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
    /// Compare the answers' `result._meta` too (left out by default: metadata for the
    /// implementations, not part of the answer).
    #[arg(long, env = "MCPTAPE_MATCH_META", value_parser = clap::builder::BoolishValueParser::new())]
    pub match_meta: bool,
    /// Re-bless: rewrite the tape's recorded answers with the live ones (the previous tape
    /// is kept as .prev.ndjson), after printing what changed.
    #[arg(long)]
    pub update: bool,
    /// Seconds a call may take before it counts as unanswered (a new error); more than
    /// 0, at most 86400.
    #[arg(long, value_name = "SECS", default_value = "30.0", value_parser = crate::duration::timeout, allow_negative_numbers = true)]
    pub timeout: std::time::Duration,
    /// A live Streamable HTTP server to verify, instead of a command.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    pub url: Option<String>,
    /// A header for every request to --url (repeatable); never written anywhere.
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "url", value_parser = header)]
    pub headers: Vec<(String, String)>,
    /// Exit 1 when any recorded request was skipped (a tool not marked read-only, an
    /// answer the tape lacks) or nothing at all was compared: a CI check that checks.
    #[arg(long)]
    pub fail_on_skip: bool,
    /// The live server's command line.
    #[arg(
        last = true,
        required_unless_present = "url",
        value_name = "SERVER_CMD"
    )]
    pub command: Vec<String>,
}

/// `mcptape show SESSION [--full] [--json]`
#[derive(Debug, Args)]
#[command(after_long_help = crate::reference::for_command("show", "\
An array or object that starts deeper than 100 levels (the message's object is level 1) is
printed as one string, \"[too deep: N levels, B bytes, fnv1a H]\", never expanded."))]
pub struct Show {
    /// Session name or tape path.
    pub session: String,
    /// Do not truncate lines to the terminal width.
    #[arg(long)]
    pub full: bool,
    /// Print the tape's connections and entries as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `mcptape redact TAPE... [--check]`
#[derive(Debug, Args)]
#[command(after_long_help = crate::reference::for_command("redact", "\
Applies the redaction rules (and the values of the variables named in MCPTAPE_REDACT) to
every entry, rewriting the tape atomically (a temporary file renamed over it, its mode
kept); a TAPE that is a symlink, a hard link (a second name would keep the secret) or not
a regular file is refused. With --check nothing changes: the exit status
is 1 and every line `FILE:LINE: JSON.PATH (RULE)` is printed when something still looks
like a secret, 0 otherwise. --check also lists string values holding a high-entropy token
(20-256 characters with a lowercase letter, a capital and a digit, at least log2(length) -
0.75 bits per character within 3.5-4.3, not mostly words, not a hash, UUID, base64 file,
id, cursor or path, not in a PEM certificate or public key) as `(possible secret)`: these alone exit 0, and 1 with --strict.
--check --format json prints the findings as one JSON document, --format github as GitHub
workflow commands (`::error file=FILE,line=LINE::…`). See docs/REDACTION.md for the rules."))]
pub struct Redact {
    /// Session names or tape paths.
    #[arg(required = true, value_name = "TAPE")]
    pub sessions: Vec<String>,
    /// Change nothing; list what still looks like a secret and exit 1 if anything does.
    #[arg(long)]
    pub check: bool,
    /// With --check: exit 1 on possible secrets (high-entropy tokens) too.
    #[arg(long, requires = "check")]
    pub strict: bool,
    /// With --check: how the findings are printed on stdout.
    #[arg(
        long,
        value_enum,
        value_name = "FORMAT",
        default_value = "text",
        requires = "check"
    )]
    pub format: CheckFormat,
}

/// `mcptape list`
#[derive(Debug, Args)]
#[command(after_long_help = crate::reference::for_command("list", ""))]
pub struct List {
    /// Print the list as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The HTTP front's limits (`proxy --listen`): see [`crate::downstream::front::listen`] and [`crate::downstream::front::guard`].
#[derive(Debug, Args, Clone, Copy)]
#[command(next_help_heading = "HTTP front (--listen)")]
pub struct FrontLimits {
    /// Connections served at once; more wait (unread, in the listen backlog) until one
    /// closes.
    #[arg(long, value_name = "N", env = "MCPTAPE_MAX_CONNECTIONS", default_value_t = DEFAULT_MAX_CONNECTIONS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..), allow_negative_numbers = true)]
    pub max_connections: usize,
    /// Close a connection that has not sent a request's whole header in this time (also
    /// an idle keep-alive connection). `250ms`, `10s`, `1m`; a bare number is seconds.
    #[arg(long, value_name = "DURATION", env = "MCPTAPE_HEADER_TIMEOUT", default_value = DEFAULT_HEADER_TIMEOUT, value_parser = crate::duration::positive, allow_negative_numbers = true)]
    pub header_timeout: std::time::Duration,
    /// Answer `408` and close the connection when a request's whole body has not arrived
    /// in this time.
    #[arg(long, value_name = "DURATION", env = "MCPTAPE_BODY_TIMEOUT", default_value = DEFAULT_BODY_TIMEOUT, value_parser = crate::duration::positive, allow_negative_numbers = true)]
    pub body_timeout: std::time::Duration,
    /// End a session with no request and no open stream for this long (its upstream
    /// session is deleted, its tape connection closed); its id then gets `404`. `0`:
    /// never.
    #[arg(long, value_name = "DURATION", env = "MCPTAPE_SESSION_IDLE", default_value = DEFAULT_SESSION_IDLE, value_parser = crate::duration::parse, allow_negative_numbers = true)]
    pub session_idle: std::time::Duration,
}

/// `--color WHEN`: when text for people is coloured ([`crate::style`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorWhen {
    /// On a terminal only, unless NO_COLOR, CLICOLOR_FORCE or CLICOLOR=0 says otherwise.
    Auto,
    /// Always, also into pipes and files.
    Always,
    /// Never.
    Never,
}

/// How `replay` reports its verdicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReplayFormat {
    /// A readable account on stderr.
    Text,
    /// The same on stderr, and GitHub workflow commands on stdout after CMD.
    Github,
}

/// How `redact --check` prints its findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CheckFormat {
    /// `FILE:LINE: JSON.PATH (RULE)`, one a line.
    Text,
    /// One JSON document: every finding and a summary.
    Json,
    /// GitHub workflow commands: an `::error` per finding at its file and line (a possible
    /// secret is a `::warning`, an `::error` with --strict).
    Github,
}
