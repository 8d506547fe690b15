//! `mcptape replay SESSION [--server NAME]... [-- CMD...]`: runs CMD with
//! `MCPTAPE_REPLAY` set, so that every `mcptape proxy` under it answers from the tape
//! with no server running, then reads every proxy's verdict and decides.
//!
//! Exit status: 3 when any connection diverged, had leftovers, or a recorded connection
//! of a replayed server was never used; otherwise CMD's own status. An imported
//! connection (`_meta.source`) is an agent's log rather than a script: its calls never
//! sent and the connection never used are notes, not failures.
//!
//! The verdicts are also left beside the tape as `<session>.replay.json` (`receipt.rs`),
//! for `view --verify` and `check`.

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

use crate::cli;

use crate::error::{Error, Result};
use crate::github::{Annotation, Level};
use crate::matcher::Glob;
use crate::mode::{
    self, ENV_FAIL_ON_UNUSED, ENV_IGNORE, ENV_MATCH, ENV_MATCH_META, ENV_MODE, ENV_PACE,
    ENV_RECORD, ENV_REPLAY, ENV_REPORT, ENV_SERVERS, ENV_SKIP_UNANSWERED, ENV_STRICT_INITIALIZE,
    ENV_UNORDERED,
};
use crate::outcome::Outcome;
use crate::process;
use crate::report::ReportDir;
use crate::style::{Paint, Role, Stream};
use crate::tape::Census;
use crate::verdict::Verdict;

mod receipt;
mod record_modes;

impl cli::Replay {
    /// Replays the tape to whatever CMD starts; comes to CMD's status unless a
    /// connection diverged or was never used.
    pub fn run(self) -> Result<Outcome> {
        self.check()?;
        let path = mode::session_path(&self.session)?;
        if let record_modes::Plan::Record(record) = self.plan(&path)? {
            return record.run();
        }
        // Only the list of recorded connections is needed here, not their messages.
        let tape = Census::scan_warning(&path)?;
        let held = &tape.servers;
        if let Some(missing) = self.servers.iter().find(|s| !held.contains(s.as_str())) {
            let held: Vec<&str> = held.iter().map(String::as_str).collect();
            return Err(Error::Usage(format!(
                "the tape `{}` holds no connection of server `{missing}`; it holds: {}",
                path.display(),
                held.join(", ")
            )));
        }
        let servers = self.servers.join(",");
        let flag = |on: bool| on.then(|| "1".to_owned());
        let [fault, faults] = crate::fault::env_vars(&self.faults)?;
        let vars = [
            fault,
            faults,
            (ENV_REPLAY, Some(path.to_string_lossy().into_owned())),
            (ENV_RECORD, None),
            (ENV_SERVERS, (!servers.is_empty()).then(|| servers.clone())),
            (
                ENV_IGNORE,
                (!self.matching.ignore.is_empty()).then(|| self.matching.ignore.join(",")),
            ),
            (ENV_STRICT_INITIALIZE, flag(self.matching.strict_initialize)),
            (ENV_UNORDERED, flag(self.matching.unordered)),
            (
                ENV_MATCH,
                self.matching
                    .match_mode
                    // `new` implies `any` (its added connections need it next time).
                    .or((self.record_mode == cli::RecordMode::New).then_some(cli::MatchMode::Any))
                    .and_then(|m| clap::ValueEnum::to_possible_value(&m))
                    .map(|v| v.get_name().to_owned()),
            ),
            (ENV_FAIL_ON_UNUSED, flag(self.matching.fail_on_unused)),
            (
                ENV_MODE,
                (self.record_mode == cli::RecordMode::New).then(|| "new".to_owned()),
            ),
            (ENV_PACE, flag(self.matching.pace)),
            (ENV_MATCH_META, flag(self.matching.match_meta)),
            (
                ENV_SKIP_UNANSWERED,
                flag(self.matching.skip_unanswered_requests),
            ),
        ];
        if self.command.is_empty() {
            super::print_exports(&vars);
            return Ok(Outcome::Ok);
        }
        let mut report = ReportDir::new().map_err(|source| Error::Io {
            what: "cannot create a report directory".into(),
            source,
        })?;
        let mut cmd = tokio::process::Command::new(&self.command[0]);
        cmd.args(&self.command[1..]).env(ENV_REPORT, report.path());
        for (name, value) in &vars {
            match value {
                Some(v) => cmd.env(name, v),
                None => cmd.env_remove(name),
            };
        }
        let status = process::run_wrapped(cmd, &process::display(&self.command))?;
        report.wait_for_proxies();
        let verdicts = Verdict::collect(report.path());
        receipt::write(&path, &verdicts);
        // `new` replays with `--match any` (it refuses the other modes).
        let any = self.matching.match_mode == Some(cli::MatchMode::Any)
            || self.record_mode == cli::RecordMode::New;
        let judged = judge(
            &verdicts,
            &tape,
            &self.servers,
            any && !self.matching.fail_on_unused,
        );
        if self.format == cli::ReplayFormat::Github {
            annotate(&path, &judged).map_err(Error::Stdout)?;
        }
        Ok(Outcome::of_status(status).replayed(judged.failed.is_empty()))
    }

