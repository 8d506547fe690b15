//! `replay --record-mode`: whether `mcptape replay` records instead of replaying.
//!
//! `once` records when the tape holds nothing yet (missing, or no connection in it),
//! exactly as `mcptape record` would (the same [`cli::Record`] run, built from the replay
//! flags); `all` always records (the previous tape kept as `.prev`); `none` and `new`
//! replay (`new` adds what does not match: [`crate::upstream::fallback`]).

use std::path::Path;

use crate::cli::{self, RecordMode};
use crate::error::{Error, Result};
use crate::tape::Census;

/// What `replay` does for its record mode.
pub enum Plan {
    /// Replay the tape (`none`, `new`, or `once` with a tape).
    Replay,
    /// Record, as `mcptape record` would.
    Record(Box<cli::Record>),
}

impl cli::Replay {
    /// What the record mode asks for, with the tape at `path`; says on stderr when `once`
    /// records. A matching mode `new` cannot serve next time is a usage error.
    pub(super) fn plan(&self, path: &Path) -> Result<Plan> {
        match self.record_mode {
            RecordMode::None => Ok(Plan::Replay),
            RecordMode::New => {
                self.check_new()?;
                Ok(Plan::Replay)
            }
            RecordMode::All => Ok(Plan::Record(Box::new(self.as_record()))),
            RecordMode::Once if holds_a_connection(path)? => Ok(Plan::Replay),
            RecordMode::Once => {
                crate::term::eprintln_escaped!(
                    "mcptape: no tape `{}` yet: recording it (--record-mode once)",
                    path.display()
                );
                Ok(Plan::Record(Box::new(self.as_record())))
            }
        }
    }

    /// `new` appends what it forwards as a connection of its own, which only `--match
    /// any` serves to the same client next time: `strict` and `unordered` are refused.
    fn check_new(&self) -> Result<()> {
        let asked = match (self.matching.match_mode, self.matching.unordered) {
            (Some(cli::MatchMode::Any) | None, false) => return Ok(()),
            (Some(cli::MatchMode::Strict), _) => "--match strict",
            (Some(cli::MatchMode::Unordered), _) => "--match unordered",
            (_, true) => "--unordered",
        };
        Err(Error::Usage(format!(
            "--record-mode new replays with --match any: what it adds to the tape is a \
             connection of its own, which {asked} cannot serve to the same client next \
             time; drop {asked}"
        )))
    }

    /// The `mcptape record` these flags stand for: same session, servers, faults and
    /// command; redaction on and the default size limit, as `record`'s own defaults.
    fn as_record(&self) -> cli::Record {
        cli::Record {
            session: self.session.clone(),
            servers: self.servers.clone(),
            no_redact: false,
            max_bytes: cli::DEFAULT_MAX_BYTES,
            faults: self.faults.clone(),
            guard: cli::Guard::default(),
            note: None,
            command: self.command.clone(),
        }
    }
}

/// True when the tape at `path` exists and holds at least one connection. A tape that
/// exists but cannot be read is an error (never recorded over).
fn holds_a_connection(path: &Path) -> Result<bool> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        _ => {}
    }
    Ok(!Census::scan_warning(path)?.conns.is_empty())
}
