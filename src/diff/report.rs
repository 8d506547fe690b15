//! The reports of a diff: text for people (escaped, coloured by class), one JSON
//! document, JUnit XML (a testcase per item, a failure per breaking change, a testcase per
//! call), and GitHub workflow commands (an `::error` per breaking change, a `::warning`
//! per other change, at the tape line of the listing when there is one, and a
//! `::notice` summary).

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::{Class, Diff, Finding, Kind, Side};
use crate::cli::ReportFormat;
use crate::github::{Annotation, Level};
use crate::style::{Paint, Role};
use crate::term::line;

/// A value as the reports show it: its JSON cut at 120 characters.
pub fn short(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(119) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
}

/// The report in `format` (only text is painted).
pub fn render(format: ReportFormat, paint: Paint, diff: &Diff, old: &Side, new: &Side) -> String {
    match format {
        ReportFormat::Text => text(paint, diff, old, new),
        ReportFormat::Json => format!("{}\n", crate::term::json_pretty(&document(diff, old, new))),
        ReportFormat::Junit => junit(diff, old, new),
        ReportFormat::Github => github(diff, old, new),
    }
}

/// The summary line's counts: `3 breaking, 2 compatible, 1 info; calls: 1 same, 1 changed`.
fn summary(diff: &Diff) -> String {
    let c = &diff.calls;
    let mut s = format!(
        "{} breaking, {} compatible, {} info",
        diff.count(Class::Breaking),
        diff.count(Class::Compatible),
        diff.count(Class::Info)
    );
    if !c.calls.is_empty() || c.unmatched_old + c.unmatched_new > 0 {
        let same = c.calls.len() - c.changed();
        let _ = write!(
            s,
            "; calls: {same} same, {} changed, {} unmatched",
            c.changed(),
            c.unmatched_old + c.unmatched_new
        );
    }
    s
}

fn role(class: Class) -> Role {
    match class {
        Class::Breaking => Role::Fail,
        Class::Compatible => Role::Pass,
        Class::Info => Role::Dim,
    }
}

fn tag(class: Class) -> &'static str {
    match class {
        Class::Breaking => "BREAKING",
        Class::Compatible => "compatible",
        Class::Info => "info",
    }
}

fn text(paint: Paint, diff: &Diff, old: &Side, new: &Side) -> String {
    let mut out = line(&format!(
        "diff `{}` (server `{}`) → `{}`: {}",
        old.label,
        old.server,
        new.label,
        summary(diff)
    ))
    .into_owned();
    out.push_str("\n\n");
    let mut heading = String::new();
    for f in &diff.findings {
        if f.kind == Kind::Unlisted {
            let _ = writeln!(out, "{}", paint.paint(Role::Warn, &line(&f.message)));
            continue;
        }
        let title = f.title();
        if title != heading {
            let _ = writeln!(out, "{}", paint.paint(Role::Heading, &line(&title)));
            heading = title;
        }
        let word = tag(f.class);
        let pad = " ".repeat(11usize.saturating_sub(word.len()));
        let at = if f.path.is_empty() {
            String::new()
        } else {
            format!("{}: ", f.path)
        };
        let _ = writeln!(
            out,
            "  {}{pad}{} ({})",
            paint.paint(role(f.class), word),
            line(&format!("{at}{}", f.message)),
            f.rule
        );
    }
    let c = &diff.calls;
    if !c.calls.is_empty() {
        let _ = writeln!(
            out,
            "{}",
            paint.paint(Role::Heading, "calls both tapes made")
        );
        for call in &c.calls {
            let word = call.class.as_str();
            let pad = " ".repeat(11usize.saturating_sub(word.len()));
            let r = if call.class.is_difference() {
                Role::Fail
            } else {
                Role::Pass
            };
            let _ = writeln!(
                out,
                "  {}{pad}{} (lines {} → {})",
                paint.paint(r, word),
                line(&call.title()),
                call.old_line,
                call.new_line
            );
            for d in &call.differences {
                let show =
                    |v: &Option<Value>| v.as_ref().map(short).unwrap_or_else(|| "(absent)".into());
                let _ = writeln!(
                    out,
                    "             {}: {} → {}",
                    line(if d.path.is_empty() {
                        "(whole answer)"
                    } else {
                        &d.path
                    }),
                    paint.paint(Role::Removed, &line(&show(&d.old))),
                    paint.paint(Role::Added, &line(&show(&d.new)))
                );
            }
        }
    }
    if c.unmatched_old + c.unmatched_new > 0 {
        let _ = writeln!(
            out,
            "{}",
            paint.paint(
                Role::Dim,
                &format!(
                    "calls made by one tape only: {} old, {} new (not compared)",
                    c.unmatched_old, c.unmatched_new
                )
            )
        );
    }
    if diff.findings.is_empty() && c.calls.is_empty() {
        out.push_str("no differences\n");
    }
    out
}

fn side_json(s: &Side) -> Value {
    json!({"label": s.label, "server": s.server, "tape": s.path})
}

