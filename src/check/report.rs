//! A check's verdicts as a report: text for people (one line per rule, the first few
//! offending lines under it), one JSON document, JUnit XML (a testcase per rule), or
//! GitHub workflow commands (an `::error` per finding of a failed rule, at its tape
//! line, and a `::notice` summary). Text from the tape is escaped where it lands.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::json;

use super::Verdict;
use crate::cli::ReportFormat;
use crate::cmd::verify::report::xml;
use crate::github::{Annotation, Level};

/// How many findings of a rule the text report lists.
pub const TEXT_FINDINGS: usize = 5;

/// The report in `format`.
pub fn render(format: ReportFormat, tape: &Path, verdicts: &[Verdict]) -> String {
    match format {
        ReportFormat::Text => text(tape, verdicts),
        ReportFormat::Json => format!("{}\n", crate::term::json_pretty(&document(tape, verdicts))),
        ReportFormat::Junit => junit(tape, verdicts),
        ReportFormat::Github => github(tape, verdicts),
    }
}

fn failed(verdicts: &[Verdict]) -> usize {
    verdicts.iter().filter(|v| !v.pass).count()
}

/// `check `t.ndjson`: 4 rules, 3 passed, 1 failed`.
fn summary(tape: &Path, verdicts: &[Verdict]) -> String {
    let failed = failed(verdicts);
    format!(
        "check `{}`: {} rule(s), {} passed, {failed} failed",
        tape.display(),
        verdicts.len(),
        verdicts.len() - failed
    )
}

fn text(tape: &Path, verdicts: &[Verdict]) -> String {
    let mut out = String::new();
    for v in verdicts {
        let word = if v.pass { "PASS" } else { "FAIL" };
        let line = format!("{word}  {}: {}", v.title(), v.summary);
        out.push_str(&crate::term::line(&line));
        out.push('\n');
        for f in v.findings.iter().take(TEXT_FINDINGS) {
            let at = f.line.map(|l| format!("line {l}: ")).unwrap_or_default();
            out.push_str(&crate::term::line(&format!("      {at}{}", f.message)));
            out.push('\n');
        }
        if v.findings.len() > TEXT_FINDINGS {
            let _ = writeln!(out, "      … and {} more", v.findings.len() - TEXT_FINDINGS);
        }
    }
    out.push_str(&crate::term::line(&summary(tape, verdicts)));
    out.push('\n');
    out
}

/// The JSON document: the tape, every rule with its findings, the summary.
pub fn document(tape: &Path, verdicts: &[Verdict]) -> serde_json::Value {
    let failed = failed(verdicts);
    json!({
        "tape": tape,
        "pass": failed == 0,
        "rules": verdicts,
        "summary": {"rules": verdicts.len(), "passed": verdicts.len() - failed, "failed": failed},
    })
}

fn junit(tape: &Path, verdicts: &[Verdict]) -> String {
    let failed = failed(verdicts);
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let suite = xml(&tape.display().to_string());
    let _ = writeln!(
        out,
        "<testsuites name=\"mcptape check\" tests=\"{}\" failures=\"{failed}\">",
        verdicts.len()
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"{suite}\" tests=\"{}\" failures=\"{failed}\">",
        verdicts.len()
    );
    for v in verdicts {
        let _ = write!(
            out,
            "    <testcase classname=\"mcptape.check\" name=\"{}\"",
            xml(&v.title())
        );
        if v.pass {
            out.push_str("/>\n");
            continue;
        }
        let details: String = v
            .findings
            .iter()
            .map(|f| match f.line {
                Some(l) => format!("line {l}: {}\n", f.message),
                None => format!("{}\n", f.message),
            })
            .collect();
        let _ = writeln!(
            out,
            ">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>",
            xml(&v.summary),
            v.rule,
            xml(&details)
        );
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

fn github(tape: &Path, verdicts: &[Verdict]) -> String {
    let mut notes: Vec<Annotation> = Vec::new();
    for v in verdicts.iter().filter(|v| !v.pass) {
        let title = format!("mcptape check: {}", v.title());
        if v.findings.is_empty() {
            notes.push(
                Annotation::new(Level::Error, v.summary.clone())
                    .at(tape, None)
                    .titled(title.clone()),
            );
        }
        for f in &v.findings {
            notes.push(
                Annotation::new(Level::Error, f.message.clone())
                    .at(tape, f.line)
                    .titled(title.clone()),
            );
        }
    }
    notes.push(Annotation::new(Level::Notice, summary(tape, verdicts)).titled("mcptape check"));
    crate::github::lines(&notes)
}
