//! `mcptape record SESSION [--server NAME]... [-- CMD...]`: starts a fresh tape, then runs
//! CMD with `MCPTAPE_RECORD` set to its absolute path, so that every `mcptape proxy`
//! started anywhere under CMD appends its connection to it. When CMD could not be
//! found or run (a spawn error, or status 126/127) and nothing reached the fresh tape,
//! the previous tape is put back. Without CMD it only prints the
//! variables to export and touches no tape: nothing rotates, nothing is created; the
//! proxies started with them create the tape or append to it.
//!
//! CMD runs in our process group (a terminal's Ctrl-C reaches it directly); SIGTERM and
//! SIGHUP sent to us are passed on to it. Proxies that could not write their whole
//! recording leave a report in `MCPTAPE_REPORT`, which turns a clean exit into status 3.

use std::path::Path;

use crate::cli;
use crate::error::{Error, Result};
use crate::mode::{self, ENV_MAX_BYTES, ENV_RECORD, ENV_REPLAY, ENV_REPORT, ENV_SERVERS};
use crate::outcome::{self, Outcome};
use crate::process;
use crate::redact::ENV_NO_REDACT;
use crate::report::{self, ReportDir};
use crate::tape::{Census, store};

impl cli::Record {
    /// Records whatever CMD's proxies carry; returns CMD's exit status.
    pub fn run(self) -> Result<Outcome> {
        for name in &self.servers {
            mode::check_server_name(name)?;
        }
        let tape = mode::session_path(&self.session)?;
        let servers = self.servers.join(",");
        let faults = crate::fault::env_vars(&self.faults)?;
        let guard = crate::policy::gate::env_vars(&self.guard)?;
        let commit = crate::commit::settings::env_vars(&self.guard);
        if let Some(text) = &self.note {
            crate::tape::note::check(text)
                .map_err(|e| Error::Usage(format!("invalid --note: {e}")))?;
            if self.command.is_empty() {
                return Err(Error::Usage(
                    "--note needs CMD: without one no tape is touched; once the proxies have \
                     created it, add the note with `mcptape note SESSION TEXT`"
                        .into(),
                ));
            }
        }
        if self.command.is_empty() {
            // Only the variables: no tape is touched (proxies create it, or append to it).
            let mut exports = vec![
                (ENV_RECORD, Some(tape.to_string_lossy().into_owned())),
                (ENV_REPLAY, None),
                (ENV_SERVERS, (!servers.is_empty()).then(|| servers.clone())),
                (ENV_MAX_BYTES, Some(self.max_bytes.to_string())),
                (ENV_NO_REDACT, self.no_redact.then(|| "1".to_owned())),
                faults[0].clone(),
                faults[1].clone(),
            ];
            // Only the guard's and the commitments' flags given: one not given unsets
            // nothing (what the shell has is kept, as CMD's environment keeps it).
            exports.extend(guard.iter().filter(|(_, v)| v.is_some()).cloned());
            exports.extend(commit.iter().filter(|(_, v)| v.is_some()).cloned());
            super::print_exports(&exports);
            say_where_exports_record(&tape, &self.session);
            return Ok(Outcome::Ok);
        }
        // What can fail before CMD runs fails before the tape rotates.
        let mut report = ReportDir::new().map_err(|source| Error::Io {
            what: "cannot create a report directory".into(),
            source,
        })?;
        let own = mode::own()?;
        let mut fresh = store::start_fresh(&tape)?;
        if let Some(prev) = &fresh.kept {
            crate::term::eprintln_escaped!(
                "mcptape: the previous tape is kept as `{}`",
                prev.display()
            );
        }
        if let Some(text) = &self.note {
            let get = |name: &str| std::env::var(name).ok();
            let (redactor, _) = if self.no_redact {
                (crate::redact::Redactor::off(), Vec::new())
            } else {
                crate::redact::Redactor::for_recording(&get)
            };
            match crate::tape::note::append(&tape, text, &redactor) {
                Ok(bytes) => fresh.own_bytes = bytes,
                Err(e) => {
                    undo_fresh(&tape, &fresh);
                    return Err(e.into());
                }
            }
        }
        let mut cmd = tokio::process::Command::new(&self.command[0]);
        cmd.args(&self.command[1..])
            .env(ENV_RECORD, &tape)
            .env(ENV_REPORT, report.path())
            .env(ENV_MAX_BYTES, self.max_bytes.to_string())
            .env_remove(ENV_REPLAY);
        if self.no_redact {
            cmd.env(ENV_NO_REDACT, "1");
        }
        for (name, value) in &faults {
            match value {
                Some(v) => cmd.env(name, v),
                None => cmd.env_remove(name),
            };
        }
        // A guard flag not given leaves what CMD inherits: a policy exported around
        // `record` still gates (never a silent allow), an inherited `1` stays.
        for (name, value) in guard.iter().chain(&commit) {
            if let Some(v) = value {
                cmd.env(name, v);
            }
        }
        // Say once, here, what the proxies' redaction will be.
        let _ = own.recording(self.no_redact, &tape);
        if servers.is_empty() {
            cmd.env_remove(ENV_SERVERS);
        } else {
            cmd.env(ENV_SERVERS, &servers);
        }
        let status = match process::run_wrapped(cmd, &process::display(&self.command)) {
            Ok(status) => status,
            Err(e) => {
                // CMD never ran (not found, not executable): nothing of the old tape is lost.
                undo_fresh(&tape, &fresh);
                return Err(e.into());
            }
        };
        let proxies_done = report.wait_for_proxies();
        let problems = report::problems(report.path());
        summarize(&tape);
        // A command the shell could not find or run (126, 127) recorded nothing: undone
        // as if mcptape had not found it. Any other run keeps its fresh tape, empty or
        // not: a proxy started late (a launcher that exits before its client) still
        // belongs in it, never in the previous recording.
        let mistyped = matches!(process::exit_code(status), 126 | 127);
        if mistyped && proxies_done {
            undo_fresh(&tape, &fresh);
        } else {
            settle_fresh(&fresh);
        }
        for p in &problems {
            outcome::problem(p);
        }
        Ok(Outcome::of_status(status).recorded(problems.is_empty()))
    }
}

