//! `mcptape import claude-code|codex [PATH]...`: an agent's past sessions as tapes.
//!
//! Every transcript is read before any tape is written, so a transcript that does not
//! read (a bad line, a file that is not one) fails the command with an error naming it
//! and changes nothing. Then each session with MCP calls becomes the tape
//! `<agent>-<session id prefix>` in the recordings directory ([`crate::import::tape`]),
//! a previous tape of that name kept as `.prev`, and one line on stdout says what it
//! holds: the tape's name, its calls per server, and its path. Sessions without MCP calls
//! are said on stderr and write nothing.

use std::io::Write;
use std::path::PathBuf;

use crate::cli::{Import, TranscriptAgent};
use crate::error::{Error, Result};
use crate::import::claude::{self, Transcript};
use crate::import::tape::{self, ServerCalls};
use crate::import::{ImportError, find};
use crate::outcome::Outcome;
use crate::redact::Redactor;

impl Import {
    /// Reads the transcripts and writes one tape per session.
    pub fn run(self) -> Result<Outcome> {
        let agent = match self.agent {
            TranscriptAgent::ClaudeCode => claude::AGENT,
            TranscriptAgent::Codex => {
                return Err(Error::Usage(
                    "`mcptape import codex` is not in this build yet".into(),
                ));
            }
        };
        let env = |name: &str| std::env::var(name).ok();
        let paths = if self.paths.is_empty() {
            let places = find::claude_projects(&env)?;
            let dirs: Vec<PathBuf> = places.iter().filter(|d| d.is_dir()).cloned().collect();
            if dirs.is_empty() {
                let first = places.first().map(|d| d.display().to_string());
                crate::term::eprintln_escaped!(
                    "mcptape: no Claude Code sessions: `{}` does not exist",
                    first.unwrap_or_default()
                );
                return Ok(Outcome::Ok);
            }
            dirs
        } else {
            self.paths.clone()
        };
        let files = find::transcripts(&paths)?;
        // Everything is read first: a transcript that does not read changes nothing.
        let transcripts = files
            .iter()
            .map(|f| claude::read(f))
            .collect::<std::result::Result<Vec<Transcript>, ImportError>>()?;
        let transcripts = claude::merge(transcripts);
        let (redactor, warnings) = Redactor::for_recording(&env);
        for w in warnings {
            crate::term::eprintln_escaped!("mcptape: {w}");
        }
        let mut used: Vec<String> = Vec::new();
        let mut out = std::io::stdout().lock();
        let mut written = 0;
        for t in &transcripts {
            for w in &t.warnings {
                crate::term::eprintln_escaped!("mcptape: warning: {w}");
            }
            if t.session.calls.is_empty() {
                crate::term::eprintln_escaped!(
                    "mcptape: `{}`: no MCP calls ({} other tool uses): no tape written",
                    t.session.source.display(),
                    t.session.skipped_tools
                );
                continue;
            }
            let mut name = tape::name(agent, &t.session);
            // Two sessions of one run whose ids start alike: the second gets its whole id.
            if used.contains(&name) {
                name = format!("{agent}-{}", safe_id(&t.session.id));
            }
            used.push(name.clone());
            let path: PathBuf = crate::mode::session_path(&name)?;
            let done = tape::write(&t.session, agent, &path, &redactor)?;
            if let Some(prev) = &done.kept {
                crate::term::eprintln_escaped!(
                    "mcptape: the previous tape is kept as `{}`",
                    prev.display()
                );
            }
            let line = crate::term::line(&format!(
                "{name}  {}  {}",
                counts(&done.servers),
                done.path.display()
            ))
            .into_owned();
            writeln!(out, "{line}").map_err(Error::Stdout)?;
            written += 1;
            if let Some(note) = side_note(t) {
                crate::term::eprintln_escaped!("mcptape: {name}: {note}");
            }
        }
        out.flush().map_err(Error::Stdout)?;
        crate::term::eprintln_escaped!(
            "mcptape: {written} tape{} written from {} transcript{}",
            if written == 1 { "" } else { "s" },
            transcripts.len(),
            if transcripts.len() == 1 { "" } else { "s" }
        );
        Ok(Outcome::Ok)
    }
}

/// `6 calls: ex 4, every-thing 2 (1 unanswered, 1 incomplete)`.
fn counts(servers: &[ServerCalls]) -> String {
    let total: usize = servers.iter().map(|s| s.calls).sum();
    let per: Vec<String> = servers
        .iter()
        .map(|s| format!("{} {}", s.server, s.calls))
        .collect();
    let mut notes = Vec::new();
    let unanswered: usize = servers.iter().map(|s| s.unanswered).sum();
    let incomplete: usize = servers.iter().map(|s| s.incomplete).sum();
    if unanswered > 0 {
        notes.push(format!("{unanswered} unanswered"));
    }
    if incomplete > 0 {
        notes.push(format!("{incomplete} incomplete"));
    }
    let notes = if notes.is_empty() {
        String::new()
    } else {
        format!(" ({})", notes.join(", "))
    };
    format!(
        "{total} call{}: {}{notes}",
        if total == 1 { "" } else { "s" },
        per.join(", ")
    )
}

/// What else a session's reading found: its subagents, the calls refused before they
/// reached a server.
fn side_note(t: &Transcript) -> Option<String> {
    let mut parts = Vec::new();
    if !t.subagents.is_empty() {
        let n = t.subagents.len();
        parts.push(format!(
            "read with {n} subagent transcript{}",
            if n == 1 { "" } else { "s" }
        ));
    }
    if t.refused > 0 {
        let n = t.refused;
        parts.push(format!(
            "{n} refused call{} left out (never sent to a server)",
            if n == 1 { "" } else { "s" }
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// A whole session id as a session name may hold it.
fn safe_id(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
