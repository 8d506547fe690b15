//! `mcptape verify SESSION -- SERVER_CMD...`: every recorded connection of a server,
//! replayed against a fresh live server ([`crate::verify`]), then reported as text,
//! JSON or JUnit, with a receipt beside the tape and, with `--update`, the tape re-blessed.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::{Value, json};

use crate::cli::{self, Format};
use crate::error::{Error, ProcessError, Result, TapeError};
use crate::framing::MAX_LINE_BYTES;
use crate::matcher;
use crate::message;
use crate::mode::{self};
use crate::outcome;
use crate::process;
use crate::redact::Redactor;
use crate::tape::{Tape, format, safety, store};
use crate::verify::{self, Class, Outcome};

impl cli::Verify {
    /// Runs the verification; the outcome says how it went.
    pub fn run(self) -> Result<outcome::Outcome> {
        let globs = matcher::parse_globs(&self.ignore).map_err(Error::Usage)?;
        let path = mode::session_path(&self.session)?;
        let tape = match Tape::load_warning(&path) {
            Ok(t) => t,
            Err(e) => {
                outcome::print(&e);
                return Ok(outcome::Outcome::Unfinished);
            }
        };
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
        let server = match (&self.server, servers.len()) {
            (Some(s), _) if servers.contains(s) => s.clone(),
            (None, 1) => servers.iter().next().cloned().unwrap_or_default(),
            (asked, _) => {
                let list = servers.iter().cloned().collect::<Vec<_>>().join(", ");
                return Err(Error::Usage(match asked {
                    Some(s) => format!(
                        "the tape `{}` holds no connection of server `{s}`; it holds: {list}",
                        path.display()
                    ),
                    None => format!(
                        "the tape `{}` holds several servers ({list}): choose one with --server",
                        path.display()
                    ),
                }));
            }
        };
        let opts = verify::Options {
            ignore: globs,
            allow_writes: self.allow_writes,
            timeout: self.timeout,
            max_line: MAX_LINE_BYTES,
            match_meta: self.match_meta,
        };
        let read_only = verify::read_only_tools(&tape, &server);
        let target = match &self.url {
            Some(url) => verify::Target::Url(url.clone(), self.headers.clone()),
            None => verify::Target::Command(self.command.clone()),
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(ProcessError::Signals)?;
        let mut used = vec![false; opts.ignore.len()];
        let mut outcomes = Vec::new();
        let mut problems = Vec::new();
        let mut broken = false;
        let started = SystemTime::now();
        for conn in tape
            .connections()
            .into_iter()
            .filter(|c| c.server == server)
        {
            let run = runtime.block_on(verify::run_connection(
                &tape, &conn, &target, &opts, &read_only, &mut used,
            ))?;
            outcomes.extend(run.outcomes);
            problems.extend(
                run.problems
                    .into_iter()
                    .map(|p| format!("connection `{}`: {p}", conn.id)),
            );
            broken |= run.broken;
        }
        runtime.shutdown_background();
        for (glob, hit) in opts.ignore.iter().zip(&used) {
            if !hit {
                crate::term::eprintln_escaped!(
                    "mcptape: warning: --ignore `{}` matched nothing in any answer (a typo?)",
                    glob.as_str()
                );
            }
        }
        // Redacted like a tape's `$transport/start`: the report and the receipt may be
        // shared, and a command line or URL may carry a credential.
        let (redactor, _) = Redactor::from_env(&|name| std::env::var(name).ok());
        let command = match &self.url {
            Some(url) => redactor.message(&json!(url).to_string()).into_owned(),
            None => redactor
                .message(&json!(process::display(&redactor.argv(&self.command))).to_string())
                .into_owned(),
        };
        let command = serde_json::from_str::<String>(&command).unwrap_or(command);
        let report = match self.format {
            Format::Text => text_report(&path, &server, &command, &outcomes, &problems),
            Format::Json => outcomes
                .iter()
                .map(|o| format!("{}\n", crate::term::json_compact(o)))
                .collect(),
            Format::Junit => junit_report(&server, &outcomes, &problems),
        };
        match &self.output {
            // The same rules as a receipt: never through a link, never into a FIFO.
            Some(file) => match safety::write_file(file, report.as_bytes(), 0o644) {
                Ok(()) => {}
                Err(safety::OpenError::Refused(why)) => Err(TapeError::Refused {
                    path: file.clone(),
                    why,
                })?,
                Err(safety::OpenError::Io(source)) => Err(Error::Io {
                    what: format!("cannot write `{}`", file.display()),
                    source,
                })?,
            },
            None => std::io::stdout()
                .lock()
                .write_all(report.as_bytes())
                .map_err(Error::Stdout)?,
        }
        if self.format != Format::Text && !problems.is_empty() {
            for p in &problems {
                crate::term::eprintln_escaped!("mcptape: {p}");
            }
        }
        write_receipt(&path, &server, &command, started, &outcomes, broken)?;
        let differ = outcomes.iter().any(|o| o.class.is_difference());
        if self.update && !broken {
            let changed = update(&tape, &outcomes)?;
            crate::term::eprintln_escaped!(
                "mcptape: --update: rewrote {changed} recorded answer{} in `{}` (previous tape kept as `{}`)",
                if changed == 1 { "" } else { "s" },
                path.display(),
                store::prev_path(&path).display()
            );
            return Ok(outcome::Outcome::Ok);
        }
        Ok(match (broken, differ) {
            (true, _) => outcome::Outcome::Unfinished,
            (false, true) => outcome::Outcome::Differences,
            (false, false) => outcome::Outcome::Ok,
        })
    }
}

fn counts(outcomes: &[Outcome]) -> Vec<(Class, usize)> {
    [
        Class::Same,
        Class::Changed,
        Class::NewError,
        Class::GoneError,
        Class::Skipped,
        Class::NotPlayed,
    ]
    .into_iter()
    .map(|c| (c, outcomes.iter().filter(|o| o.class == c).count()))
    .collect()
}

fn show(v: &Option<Value>) -> String {
    match v {
        None => "(absent)".into(),
        Some(v) => {
            let s = v.to_string();
            if s.chars().count() > 200 {
                format!("{}…", s.chars().take(199).collect::<String>())
            } else {
                s
            }
        }
    }
}

/// The text report: one line each, every value escaped on its line
/// ([`crate::term::line`]), as a server's answer may hold anything.
fn text_report(
    tape: &Path,
    server: &str,
    command: &str,
    outcomes: &[Outcome],
    problems: &[String],
) -> String {
    let summary = counts(outcomes)
        .into_iter()
        .filter(|&(c, n)| n > 0 || matches!(c, Class::Same | Class::Changed))
        .map(|(c, n)| format!("{n} {}", c.as_str()))
        .collect::<Vec<_>>()
        .join(", ");
    let mut out = String::new();
    let mut put = |text: String| {
        out.push_str(&crate::term::line(&text));
        out.push('\n');
    };
    put(format!(
        "verify `{}` (server `{server}`) against `{command}`: {summary}",
        tape.display()
    ));
    for o in outcomes.iter().filter(|o| o.class != Class::Same) {
        put(format!(
            "{:<10} {} (tape line {})",
            o.class.as_str(),
            o.title(),
            o.line
        ));
        if let Some(r) = &o.reason {
            put(format!("           {r}"));
        }
        for d in &o.differences {
            put(format!(
                "           {}: {} → {}",
                if d.path.is_empty() {
                    "(whole answer)"
                } else {
                    &d.path
                },
                show(&d.old),
                show(&d.new)
            ));
        }
    }
    for p in problems {
        put(format!("problem    {p}"));
    }
    out
}

fn xml(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '&' => "&amp;".into(),
            '<' => "&lt;".into(),
            '>' => "&gt;".into(),
            '"' => "&quot;".into(),
            '\'' => "&apos;".into(),
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => " ".into(),
            // C1 and bidi controls: as character references, so that a terminal showing
            // the report does not obey them.
            c if crate::term::is_dangerous(c) => format!("&#x{:x};", u32::from(c)),
            c => c.to_string(),
        })
        .collect()
}

