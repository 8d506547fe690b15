//! The guard's flags (`--policy`, `--approval-timeout`, `--commit`, `--redact-results`)
//! and the commands that act on what it holds or wrote: `approvals`, `approve`, `deny`,
//! `commitments`.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};

/// The policy gate and the commitments: on `proxy`, `record` and `call`.
#[derive(Debug, Args, Default, Clone)]
pub struct Guard {
    /// Gate tool calls by the rules of this TOML file: allow, deny, ask (held for
    /// `mcptape approve`/`deny`) or dry-run (see docs/POLICY.md). A file that cannot be
    /// read or parsed is an error before the server starts. Also MCPTAPE_POLICY.
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// How long a call a rule says `ask` for waits for a decision, in seconds (default
    /// 300; 0: refused at once), then is refused. Also MCPTAPE_APPROVAL_TIMEOUT.
    #[arg(long, value_name = "SECS", value_parser = crate::duration::parse)]
    pub approval_timeout: Option<Duration>,
    /// Write the SHA-256 of each tools/call result's RFC 8785 canonical form in the tape
    /// (a `$commit` entry; always on with --policy). Also MCPTAPE_COMMIT=1.
    #[arg(long)]
    pub commit: bool,
    /// Keep tools/call result bodies out of the tape, keeping their commitments (implies
    /// --commit). Also MCPTAPE_REDACT_RESULTS=1.
    #[arg(long)]
    pub redact_results: bool,
}

/// `mcptape approvals [--json]`
#[derive(Debug, Args)]
#[command(after_long_help = crate::reference::for_command("approvals", ""))]
pub struct Approvals {
    /// Print the pending calls as JSON, one object per line.
    #[arg(long)]
    pub json: bool,
}

/// `mcptape approve ID`
#[derive(Debug, Args)]
#[command(after_long_help = crate::reference::for_command("approve", ""))]
pub struct Approve {
    /// The pending call's id, as `mcptape approvals` lists it.
    pub id: String,
}

/// `mcptape deny ID [--reason TEXT]`
#[derive(Debug, Args)]
#[command(after_long_help = crate::reference::for_command("deny", ""))]
pub struct Deny {
    /// The pending call's id, as `mcptape approvals` lists it.
    pub id: String,
    /// Why, for the agent: it is in the refusal's text.
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
}

/// `mcptape commitments (verify TAPE | check TAPE --answer FILE)`
#[derive(Debug, Args)]
#[command(after_long_help = crate::reference::for_command("commitments", ""))]
pub struct Commitments {
    #[command(subcommand)]
    #[allow(missing_docs)]
    pub action: CommitmentsAction,
}

/// What `commitments` does.
#[derive(Debug, Subcommand)]
pub enum CommitmentsAction {
    /// Recompute every commitment whose answer is in the tape; exit 1 on a mismatch.
    Verify {
        /// Session name or tape path.
        session: String,
    },
    /// Check a given answer against the tape's commitments.
    Check {
        /// Session name or tape path.
        session: String,
        /// The answer: a tools/call result, or the whole JSON-RPC response.
        #[arg(long, value_name = "FILE")]
        answer: PathBuf,
    },
}
