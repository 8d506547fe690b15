//! `mcptape import claude-code|codex [PATH]...`: an agent's past sessions as tapes.
//!
//! Every transcript is read before any tape is written, so a file that does not parse
//! changes nothing. Each session with MCP calls becomes the tape `<agent>-<id prefix>` in
//! the recordings directory (a previous one kept as `.prev`); a session without is said
//! and skipped.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::cli::{Import, TranscriptAgent};
use crate::error::{Error, Result};
use crate::import::{ImportedSession, claude, codex, codex_home, find, tape};
use crate::mode::{self, ENV_HOME};
use crate::outcome::Outcome;
use crate::redact::Redactor;
use crate::tape::store;

impl Import {
    /// Reads the transcripts and writes one tape per session.
    pub fn run(self) -> Result<Outcome> {
        let sessions = read_sessions(self.agent, &self.paths)?;
        let report = write_tapes(self.agent, &sessions)?;
        std::io::stdout()
            .lock()
            .write_all(report.as_bytes())
            .map_err(Error::Stdout)?;
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
    /// Warnings to say before going on.
    pub warnings: Vec<String>,
}

/// The variables that say where agents keep transcripts (`CODEX_HOME`,
/// `CLAUDE_CONFIG_DIR`, `HOME`): read as the process has them.
fn var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The transcript files of `agent`: under `paths`, or where the agent keeps them (none
/// when that place does not exist).
pub(crate) fn transcript_files(agent: TranscriptAgent, paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    match agent {
        TranscriptAgent::Codex if paths.is_empty() => Ok(codex_home::default_rollouts(&var)?),
        TranscriptAgent::Codex => Ok(codex_home::rollouts_in(paths)?),
        TranscriptAgent::ClaudeCode if paths.is_empty() => {
            let projects = find::claude_projects(&var)?;
            if !projects.is_dir() {
                return Ok(Vec::new());
            }
            Ok(find::transcripts(&[projects])?)
        }
        TranscriptAgent::ClaudeCode => Ok(find::transcripts(paths)?),
    }
}

/// Reads one transcript file of `agent`.
pub(crate) fn read_session(agent: TranscriptAgent, file: &Path) -> Result<ReadSession> {
    match agent {
        TranscriptAgent::Codex => {
            let read = codex::read(file)?;
            Ok(ReadSession {
                session: read.session,
                warnings: read.warnings,
            })
        }
        TranscriptAgent::ClaudeCode => {
            let read = claude::read(file)?;
            Ok(ReadSession {
                session: read.session,
                warnings: read.warnings,
            })
        }
    }
}

/// Every session of `agent` under `paths` (or where the agent keeps them), all read
/// before anything is written; their warnings said on stderr.
pub(crate) fn read_sessions(
    agent: TranscriptAgent,
    paths: &[PathBuf],
) -> Result<Vec<ImportedSession>> {
    let mut sessions = Vec::new();
    for file in transcript_files(agent, paths)? {
        let read = read_session(agent, &file)?;
        for w in &read.warnings {
            crate::term::eprintln_escaped!("mcptape: warning: {w}");
        }
        sessions.push(read.session);
    }
    Ok(sessions)
}

/// Writes the tape of each session that made MCP calls, redacted as a recording; returns
/// what was done, one line per session, for people.
pub(crate) fn write_tapes(agent: TranscriptAgent, sessions: &[ImportedSession]) -> Result<String> {
    let own = mode::own()?;
    let home = store::home(own.get(ENV_HOME))?;
    let (redactor, warnings) = Redactor::for_recording(&|name| own.get(name).map(str::to_owned));
    for w in warnings {
        crate::term::eprintln_escaped!("mcptape: warning: {w}");
    }
    let name = agent_name(agent);
    let cwd = std::env::current_dir().map_err(|source| Error::Io {
        what: "cannot read the current directory".into(),
        source,
    })?;
    let mut out = String::new();
    if sessions.is_empty() {
        out.push_str(&format!("no {name} sessions found\n"));
    }
    for session in sessions {
        let shown = crate::term::line(&session.source.to_string_lossy()).into_owned();
        if session.calls.is_empty() {
            out.push_str(&format!(
                "{shown}: no MCP calls ({} other tool calls); no tape written\n",
                session.skipped_tools
            ));
            continue;
        }
        let path = store::resolve(&tape::name(name, session), &home, &cwd)?;
        let written = tape::write(session, name, &path, &redactor)?;
        let per_server: Vec<String> = written
            .servers
            .iter()
            .map(|s| format!("{} {}", s.server, s.calls))
            .collect();
        out.push_str(&crate::term::line(&format!(
            "{shown}: {} MCP calls ({}), {} other tool calls skipped → {}",
            session.calls.len(),
            per_server.join(", "),
            session.skipped_tools,
            written.path.display()
        )));
        out.push('\n');
        if let Some(kept) = &written.kept {
            out.push_str(&crate::term::line(&format!(
                "  the previous tape was kept as {}",
                kept.display()
            )));
            out.push('\n');
        }
    }
    Ok(out)
}