fn junit_report(server: &str, outcomes: &[Outcome], problems: &[String]) -> String {
    let failures = outcomes.iter().filter(|o| o.class.is_difference()).count();
    let errors = outcomes
        .iter()
        .filter(|o| o.class == Class::NotPlayed)
        .count();
    let skipped = outcomes
        .iter()
        .filter(|o| o.class == Class::Skipped)
        .count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"mcptape verify\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\">",
        outcomes.len()
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\">",
        xml(server),
        outcomes.len()
    );
    for o in outcomes {
        let name = xml(&format!("{} (tape line {})", o.title(), o.line));
        let _ = write!(
            out,
            "    <testcase classname=\"{}.{}\" name=\"{name}\"",
            xml(server),
            xml(&o.conn)
        );
        let details: String = o
            .differences
            .iter()
            .map(|d| format!("{}: {} → {}\n", d.path, show(&d.old), show(&d.new)))
            .chain(o.reason.iter().map(|r| format!("{r}\n")))
            .collect();
        match o.class {
            Class::Same => out.push_str("/>\n"),
            Class::Skipped => {
                let _ = writeln!(
                    out,
                    ">\n      <skipped message=\"{}\"/>\n    </testcase>",
                    xml(o.reason.as_deref().unwrap_or("skipped"))
                );
            }
            Class::NotPlayed => {
                let _ = writeln!(
                    out,
                    ">\n      <error message=\"not played\">{}</error>\n    </testcase>",
                    xml(&details)
                );
            }
            c => {
                let _ = writeln!(
                    out,
                    ">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>",
                    c.as_str(),
                    c.as_str(),
                    xml(&details)
                );
            }
        }
    }
    if !problems.is_empty() {
        let text: String = problems.iter().map(|p| format!("{p}\n")).collect();
        let _ = writeln!(out, "    <system-err>{}</system-err>", xml(&text));
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

/// `<session>.verify.json` beside the tape (0600, the command already redacted): what
/// ran, when, and the counts. A receipt
/// the rules of [`crate::tape::safety`] refuse (a symlink, a shared directory) is an
/// error; one the system cannot write (a read-only checkout) only a warning.
fn write_receipt(
    tape: &Path,
    server: &str,
    command: &str,
    started: SystemTime,
    outcomes: &[Outcome],
    broken: bool,
) -> Result<(), TapeError> {
    let name = tape
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".ndjson").unwrap_or(&name);
    let path: PathBuf = tape.with_file_name(format!("{stem}.verify.json"));
    let counts: serde_json::Map<String, Value> = counts(outcomes)
        .into_iter()
        .map(|(c, n)| (c.as_str().to_owned(), json!(n)))
        .collect();
    let receipt = json!({
        "tape": tape,
        "server": server,
        "command": command,
        "started": format::timestamp(started),
        "seconds": started.elapsed().map(|d| d.as_secs_f64()).unwrap_or(0.0),
        "complete": !broken,
        "counts": counts,
    });
    // 0600 like a tape: it names the server's command or URL.
    match safety::write_file(&path, format!("{receipt:#}\n").as_bytes(), 0o600) {
        Ok(()) => Ok(()),
        Err(safety::OpenError::Refused(why)) => Err(TapeError::Refused { path, why }),
        Err(safety::OpenError::Io(e)) => {
            crate::term::eprintln_escaped!(
                "mcptape: warning: cannot write the receipt `{}`: {e}",
                path.display()
            );
            Ok(())
        }
    }
}

