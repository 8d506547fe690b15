//! The commands that look at a tape without running anything of it: `view` (an HTML
//! page), `diff` (two tapes' tools, resources, prompts and answers), `check` (a CI gate),
//! `export` (HAR, OTLP, JSON lines) and `note` (a heading added to a tape).

use clap::Args;

/// Report formats of `diff` and `check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// For people: a summary, then each finding.
    Text,
    /// One JSON document: every finding and a summary.
    Json,
    /// JUnit XML for CI dashboards: diff writes a testcase per item with a change and per
    /// call, check one per rule (a failing rule's findings in its failure).
    Junit,
    /// GitHub workflow commands: an `::error` per failing finding (at its tape line when it
    /// has one), a `::warning` per other change, a `::notice` summary.
    Github,
}

/// `mcptape view SESSION [-o FILE.html] [--open] [--verify RECEIPT]`
#[derive(Debug, Args)]
#[command(after_long_help = crate::reference::for_command("view", "\
The page is one file with its scripts and styles inline: no network, no CDN, it works from
file://. Everything from the tape is inserted as text, never as HTML."))]
pub struct View {
    /// Session name or tape path.
    pub session: String,
    /// Write the page here (default: `<session>.html` beside the tape). Never through a
    /// symlink.
    #[arg(short = 'o', long, value_name = "FILE.html")]
    pub output: Option<std::path::PathBuf>,
    /// Open the page in the default browser once written (`xdg-open`, `open`).
    #[arg(long)]
    pub open: bool,
    /// Show a verify or replay receipt beside the tape (`<session>.verify.json`,
    /// `<session>.replay.json`): divergences and changed paths highlighted. Only the
    /// receipt named here is shown: one merely lying beside the tape is not read.
    #[arg(long, value_name = "RECEIPT")]
    pub verify: Option<std::path::PathBuf>,
}

/// When `diff` exits 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DiffFailOn {
    /// A change that breaks a client of the server (docs/DIFF.md lists them).
    Breaking,
    /// Any change.
    Any,
}

/// `mcptape diff A (B | --live -- CMD | --url URL)`
#[derive(Debug, Args)]
#[command(after_long_help = crate::reference::for_command("diff", "\
Compares what each side listed (tools, resources, resource templates, prompts), each change
classified as breaking or compatible for the server's clients (docs/DIFF.md has the rules),
and the answers to the calls both sides made (same or changed, as verify compares them)."))]
pub struct Diff {
    /// The old side: a session name or tape path.
    #[arg(value_name = "A")]
    pub old: String,
    /// The new side: a session name or tape path (or --live / --url).
    #[arg(value_name = "B", required_unless_present_any = ["live", "url"])]
    pub new: Option<String>,
    /// The new side is a live server started from CMD (after `--`): its lists are asked
    /// for, nothing is called.
    #[arg(long, requires = "command", conflicts_with_all = ["new", "url"])]
    pub live: bool,
    /// The new side is a live Streamable HTTP server.
    #[arg(long, value_name = "URL", conflicts_with_all = ["new", "command"])]
    pub url: Option<String>,
    /// A header for every request to --url (repeatable); never written anywhere.
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "url", value_parser = super::header)]
    pub headers: Vec<(String, String)>,
    /// The server to compare (needed when a tape holds several).
    #[arg(long, value_name = "NAME")]
    pub server: Option<String>,
    /// Compare the structure only: names, schemas, annotations; descriptions and titles
    /// left out at every level, and the calls not compared (a recorded tape as the
    /// snapshot a CI checks a server against).
    #[arg(long)]
    pub structure_only: bool,
    /// Exit 1 when there is a breaking change, or any change.
    #[arg(long, value_enum, value_name = "WHAT")]
    pub fail_on: Option<DiffFailOn>,
    /// Report format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: ReportFormat,
    /// Write the report to this file instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
    /// Seconds to wait for the live server's answers; more than 0, at most 86400.
    #[arg(long, value_name = "SECS", default_value = "30.0", value_parser = crate::duration::timeout, allow_negative_numbers = true)]
    pub timeout: std::time::Duration,
    /// The live server's command line (with --live).
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// What `check --fail-on` fails on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum CheckFailOn {
    /// A JSON-RPC error answer to a client's request.
    Error,
    /// A client's tools/call answered with isError: true.
    ToolError,
    /// A line that was not a JSON-RPC message, or an oversize one.
    Invalid,
    /// A divergence in the receipt beside the tape (or --receipt).
    Diverged,
    /// The tape was truncated (record --max-bytes).
    Truncated,
    /// An injected fault.
    Fault,
    /// A call the policy gate refused (deny, a refused ask, dry-run).
    PolicyDenied,
}

