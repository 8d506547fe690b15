//! `mcptape scan [--agent A]... [--import] [--json]`: the sessions agents kept, with their
//! MCP calls per server and how many of those were read-only, by the `readOnlyHint`s of
//! the tools the recordings list ([`crate::import::hints`]).
//!
//! Every transcript found is listed; one that cannot be read is said (on stderr, naming
//! it) and the scan ends with exit status 2 after listing the rest. `--import` writes the
//! tapes of the sessions with MCP calls as `mcptape import` does, and only when every
//! transcript was read: a bad file changes nothing.

use std::io::Write;

use crate::cli::{Scan, TranscriptAgent};
use crate::error::{Error, Result};
use crate::import::hints::ReadOnlyHints;
use crate::import::summary::Summary;
use crate::mode::{self, ENV_HOME};
use crate::outcome::Outcome;
use crate::table::{Align, Table};
use crate::tape::store;

use super::import::{ReadSession, agent_name, read_sessions, transcript_files, write_tapes};

impl Scan {
    /// Lists the sessions found (and imports them with `--import`).
    pub fn run(self) -> Result<Outcome> {
        let agents = if self.agents.is_empty() {
            vec![TranscriptAgent::ClaudeCode, TranscriptAgent::Codex]
        } else {
            let mut agents = self.agents.clone();
            agents.sort();
            agents.dedup();
            agents
        };
        let home = store::home(mode::own()?.get(ENV_HOME))?;
        let hints = ReadOnlyHints::from_recordings(&home);
        for (path, why) in &hints.unreadable {
            crate::term::eprintln_escaped!(
                "mcptape: warning: read-only hints: cannot read `{}`: {why}",
                path.display()
            );
        }
        let mut found: Vec<(TranscriptAgent, Vec<ReadSession>)> = Vec::new();
        let mut bad = 0usize;
        for agent in agents {
            let files = transcript_files(agent, &[])?.unwrap_or_default();
            let mut sessions = read_sessions(agent, &files, |e| {
                bad += 1;
                crate::outcome::print(&e);
                Ok(())
            })?;
            // Said once, here; not again if the session is imported.
            for read in &mut sessions {
                for w in std::mem::take(&mut read.warnings) {
                    crate::term::eprintln_escaped!("mcptape: warning: {w}");
                }
            }
            sessions.sort_by(|a, b| a.session.started.cmp(&b.session.started));
            found.push((agent, sessions));
        }
        let hints = &hints;
        let summaries: Vec<Summary> = found
            .iter()
            .flat_map(|(agent, sessions)| {
                let agent = agent_name(*agent);
                // Named as `write_tapes` names them: same function, same order.
                let mut names = crate::import::tape::Names::default();
                sessions.iter().map(move |r| {
                    let s = &r.session;
                    let tape = (!s.calls.is_empty()).then(|| names.next(agent, s));
                    Summary::of(agent, s, tape, hints)
                })
            })
            .collect();
        let text = if self.json {
            let rows: Vec<_> = summaries.iter().map(Summary::to_json).collect();
            format!("{}\n", crate::term::json_pretty(&rows))
        } else {
            table(&summaries)
        };
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(text.as_bytes()).map_err(Error::Stdout)?;
        if self.import && bad == 0 {
            for (agent, sessions) in &found {
                if self.json {
                    write_tapes(*agent, sessions, &mut std::io::stderr().lock())?;
                } else {
                    write_tapes(*agent, sessions, &mut stdout)?;
                }
            }
        }
        if bad > 0 {
            let nothing = if self.import {
                "; nothing was imported"
            } else {
                ""
            };
            return Err(Error::Usage(format!(
                "{bad} transcript{} could not be read{nothing}",
                if bad == 1 { "" } else { "s" }
            )));
        }
        Ok(Outcome::Ok)
    }
}

/// The sessions as a table: `AGENT SESSION DATE CWD MCP READ-ONLY SERVERS`, and a line
/// saying where the read-only counts come from.
fn table(summaries: &[Summary]) -> String {
    if summaries.is_empty() {
        return "no sessions found\n".into();
    }
    let mut t = Table::new(&[
        ("AGENT", Align::Left),
        ("SESSION", Align::Left),
        ("DATE", Align::Left),
        ("CWD", Align::Left),
        ("MCP", Align::Right),
        ("READ-ONLY", Align::Left),
        ("SERVERS", Align::Left),
    ]);
    for s in summaries {
        let date = s
            .started
            .as_deref()
            .and_then(|t| humantime::parse_rfc3339_weak(t).ok())
            .map(|t| {
                let text = humantime::format_rfc3339_seconds(t).to_string();
                text.get(..16).unwrap_or(&text).replace('T', " ")
            })
            .unwrap_or_else(|| "-".into());
        let short: String = s.id.chars().take(8).collect();
        t.row(&[
            s.agent.to_owned(),
            short,
            date,
            s.cwd.clone().unwrap_or_else(|| "-".into()),
            s.calls().to_string(),
            s.read_only_cell(),
            s.servers_cell(),
        ]);
    }
    let mut out = t.render("");
    if summaries
        .iter()
        .any(|s| s.read_only_cell().contains("unknown"))
    {
        out.push_str(
            "read-only: by the tools' readOnlyHint in the recorded tools/list of each server; \
             unknown where no tape in the recordings lists the tool (record a session of that server to know)\n",
        );
    }
    out
}