/// Rewrites the recorded answers that differ with the live ones (redacted like any
/// recording), keeping each line's `_meta`; the previous tape becomes `.prev.ndjson`. The
/// lines are the bytes the tape was loaded from ([`Tape::original`]), numbered as its
/// entries are; a tape whose file changed since is left alone.
fn update(tape: &Tape, outcomes: &[Outcome]) -> Result<usize> {
    let path = tape.path.as_path();
    let (redactor, _) = Redactor::from_env(&|name| std::env::var(name).ok());
    let original = tape
        .original()
        .expect("a tape loaded from its file keeps its bytes");
    safety::check_replace(path)?;
    let now = std::fs::symlink_metadata(path)
        .map_err(|source| TapeError::Read {
            path: path.to_path_buf(),
            source,
        })?
        .len();
    let was = original.len() as u64;
    if now != was {
        return Err(TapeError::Changed {
            path: path.to_path_buf(),
            was,
            now,
        }
        .into());
    }
    let mut lines: Vec<Vec<u8>> = original
        .split_inclusive(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect();
    let mut changed = 0;
    for o in outcomes.iter().filter(|o| o.class.is_difference()) {
        let (Some(line_no), Some(live)) = (o.answer_line, &o.live) else {
            continue;
        };
        // The answer's line is an entry, so it is UTF-8.
        let Some(old) = lines
            .get(line_no - 1)
            .and_then(|l| std::str::from_utf8(l).ok())
        else {
            continue;
        };
        let body = old.trim_end_matches(['\n', '\r']);
        let Some(meta) = message::raw_member(body, &["_meta"]) else {
            continue;
        };
        let live = redactor.message(live);
        let head = live
            .trim_end()
            .strip_suffix('}')
            .unwrap_or(&live)
            .to_owned();
        lines[line_no - 1] = format!("{head},\"_meta\":{meta}}}\n").into_bytes();
        changed += 1;
    }
    store::keep_prev_copy(path, &original)?;
    store::replace_file(path, &lines.concat())?;
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_leaves_a_tape_that_changed_since_it_was_loaded() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.ndjson");
        let line = "{\"id\":1,\"result\":{},\"_meta\":{\"dir\":\"recv\",\"server\":\"s\"}}\n";
        std::fs::write(&path, line).expect("write");
        let tape = Tape::load(&path).expect("load");
        // Another writer appends after verify loaded the tape.
        std::fs::write(&path, format!("{line}{line}")).expect("append");
        let err = update(&tape, &[]).expect_err("changed");
        assert!(
            matches!(err, Error::Tape(TapeError::Changed { was, now, .. }) if now == 2 * was),
            "{err}"
        );
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            format!("{line}{line}")
        );
        assert!(!store::prev_path(&path).exists());
    }
}
