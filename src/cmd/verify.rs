//! `mcptape verify SESSION -- SERVER_CMD...`: every recorded connection of a server,
//! replayed against a fresh live server ([`crate::verify`]), then reported as text,
//! JSON or JUnit, with a receipt beside the tape and, with `--update`, the tape re-blessed.
//!
//! Parts: this file checks the arguments, plays the connections and decides the exit
//! status; `report` writes the reports and the receipt; `coverage` says when nothing was
//! compared (and decides `--fail-on-skip`); `update` rewrites the tape.

mod coverage;
mod github;
mod progress;
pub(crate) mod report;
mod update;

use std::collections::{BTreeSet, HashSet};
use std::path::Path;
use std::time::SystemTime;

use crate::cli::{self, Format};
use crate::error::{Error, ProcessError, Result};
use crate::framing::MAX_LINE_BYTES;
use crate::matcher::{self, Glob};
use crate::mode::{self};
use crate::outcome::Outcome;
use crate::redact::Redactor;
use crate::tape::{Tape, store};
use crate::verify::{self, Played};

impl cli::Verify {
    /// Runs the verification; the outcome says how it went.
    pub fn run(self) -> Result<Outcome> {
        let globs = matcher::parse_globs(&self.ignore).map_err(Error::Usage)?;
        let path = mode::session_path(&self.session)?;
        // A tape that cannot be found or read is a usage error (exit 2), as for every
        // command; exit 3 is for a run that could not be completed.
        let tape = Tape::load_warning(&path)?;
        let server = choose_server(&tape, &path, self.server.as_ref())?;
        let progress = progress::verify_bar(&tape, &server);
        let opts = verify::Options {
            ignore: globs,
            allow_writes: self.allow_writes,
            timeout: self.timeout,
            max_line: MAX_LINE_BYTES,
            match_meta: self.match_meta,
            chains: verify::Chains::default(),
            progress,
            redactor: Redactor::from_env(&|name| std::env::var(name).ok()).0,
        };
        let read_only = verify::read_only_tools(&tape, &server);
        let target = self.target()?;
        let started = SystemTime::now();
        let found = play(&tape, &server, &target, &opts, &read_only)?;
        opts.progress.finish();
        warn_unused(&opts.ignore, &found.used);
        let command = self.shown_command(&opts.redactor);
        let (outcomes, problems, broken) = (&found.outcomes, &found.problems, found.broken);
        let paint = match &self.output {
            Some(_) => crate::style::Paint::of_file(),
            None => crate::style::Paint::of(crate::style::Stream::Stdout),
        };
        let coverage = coverage::Coverage::of(outcomes, recorded_requests(&tape, &server), broken);
        let ran = report::Ran {
            tape: &path,
            server: &server,
            command: &command,
            conns: &found.conns,
            coverage: &coverage,
        };
        let report = report::render(self.format, paint, &ran, outcomes, problems);
        self.write_report(&report, &path)?;
        if self.format != Format::Text && !problems.is_empty() {
            for p in problems {
                for line in p.to_string().lines() {
                    crate::term::eprintln_escaped!("mcptape: {line}");
                }
            }
        }
        if let Some(warning) = coverage.warning() {
            crate::term::eprintln_escaped!("mcptape: warning: {warning}");
        }
        report::write_receipt(&path, &server, &command, started, outcomes, broken)?;
        let differ = outcomes.iter().any(|o| o.class.is_difference())
            || (self.fail_on_skip && coverage.fails_on_skip());
        if self.update && !broken {
            let changed = update::update(&tape, outcomes)?;
            crate::term::eprintln_escaped!(
                "mcptape: --update: rewrote {changed} recorded answer{} in `{}` (previous tape kept as `{}`)",
                if changed == 1 { "" } else { "s" },
                path.display(),
                store::prev_path(&path).display()
            );
            return Ok(Outcome::Ok);
        }
        Ok(match (broken, differ) {
            (true, _) => Outcome::Unfinished,
            (false, true) => Outcome::Differences,
            (false, false) => Outcome::Ok,
        })
    }

    /// The live server: `--url` with its headers, or the command.
    fn target(&self) -> Result<verify::Target> {
        Ok(match &self.url {
            Some(url) => verify::Target::Url(url.clone(), self.headers.clone()),
            None => verify::Target::Command(self.command.clone()),
        })
    }

    /// The server's command or URL as the report and the receipt show it: redacted like a
    /// tape's `$transport/start`, as both may be shared, and a command line or URL may
    /// carry a credential.
    fn shown_command(&self, redactor: &Redactor) -> String {
        match &self.url {
            Some(url) => redactor.shown(url),
            None => redactor.shown_command(&self.command),
        }
    }

