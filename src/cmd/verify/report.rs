//! The reports of a verify run: text for people, JSON lines, JUnit XML, and the receipt
//! beside the tape. Every value a server or a tape supplied is escaped where it lands.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::{Value, json};

use crate::cli::Format;
use crate::error::TapeError;
use crate::style::{Paint, Role};
use crate::tape::{format, safety};
use crate::verify::{Class, Played};

/// What a run was: the tape, the server, the live command, and the connections played
/// (in tape order).
pub(super) struct Ran<'a> {
    /// The tape.
    pub tape: &'a Path,
    /// The recorded server verified.
    pub server: &'a str,
    /// The live server's command or URL, redacted.
    pub command: &'a str,
    /// The ids of the connections played, in tape order.
    pub conns: &'a [String],
    /// What was compared: each report says so when it is nothing.
    pub coverage: &'a super::coverage::Coverage,
}

/// What kept a connection's run from being complete. Its text may span lines (a server's
/// last stderr lines); each is escaped where it is printed.
#[derive(Debug, Clone)]
pub(super) struct Problem {
    /// The connection.
    pub conn: String,
    /// What went wrong.
    pub text: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "connection `{}`: {}", self.conn, self.text)
    }
}

/// The report in `format`: what `--output` or stdout receives (only text is painted).
pub(super) fn render(
    format: Format,
    paint: Paint,
    ran: &Ran<'_>,
    outcomes: &[Played],
    problems: &[Problem],
) -> String {
    match format {
        Format::Text => text_report(paint, ran, outcomes, problems),
        Format::Github => super::github::report(ran, outcomes, problems),
        Format::Json => {
            let mut out: String = outcomes
                .iter()
                .map(|o| format!("{}\n", crate::term::json_compact(o)))
                .collect();
            if let Some(line) = ran.coverage.json_line() {
                out.push_str(&line);
                out.push('\n');
            }
            out
        }
        Format::Junit => junit_report(ran.server, outcomes, problems),
    }
}

/// How many calls of each class.
pub(super) fn counts(outcomes: &[Played]) -> Vec<(Class, usize)> {
    [
        Class::Same,
        Class::Changed,
        Class::NewError,
        Class::GoneError,
        Class::Skipped,
        Class::NotPlayed,
        Class::Cancelled,
    ]
    .into_iter()
    .map(|c| (c, outcomes.iter().filter(|o| o.class == c).count()))
    .collect()
}

/// A difference's JSON path as the reports show it; the empty path is the whole answer.
pub(super) fn path_of(d: &crate::matcher::Difference) -> &str {
    if d.path.is_empty() {
        "(whole answer)"
    } else {
        &d.path
    }
}

