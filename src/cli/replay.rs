//! The clap types of how a tape is played to a client: the matching flags (`--match`,
//! `--ignore`, …, on `replay` and `proxy`), the record modes of `replay`, and the fault
//! flags every front takes. Data only; `mode.rs` reads them into replay settings, and
//! `fault/` into a plan.

use clap::Args;

/// How replay matches the client's messages against the tape.
#[derive(Debug, Args, Default)]
pub struct Matching {
    /// Leave this path out when matching (dot path from the message root; `*` one key or
    /// index, `**` any depth: `params.arguments.requestId`, `**.timestamp`). Repeatable.
    #[arg(long, value_name = "PATH")]
    pub ignore: Vec<String>,
    /// Match `initialize` (and `server/discover`) on params too, not on method alone.
    #[arg(long)]
    pub strict_initialize: bool,
    /// How the client's messages are matched against the tape: `strict` (the recorded
    /// order), `unordered` (any pending request of the current burst), or `any` (a mock:
    /// a request gets the first unused recorded exchange that matches it, wherever it is).
    /// See docs/testing-clients.md.
    #[arg(long = "match", value_enum, value_name = "MODE")]
    pub match_mode: Option<MatchMode>,
    /// Same as `--match unordered` (kept as an alias).
    #[arg(long, conflicts_with = "match_mode")]
    pub unordered: bool,
    /// With `--match any`: fail the verdict when recorded requests were never used (they
    /// are listed either way).
    #[arg(long)]
    pub fail_on_unused: bool,
    /// Keep the recorded delays between the server's messages. Progress needs no pacing:
    /// with or without it, an answer that follows a notification is written once the
    /// client has read the notification (at most 200 ms later).
    #[arg(long)]
    pub pace: bool,
    /// Compare `params._meta` (and a client answer's `result._meta`) too. By default
    /// `_meta` is left out: it is metadata for the implementations (progress tokens, trace
    /// context, an agent's own ids such as Claude Code's `claudecode/toolUseId`).
    /// `progressToken` and trace context are never compared (the token is rewritten).
    #[arg(long, env = "MCPTAPE_MATCH_META", value_parser = clap::builder::BoolishValueParser::new())]
    pub match_meta: bool,
    /// Never send the client a server request the tape holds no answer to (a whole
    /// recording's client left before answering it). By default such a request is sent
    /// no earlier than its recorded delay after what caused it, and the client's
    /// unrecorded answer is noted, not failed.
    #[arg(long)]
    pub skip_unanswered_requests: bool,
}

/// How replay matches the client's messages (`--match`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum MatchMode {
    /// The recorded order: the first difference fails.
    #[default]
    Strict,
    /// Any pending request of the current burst.
    Unordered,
    /// A mock: any recorded exchange of the server that matches, wherever it is.
    Any,
}

/// Whether `replay` records (`--record-mode`, `MCPTAPE_MODE`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum RecordMode {
    /// Replay only; nothing is recorded (a missing tape is an error).
    #[default]
    None,
    /// Record when the tape does not exist yet, else replay.
    Once,
    /// Replay what matches; forward what does not to the real server and add it to the tape.
    New,
    /// Always record (the previous tape is kept as `.prev`).
    All,
}

/// Fault injection: `--fault RULE` (repeatable) and `--faults FILE`.
#[derive(Debug, Args, Default, Clone)]
pub struct Faults {
    /// Inject a fault (repeatable): `SELECTOR: EFFECT`, for example
    /// `--fault 'tools/call name=search nth=2: error -32000 "rate limited"'`. Selectors:
    /// a method, `name=TOOL`, `nth=N`, `p=P seed=S`; effects: `error CODE MESSAGE`,
    /// `tool-error TEXT`, `delay MS`, `timeout`, `drop`, `malformed`, `disconnect
    /// [STATUS]`, `slow-stream`. See docs/faults.md.
    #[arg(long = "fault", value_name = "RULE")]
    pub rules: Vec<String>,
    /// Fault rules from a JSON or TOML file (see docs/faults.md).
    #[arg(long = "faults", value_name = "FILE")]
    pub file: Option<std::path::PathBuf>,
}