    /// Writes the report to `--output`, or to stdout.
    fn write_report(&self, report: &str, tape: &Path) -> Result<()> {
        // The same rules as a receipt: never through a link, never into a FIFO.
        super::write_output(
            self.output.as_deref(),
            report.as_bytes(),
            0o644,
            "the report",
            &[tape],
        )
    }
}

/// The server to verify: the one asked for, or the tape's only one.
fn choose_server(tape: &Tape, path: &Path, asked: Option<&String>) -> Result<String> {
    let servers: BTreeSet<String> = tape.connections().into_iter().map(|c| c.server).collect();
    if servers.is_empty() {
        let what = match tape.entries.len() {
            0 => "is empty".to_owned(),
            n => format!("holds {n} entries and no connection"),
        };
        return Err(Error::Usage(format!(
            "the tape `{}` {what}: there is nothing to verify",
            path.display()
        )));
    }
    match (asked, servers.len()) {
        (Some(s), _) if servers.contains(s) => Ok(s.clone()),
        (None, 1) => Ok(servers.iter().next().cloned().unwrap_or_default()),
        (asked, _) => {
            let list = servers.iter().cloned().collect::<Vec<_>>().join(", ");
            Err(Error::Usage(match asked {
                Some(s) => format!(
                    "the tape `{}` holds no connection of server `{s}`; it holds: {list}",
                    path.display()
                ),
                None => format!(
                    "the tape `{}` holds several servers ({list}): choose one with --server",
                    path.display()
                ),
            }))
        }
    }
}

/// What playing every connection of a server found.
struct Found {
    /// The connections played, in tape order.
    conns: Vec<String>,
    /// One per recorded request, in tape order: connection by connection, by tape line.
    outcomes: Vec<Played>,
    /// The connections' problems, each naming its connection, in tape order.
    problems: Vec<report::Problem>,
    /// Some connection could not be played whole.
    broken: bool,
    /// Which `--ignore` globs removed something, in their order.
    used: Vec<bool>,
}

/// Plays every recorded connection of `server`, one after the other, each against a fresh
/// live server.
fn play(
    tape: &Tape,
    server: &str,
    target: &verify::Target,
    opts: &verify::Options,
    read_only: &HashSet<String>,
) -> Result<Found> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ProcessError::Signals)?;
    let mut found = Found {
        conns: Vec::new(),
        outcomes: Vec::new(),
        problems: Vec::new(),
        broken: false,
        used: vec![false; opts.ignore.len()],
    };
    let conns: Vec<_> = tape
        .connections()
        .into_iter()
        .filter(|c| c.server == server)
        .collect();
    for (i, conn) in conns.iter().enumerate() {
        found.conns.push(conn.id.clone());
        opts.progress
            .message(&format!("(connection {} of {})", i + 1, conns.len()));
        let run = runtime.block_on(verify::run_connection(
            tape,
            conn,
            target,
            opts,
            read_only,
            &mut found.used,
        ))?;
        found.outcomes.extend(run.outcomes);
        found
            .problems
            .extend(run.problems.into_iter().map(|text| report::Problem {
                conn: conn.id.clone(),
                text,
            }));
        found.broken |= run.broken;
    }
    // A multi-round-trip call whose retry the tape does not hold is still reported.
    found.outcomes.extend(opts.chains.unfinished());
    // A multi-round-trip call is reported when its chain ends, and an unfinished one
    // last: put each back in its place, connection by connection, by tape line.
    let rank: std::collections::HashMap<&str, usize> = found
        .conns
        .iter()
        .enumerate()
        .map(|(i, c)| (c.as_str(), i))
        .collect();
    found.outcomes.sort_by_key(|o| {
        (
            rank.get(o.conn.as_str()).copied().unwrap_or(usize::MAX),
            o.line,
        )
    });
    runtime.shutdown_background();
    Ok(found)
}

/// How many requests past the handshake the tape records for `server`: what a run that
/// compared nothing is measured against.
fn recorded_requests(tape: &Tape, server: &str) -> usize {
    tape.connections()
        .iter()
        .filter(|c| c.server == server)
        .flat_map(|c| c.entries.iter().map(|&i| &tape.entries[i]))
        .filter(|e| {
            e.meta.dir == crate::tape::Direction::Send
                && e.message.kind() == crate::message::Kind::Request
                && e.message.method() != Some("initialize")
        })
        .count()
}

/// Warns about each `--ignore` glob that removed nothing from any answer.
fn warn_unused(ignore: &[Glob], used: &[bool]) {
    for (glob, hit) in ignore.iter().zip(used) {
        if !hit {
            crate::term::eprintln_escaped!(
                "mcptape: warning: --ignore `{}` matched nothing in any answer (a typo?)",
                glob.as_str()
            );
        }
    }
}

#[cfg(test)]
mod tests;