/// `record SESSION` without a command: one line on stderr saying that the exported
/// recording appends to the tape (as every proxy does), and how to start afresh when it
/// already holds something.
fn say_where_exports_record(tape: &Path, session: &str) {
    match std::fs::symlink_metadata(tape) {
        Ok(meta) if meta.len() > 0 => crate::term::eprintln_escaped!(
            "mcptape: proxies with these variables append to `{}` ({} bytes already there); to \
             start afresh, remove it first, or run `mcptape record {} -- CMD`, which keeps \
             the old tape as .prev",
            tape.display(),
            meta.len(),
            super::shell_words(&[session.to_owned()])
        ),
        _ => crate::term::eprintln_escaped!(
            "mcptape: the first proxy that records with these variables creates `{}`",
            tape.display()
        ),
    }
}

/// Lets the `.prev` the fresh tape's rotation replaced go, warning when it cannot.
fn settle_fresh(fresh: &store::Fresh) {
    if let Err(e) = store::settle_fresh(fresh) {
        crate::term::eprintln_escaped!("mcptape: warning: {}", crate::error::chain(&e));
    }
}

/// When nothing reached the fresh tape, puts the previous one back (or removes the empty
/// one), saying so on stderr: a mistyped command loses no recording.
fn undo_fresh(tape: &Path, fresh: &store::Fresh) {
    match store::undo_fresh(tape, fresh) {
        Ok(false) => {}
        Ok(true) => match fresh.kept {
            Some(_) => crate::term::eprintln_escaped!(
                "mcptape: nothing reached the fresh tape: the previous one is back at `{}`",
                tape.display()
            ),
            None => crate::term::eprintln_escaped!(
                "mcptape: nothing reached the tape: no empty `{}` is left behind",
                tape.display()
            ),
        },
        Err(e) => crate::term::eprintln_escaped!(
            "mcptape: warning: cannot undo the fresh tape: {}",
            crate::error::chain(&e)
        ),
    }
}

/// One line on stderr saying what the tape now holds, or that nothing reached it. The
/// tape is read in one streaming pass ([`Census`]): a recording may be larger than memory.
fn summarize(tape: &Path) {
    let census = match Census::scan_warning(tape) {
        Ok(c) => c,
        Err(e) => {
            crate::term::eprintln_escaped!(
                "mcptape: warning: cannot read back the tape: {}",
                crate::error::chain(&e)
            );
            return;
        }
    };
    let conns = census.conns.len();
    if conns == 0 {
        crate::term::eprintln_escaped!(
            "mcptape: warning: nothing was recorded into `{}`: no `mcptape proxy` ran under the \
             command (name `mcptape proxy --server NAME -- <server command>` in the client's \
             MCP server config)",
            tape.display()
        );
        return;
    }
    let servers: Vec<&str> = census.servers.iter().map(String::as_str).collect();
    crate::term::eprintln_escaped!(
        "mcptape: recorded {} messages in {conns} connection{} of {} into `{}`",
        census.messages,
        if conns == 1 { "" } else { "s" },
        servers.join(", "),
        tape.display()
    );
}