/// `mcptape check SESSION [--expect-tool T]... [--forbid-tool T]... [--max-calls N]
/// [--max-duration D] [--fail-on WHAT,...]`
#[derive(Debug, Args)]
#[command(after_long_help = crate::reference::for_command("check", ""))]
pub struct Check {
    /// Session name or tape path.
    pub session: String,
    /// Check only these servers' connections (repeatable).
    #[arg(long = "server", value_name = "NAME")]
    pub servers: Vec<String>,
    /// Fail unless this tool was called (repeatable; a glob: `read_*`).
    #[arg(long = "expect-tool", value_name = "TOOL")]
    pub expect_tools: Vec<String>,
    /// Fail if this tool was called (repeatable; a glob).
    #[arg(long = "forbid-tool", value_name = "TOOL")]
    pub forbid_tools: Vec<String>,
    /// Fail when more than N tools/call requests were made.
    #[arg(long, value_name = "N")]
    pub max_calls: Option<usize>,
    /// Fail when the whole run (first entry to last) took longer (`30s`, `2m`).
    #[arg(long, value_name = "DURATION", value_parser = crate::duration::positive)]
    pub max_duration: Option<std::time::Duration>,
    /// Fail when any one request took longer to answer (`500ms`, `5s`).
    #[arg(long, value_name = "DURATION", value_parser = crate::duration::positive)]
    pub max_call_duration: Option<std::time::Duration>,
    /// Fail on these (comma-separated or repeated).
    #[arg(long, value_enum, value_name = "WHAT", value_delimiter = ',')]
    pub fail_on: Vec<CheckFailOn>,
    /// The receipt `--fail-on diverged` reads (default: the verify and replay receipts
    /// beside the tape).
    #[arg(long, value_name = "FILE")]
    pub receipt: Option<std::path::PathBuf>,
    /// Report format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: ReportFormat,
    /// Write the report to this file instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
}

/// What `export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// HAR 1.2 (HTTP Archive): HTTP exchanges as recorded; stdio ones as pseudo-requests.
    Har,
    /// OTLP/JSON traces: one trace per connection, one span per request.
    Otlp,
    /// The entries as plain JSON objects, one per line (for jq).
    Jsonl,
}

/// `mcptape export SESSION --format har|otlp|jsonl [-o FILE]`
#[derive(Debug, Args)]
#[command(after_long_help = crate::reference::for_command("export", ""))]
pub struct Export {
    /// Session name or tape path.
    pub session: String,
    /// What to write.
    #[arg(long, value_enum)]
    pub format: ExportFormat,
    /// Write here instead of stdout (never through a symlink).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
}

/// `mcptape note SESSION TEXT...`
#[derive(Debug, Args)]
#[command(after_long_help = crate::reference::for_command("note", "\
Appends a `$note` entry (its time and text) to the tape, under the tape's lock, so it is
safe while a recording is writing to it. A note is never sent to anyone: replay and verify
pass over it; show and view print it as a heading."))]
pub struct Note {
    /// Session name or tape path (the tape must exist).
    pub session: String,
    /// The note's text (several words are joined with spaces).
    #[arg(required = true, value_name = "TEXT")]
    pub text: Vec<String>,
}
