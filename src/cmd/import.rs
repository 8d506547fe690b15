//! `mcptape import claude-code|codex [PATH]...`: an agent's past sessions as tapes.
//!
//! Every transcript is read before any tape is written, so a transcript that does not
//! read (a bad line, a file that is not one) fails the command with an error naming it
//! and changes nothing. Then each session with MCP calls becomes the tape
//! `<agent>-<session id prefix>` in the recordings directory ([`crate::import::tape`]),
//! a previous tape of that name kept as `.prev` (a tape that already holds the same
//! bytes is left alone and said `(unchanged)`), and one line on stdout says what it
//! holds: the tape's name, its calls per server, and its path. Sessions without MCP calls
//! are said on stderr and write nothing.

use std::io::Write;
use std::path::PathBuf;

use crate::cli::{Import, TranscriptAgent};
use crate::error::{Error, Result};
use crate::import::claude::Transcript;
use crate::import::tape::{self, ServerCalls};
use crate::import::{ImportedSession, claude, codex, codex_home, find};
use crate::outcome::Outcome;
use crate::redact::Redactor;

impl Import {
    /// Reads the transcripts and writes one tape per session.
    pub fn run(self) -> Result<Outcome> {
        let Some(files) = transcript_files(self.agent, &self.paths)? else {
            return Ok(Outcome::Ok);
        };
        // Everything is read first: a transcript that does not read changes nothing.
        let read = read_sessions(self.agent, &files, Err)?;
        write_tapes(self.agent, &read, &mut std::io::stdout().lock())?;
        Ok(Outcome::Ok)
    }
}

/// The name an agent's tapes and `_meta.source.imported` use.
pub(crate) fn agent_name(agent: TranscriptAgent) -> &'static str {
    match agent {
        TranscriptAgent::ClaudeCode => claude::AGENT,
        TranscriptAgent::Codex => codex::AGENT,
    }
}

/// A session read from a transcript, and what did not stop the reading (a torn last
/// line), one sentence each.
pub(crate) struct ReadSession {
    /// The session.
    pub session: ImportedSession,
    /// Warnings, said before its tape is written.
    pub warnings: Vec<String>,
    /// What else was read or left out (Claude Code's subagents, refused calls), said
    /// after its tape's line.
    pub note: Option<String>,
}

/// The variables that say where agents keep transcripts (`CODEX_HOME`,
/// `CLAUDE_CONFIG_DIR`, `HOME`), as the process has them.
fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The transcript files of `agent`: under `paths`, or where the agent keeps them. `None`
/// (said on stderr) when no such place exists.
pub(crate) fn transcript_files(
    agent: TranscriptAgent,
    paths: &[PathBuf],
) -> Result<Option<Vec<PathBuf>>> {
    if !paths.is_empty() {
        return Ok(Some(match agent {
            TranscriptAgent::ClaudeCode => find::transcripts(paths)?,
            TranscriptAgent::Codex => codex_home::rollouts_in(paths)?,
        }));
    }
    let (places, name) = match agent {
        TranscriptAgent::ClaudeCode => (find::claude_projects(&env)?, "Claude Code"),
        TranscriptAgent::Codex => (
            vec![codex_home::codex_home(&env)?.join("sessions")],
            "Codex",
        ),
    };
    let dirs: Vec<PathBuf> = places.iter().filter(|d| d.is_dir()).cloned().collect();
    if dirs.is_empty() {
        let first = places.first().map(|d| d.display().to_string());
        crate::term::eprintln_escaped!(
            "mcptape: no {name} sessions: `{}` does not exist",
            first.unwrap_or_default()
        );
        return Ok(None);
    }
    Ok(Some(match agent {
        TranscriptAgent::ClaudeCode => find::transcripts(&dirs)?,
        TranscriptAgent::Codex => codex_home::rollouts_in(&dirs)?,
    }))
}

/// Reads the transcript `files` of `agent` into sessions (Claude Code's older subagent
/// files joined to their session). A file that does not read goes to `failed`: `Err`
/// stops there (import), a function that says it and returns `Ok` goes on (scan).
pub(crate) fn read_sessions(
    agent: TranscriptAgent,
    files: &[PathBuf],
    mut failed: impl FnMut(Error) -> Result<()>,
) -> Result<Vec<ReadSession>> {
    let mut out = Vec::new();
    match agent {
        TranscriptAgent::Codex => {
            for file in files {
                match codex::read(file) {
                    Ok(r) => out.push(ReadSession {
                        session: r.session,
                        warnings: r.warnings,
                        note: None,
                    }),
                    Err(e) => failed(e.into())?,
                }
            }
        }
        TranscriptAgent::ClaudeCode => {
            let mut transcripts = Vec::new();
            for file in files {
                match claude::read(file) {
                    Ok(t) => transcripts.push(t),
                    Err(e) => failed(e.into())?,
                }
            }
            for t in claude::merge(transcripts) {
                let note = side_note(&t);
                out.push(ReadSession {
                    session: t.session,
                    warnings: t.warnings,
                    note,
                });
            }
        }
    }
    Ok(out)
}

/// Writes the tape of each session that made MCP calls (redacted as a recording), one
/// line on `out` each (stdout, or stderr where stdout is JSON); returns how many were
/// written.
pub(crate) fn write_tapes(
    agent: TranscriptAgent,
    sessions: &[ReadSession],
    out: &mut dyn Write,
) -> Result<usize> {
    let agent = agent_name(agent);
    let (redactor, warnings) = Redactor::for_recording(&env);
    for w in warnings {
        crate::term::eprintln_escaped!("mcptape: {w}");
    }
    let mut names = tape::Names::default();
    let mut written = 0;
    for t in sessions {
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
        // The same names, in the same order, as scan's `tape` (sessions with calls only).
        let name = names.next(agent, &t.session);
        let path: PathBuf = crate::mode::session_path(&name)?;
        let done = tape::write(&t.session, agent, &path, &redactor)?;
        if let Some(prev) = &done.kept {
            crate::term::eprintln_escaped!(
                "mcptape: the previous tape is kept as `{}`",
                prev.display()
            );
        }
        let line = crate::term::line(&format!(
            "{name}  {}  {}{}",
            counts(&done.servers),
            done.path.display(),
            if done.unchanged { "  (unchanged)" } else { "" }
        ))
        .into_owned();
        writeln!(out, "{line}").map_err(Error::Stdout)?;
        written += 1;
        if let Some(note) = &t.note {
            crate::term::eprintln_escaped!("mcptape: {name}: {note}");
        }
    }
    out.flush().map_err(Error::Stdout)?;
    crate::term::eprintln_escaped!(
        "mcptape: {written} tape{} written from {} transcript{}",
        if written == 1 { "" } else { "s" },
        sessions.len(),
        if sessions.len() == 1 { "" } else { "s" }
    );
    Ok(written)
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