/// The JSON document.
pub fn document(diff: &Diff, old: &Side, new: &Side) -> Value {
    let c = &diff.calls;
    json!({
        "old": side_json(old),
        "new": side_json(new),
        "findings": diff.findings,
        "calls": c.calls,
        "summary": {
            "breaking": diff.count(Class::Breaking),
            "compatible": diff.count(Class::Compatible),
            "info": diff.count(Class::Info),
            "unlisted": diff.findings.iter().filter(|f| !f.is_change()).count(),
            "calls": {
                "compared": c.calls.len(),
                "changed": c.changed(),
                "unmatched_old": c.unmatched_old,
                "unmatched_new": c.unmatched_new,
            },
        },
    })
}

fn xml(s: &str) -> String {
    crate::cmd::verify::report::xml(s)
}

fn junit(diff: &Diff, old: &Side, new: &Side) -> String {
    // One testcase per item with a finding (in order of first finding), one per call.
    let mut items: Vec<(String, Vec<&Finding>)> = Vec::new();
    for f in diff.findings.iter() {
        let title = f.title();
        match items.iter_mut().find(|(t, _)| *t == title) {
            Some((_, v)) => v.push(f),
            None => items.push((title, vec![f])),
        }
    }
    let failing = |fs: &[&Finding]| {
        fs.iter()
            .any(|f| f.is_change() && f.class == Class::Breaking)
    };
    let failures = items.iter().filter(|(_, fs)| failing(fs)).count() + diff.calls.changed();
    let tests = items.len() + diff.calls.calls.len();
    let suite = xml(&format!("{} → {}", old.label, new.label));
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"mcptape diff\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\">"
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"{suite}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\">"
    );
    for (title, fs) in &items {
        let lines: String = fs
            .iter()
            .map(|f| format!("{} {}: {} ({})\n", tag(f.class), f.path, f.message, f.rule))
            .collect();
        let _ = write!(
            out,
            "    <testcase classname=\"{}\" name=\"{}\">",
            xml(&old.server),
            xml(title)
        );
        if failing(fs) {
            let _ = write!(
                out,
                "\n      <failure message=\"breaking\" type=\"breaking\">{}</failure>",
                xml(&lines)
            );
        } else {
            let _ = write!(out, "\n      <system-out>{}</system-out>", xml(&lines));
        }
        out.push_str("\n    </testcase>\n");
    }
    for call in &diff.calls.calls {
        let name = xml(&format!(
            "{} (lines {} → {})",
            call.title(),
            call.old_line,
            call.new_line
        ));
        let _ = write!(
            out,
            "    <testcase classname=\"{}.calls\" name=\"{name}\"",
            xml(&old.server)
        );
        if call.class.is_difference() {
            let details: String = call
                .differences
                .iter()
                .map(|d| {
                    let show = |v: &Option<Value>| {
                        v.as_ref().map(short).unwrap_or_else(|| "(absent)".into())
                    };
                    format!("{}: {} → {}\n", d.path, show(&d.old), show(&d.new))
                })
                .collect();
            let w = call.class.as_str();
            let _ = writeln!(
                out,
                ">\n      <failure message=\"{w}\" type=\"{w}\">{}</failure>\n    </testcase>",
                xml(&details)
            );
        } else {
            out.push_str("/>\n");
        }
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

fn github(diff: &Diff, old: &Side, new: &Side) -> String {
    let mut notes = Vec::new();
    for f in diff.findings.iter().filter(|f| f.is_change()) {
        let level = if f.class == Class::Breaking {
            Level::Error
        } else {
            Level::Warning
        };
        let at = if f.path.is_empty() {
            String::new()
        } else {
            format!("{}: ", f.path)
        };
        let mut a = Annotation::new(level, format!("{at}{} ({})", f.message, f.rule))
            .titled(format!("{} {}: {}", f.title(), f.class.as_str(), f.rule));
        // Where the item is: the new tape's listing, or the old one's for a removal (or
        // against a live side).
        match (&new.path, f.new_line, &old.path, f.old_line) {
            (Some(p), Some(l), _, _) if f.kind != Kind::Removed => a = a.at(p, Some(l)),
            (_, _, Some(p), l) => a = a.at(p, l),
            _ => {}
        }
        notes.push(a);
    }
    for call in diff.calls.calls.iter().filter(|c| c.class.is_difference()) {
        let paths: Vec<&str> = call.differences.iter().map(|d| d.path.as_str()).collect();
        let mut a = Annotation::new(
            Level::Warning,
            format!("answer {}: {}", call.class.as_str(), paths.join(", ")),
        )
        .titled(format!("{} answer {}", call.title(), call.class.as_str()));
        if let Some(p) = &new.path {
            a = a.at(p, Some(call.new_line));
        }
        notes.push(a);
    }
    for f in diff.findings.iter().filter(|f| !f.is_change()) {
        notes.push(Annotation::new(Level::Notice, f.message.clone()));
    }
    notes.push(
        Annotation::new(Level::Notice, format!("mcptape diff: {}", summary(diff)))
            .titled("mcptape diff"),
    );
    crate::github::lines(&notes)
}