    /// The flags that the proxies below will read from the environment, checked here.
    fn check(&self) -> Result<()> {
        for name in &self.servers {
            mode::check_server_name(name)?;
        }
        for g in &self.matching.ignore {
            Glob::parse(g).map_err(Error::Usage)?;
            if g.contains(',') {
                return Err(Error::Usage(format!(
                    "invalid --ignore `{g}`: a path has no `,`"
                )));
            }
        }
        Ok(())
    }
}

/// A connection that did not replay as recorded, for `--format github`.
struct Failure {
    /// The verdict's word (`DIVERGED`, …, `UNUSED`).
    label: &'static str,
    /// The tape line it points at.
    line: Option<usize>,
    /// What happened (escaped; may span lines).
    message: String,
}

/// What [`judge`] found.
struct Judged {
    /// Every connection that did not replay as recorded, in the order printed.
    failed: Vec<Failure>,
    /// How many verdicts passed.
    passed: usize,
}

/// Prints every proxy's verdict and every recorded connection of a replayed server
/// (`servers`, or all when empty) that no proxy used; lists those that did not replay
/// as recorded. With `unused_ok` (`--match any` without `--fail-on-unused`) a connection
/// no client used is listed, not failed.
fn judge(verdicts: &[Verdict], tape: &Census, servers: &[String], unused_ok: bool) -> Judged {
    let paint = Paint::of(Stream::Stderr);
    let mut judged = Judged {
        failed: Vec::new(),
        passed: 0,
    };
    for v in verdicts {
        crate::style::eprint(&format!("mcptape: {}", v.render(paint)));
        if v.ok() {
            judged.passed += 1;
            continue;
        }
        // The whole account, its word left to the title.
        let text = v.describe();
        judged.failed.push(Failure {
            label: v.label(),
            line: v.line(),
            message: text.trim_start_matches(v.label()).trim().to_owned(),
        });
    }
    let used: HashSet<(&str, &str)> = verdicts
        .iter()
        .filter_map(|v| Some((v.server.as_str(), v.conn.as_deref()?)))
        .chain(
            verdicts
                .iter()
                .flat_map(|v| v.also.iter().map(|c| (v.server.as_str(), c.as_str()))),
        )
        .collect();
    for conn in &tape.conns {
        let replayed = servers.is_empty() || servers.contains(&conn.server);
        if replayed && !used.contains(&(conn.server.as_str(), conn.id.as_str())) {
            let first = conn.first_line;
            if conn.imported {
                // An imported connection is an agent's log, not a script a client is
                // bound to follow: one no client asked for is a note, not a failure.
                let text = crate::term::line(&format!(
                    "server `{}` connection `{}` (from tape line {first}) is imported and no client connected for it",
                    conn.server, conn.id
                ))
                .into_owned();
                crate::style::eprint(&format!("mcptape: note     {text}\n"));
                continue;
            }
            let text = crate::term::line(&format!(
                "server `{}` connection `{}` (from tape line {first}) was never replayed: no client connected for it",
                conn.server, conn.id
            ))
            .into_owned();
            if unused_ok {
                crate::style::eprint(&format!("mcptape: unused   {text}\n"));
                continue;
            }
            crate::style::eprint(&format!(
                "mcptape: {}   {text}\n",
                paint.paint(Role::Warn, "UNUSED")
            ));
            judged.failed.push(Failure {
                label: "UNUSED",
                line: Some(first),
                message: text,
            });
        }
    }
    if verdicts.is_empty() {
        crate::term::eprintln_escaped!(
            "mcptape: warning: no `mcptape proxy` replayed under the command (name `mcptape proxy --server NAME -- <server command>` in the client's MCP server config)"
        );
    }
    judged
}

/// `--format github`: one `::error` per connection that did not replay as recorded, at
/// the tape line its verdict names, and a `::notice` when all did; on stdout, which CMD
/// no longer writes to (it has exited and its proxies have reported).
fn annotate(tape: &Path, judged: &Judged) -> std::io::Result<()> {
    let mut notes: Vec<Annotation> = judged
        .failed
        .iter()
        .map(|f| {
            Annotation::new(Level::Error, &f.message)
                .at(tape, f.line)
                .titled(format!("mcptape replay: {}", f.label))
        })
        .collect();
    if notes.is_empty() {
        let n = judged.passed;
        notes.push(
            Annotation::new(
                Level::Notice,
                format!(
                    "{n} connection{} replayed as recorded",
                    if n == 1 { "" } else { "s" }
                ),
            )
            .at(tape, None)
            .titled("mcptape replay"),
        );
    }
    let mut out = std::io::stdout().lock();
    out.write_all(crate::github::lines(&notes).as_bytes())?;
    out.flush()
}