/// A value as the reports show it: `(absent)`, or its JSON cut at 200 characters.
pub(super) fn show(v: &Option<Value>) -> String {
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

/// The colour of a class in the text report.
fn role(class: Class) -> Role {
    match class {
        Class::Same => Role::Pass,
        Class::Changed | Class::NewError | Class::GoneError | Class::NotPlayed => Role::Fail,
        Class::Skipped | Class::Cancelled => Role::Warn,
    }
}

/// The text report: the summary, then connection by connection in tape order its calls
/// that were not the same (by tape line) and its problems; one line each, every value
/// escaped on its line ([`crate::term::line`]), as a server's answer may hold anything,
/// before the words of its class are painted.
fn text_report(paint: Paint, ran: &Ran<'_>, outcomes: &[Played], problems: &[Problem]) -> String {
    let (tape, server, command) = (ran.tape, ran.server, ran.command);
    let summary = counts(outcomes)
        .into_iter()
        .filter(|&(c, n)| n > 0 || matches!(c, Class::Same | Class::Changed))
        .map(|(c, n)| {
            let text = format!("{n} {}", c.as_str());
            paint.paint(if n == 0 { Role::Dim } else { role(c) }, &text)
        })
        .collect::<Vec<_>>()
        .join(", ");
    let mut out = crate::term::line(&format!(
        "verify `{}` (server `{server}`) against `{command}`: ",
        tape.display()
    ))
    .into_owned();
    out.push_str(&summary);
    if let Some(warning) = ran.coverage.warning() {
        out.push_str(&crate::term::line(&format!("; WARNING: {warning}")));
    }
    out.push('\n');
    // Connection by connection; anything of a connection not listed comes last.
    let listed = |conn: &str| ran.conns.iter().any(|c| c == conn);
    let groups = ran
        .conns
        .iter()
        .map(|c| Some(c.as_str()))
        .chain(std::iter::once(None));
    for group in groups {
        let mine = |conn: &str| match group {
            Some(g) => conn == g,
            None => !listed(conn),
        };
        for o in outcomes
            .iter()
            .filter(|o| o.class != Class::Same && mine(&o.conn))
        {
            call_lines(&mut out, paint, o);
        }
        for p in problems.iter().filter(|p| mine(&p.conn)) {
            for (i, text) in p.to_string().lines().enumerate() {
                match i {
                    0 => put(
                        &mut out,
                        &paint.paint(Role::Fail, "problem"),
                        &format!("    {text}"),
                    ),
                    _ => put(&mut out, "", &format!("           {text}")),
                }
            }
        }
    }
    out
}

/// The lines of one call that was not the same: its class and title, why, and each
/// difference (the old value painted as removed, the new one as added).
fn call_lines(out: &mut String, paint: Paint, o: &Played) {
    use crate::term::line;
    let word = o.class.as_str();
    let pad = " ".repeat(10usize.saturating_sub(word.len()));
    let lead = format!("{}{pad} ", paint.paint(role(o.class), word));
    put(out, &lead, &format!("{} (tape line {})", o.title(), o.line));
    if let Some(r) = &o.reason {
        put(out, "", &format!("           {r}"));
    }
    for d in &o.differences {
        out.push_str(&format!(
            "           {}: {} → {}\n",
            line(path_of(d)),
            paint.paint(Role::Removed, &line(&show(&d.old))),
            paint.paint(Role::Added, &line(&show(&d.new)))
        ));
    }
}

/// Appends one line of the text report: its lead (our own words, maybe painted), then
/// `text` escaped on its line, as a server's answer may hold anything.
fn put(out: &mut String, lead: &str, text: &str) {
    out.push_str(lead);
    out.push_str(&crate::term::line(text));
    out.push('\n');
}

/// Text escaped for XML attributes and content (JUnit reports of verify, diff and check);
/// C1 and bidi controls as character references.
pub(crate) fn xml(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '&' => "&amp;".into(),
            '<' => "&lt;".into(),
            '>' => "&gt;".into(),
            '"' => "&quot;".into(),
            '\'' => "&apos;".into(),
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => " ".into(),
            // Not XML 1.0 characters at all, not even as references.
            '\u{fffe}' | '\u{ffff}' => "\u{fffd}".into(),
            // C1 and bidi controls: as character references, so that a terminal showing
            // the report does not obey them.
            c if crate::term::is_dangerous(c) => format!("&#x{:x};", u32::from(c)),
            c => c.to_string(),
        })
        .collect()
}

fn junit_report(server: &str, outcomes: &[Played], problems: &[Problem]) -> String {
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
            Class::Skipped | Class::Cancelled => {
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
pub(super) fn write_receipt(
    tape: &Path,
    server: &str,
    command: &str,
    started: SystemTime,
    outcomes: &[Played],
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
        "kind": "verify",
        "tape": tape,
        "server": server,
        "command": command,
        "started": format::timestamp(started),
        "seconds": started.elapsed().map(|d| d.as_secs_f64()).unwrap_or(0.0),
        "complete": !broken,
        "counts": counts,
        "calls": outcomes,
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

#[cfg(test)]
mod xml_tests {
    #[test]
    fn what_xml_cannot_hold_is_replaced_and_markup_escaped() {
        assert_eq!(
            super::xml("a\u{fffe}b\u{ffff}<&\u{1}"),
            "a\u{fffd}b\u{fffd}&lt;&amp; "
        );
    }
}
