//! `mcptape approvals`, `approve ID`, `deny ID`: the person's side of a policy's `ask`
//! ([`crate::policy::approvals`]). They read and write the desk of the same mcptape home
//! as the proxies that hold the calls; nothing goes over a network.
//!
//! Everything shown came from the wire (server and tool names, arguments): it is
//! escaped for the terminal ([`crate::term`]), and the arguments are cut to the width.

use std::io::Write;
use std::time::{Duration, SystemTime};

use serde_json::json;
use unicode_width::UnicodeWidthChar;

use crate::cli;
use crate::error::{Error, Result};
use crate::outcome::Outcome;
use crate::policy::approvals::{Choice, Desk, Pending};
use crate::table::{Align, Table};

/// The narrowest the arguments column is cut to, in terminal columns.
const MIN_ARGUMENTS_WIDTH: usize = 16;

impl cli::Approvals {
    /// Lists the pending calls: a table, or one JSON object a line (`--json`).
    pub fn run(self) -> Result<Outcome> {
        let pending = Desk::open()?.pending()?;
        let now = SystemTime::now();
        let text = if self.json {
            pending
                .iter()
                .map(|p| format!("{}\n", crate::term::json_compact(&as_json(p, now))))
                .collect()
        } else if pending.is_empty() {
            "no calls are waiting\n".to_owned()
        } else {
            table(&pending, now, super::show::width())
        };
        print(&text)
    }
}

impl cli::Approve {
    /// Lets a pending call through.
    pub fn run(self) -> Result<Outcome> {
        let pending = Desk::open()?.decide(&self.id, Choice::Approve)?;
        print(&format!("approved {}\n", said(&pending)))
    }
}

impl cli::Deny {
    /// Refuses a pending call.
    pub fn run(self) -> Result<Outcome> {
        let reason = self.reason.clone();
        let pending = Desk::open()?.decide(&self.id, Choice::Deny { reason })?;
        let because = self
            .reason
            .map(|r| format!(" (reason: {})", crate::term::line(&r)))
            .unwrap_or_default();
        print(&format!("denied {}{because}\n", said(&pending)))
    }
}

/// "`abc234`: tool `echo` of server `everything`, after 12s".
fn said(p: &Pending) -> String {
    let what = match &p.tool {
        Some(tool) => format!("tool `{}`", crate::term::line(tool)),
        None => format!("`{}`", crate::term::line(&p.method)),
    };
    format!(
        "`{}`: {what} of server `{}`, after {}",
        p.id,
        crate::term::line(&p.server),
        span(p.waited(SystemTime::now()))
    )
}

fn print(text: &str) -> Result<Outcome> {
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(Error::Stdout)?;
    Ok(Outcome::Ok)
}

/// One pending call for `--json`: its file's members, and how long it waited and has
/// left, in milliseconds.
fn as_json(p: &Pending, now: SystemTime) -> serde_json::Value {
    let mut v = json!(p);
    v["waited_ms"] = json!(millis(p.waited(now)));
    v["left_ms"] = json!(p.left(now).map(millis));
    v
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The pending calls as a table: `ID SERVER TOOL WAITED LEFT ARGUMENTS`, the arguments
/// cut so that a line fits in `width` columns.
fn table(pending: &[Pending], now: SystemTime, width: usize) -> String {
    let columns = [
        ("ID", Align::Left),
        ("SERVER", Align::Left),
        ("TOOL", Align::Left),
        ("WAITED", Align::Right),
        ("LEFT", Align::Right),
        ("ARGUMENTS", Align::Left),
    ];
    let rows: Vec<[String; 5]> = pending
        .iter()
        .map(|p| {
            [
                p.id.clone(),
                crate::term::line(&p.server).into_owned(),
                crate::term::line(p.what()).into_owned(),
                span(p.waited(now)),
                p.left(now).map_or_else(|| "-".to_owned(), span),
            ]
        })
        .collect();
    // What the columns before the arguments take, with two spaces after each.
    let before: usize = (0..5)
        .map(|i| {
            let header = unicode_width::UnicodeWidthStr::width(columns[i].0);
            rows.iter()
                .map(|r| unicode_width::UnicodeWidthStr::width(r[i].as_str()))
                .fold(header, usize::max)
                + 2
        })
        .sum();
    let room = width.saturating_sub(before).max(MIN_ARGUMENTS_WIDTH);
    let mut t = Table::new(&columns);
    for (p, row) in pending.iter().zip(rows) {
        let arguments = crate::term::json_compact(&p.arguments);
        let [id, server, tool, waited, left] = row;
        t.row(&[id, server, tool, waited, left, cut(&arguments, room)]);
    }
    t.render("")
}

/// `text` in at most `room` terminal columns: cut, with `…` at the end, when longer.
fn cut(text: &str, room: usize) -> String {
    if unicode_width::UnicodeWidthStr::width(text) <= room {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > room {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    out
}

/// A duration for people: `4s`, `2m05s`, `1h02m`.
fn span(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(tool: &str, arguments: serde_json::Value) -> Pending {
        Pending {
            id: "abc234".into(),
            server: "every\u{1b}[2Jthing".into(),
            method: "tools/call".into(),
            tool: Some(tool.into()),
            arguments,
            arguments_bytes: None,
            rules: vec!["ask".into()],
            pid: 1,
            since: "2026-01-01T00:00:00.000Z".into(),
            deadline: Some("2026-01-01T00:05:00.000Z".into()),
        }
    }

    fn at(text: &str) -> SystemTime {
        humantime::parse_rfc3339(text).expect("time")
    }

    #[test]
    fn the_table_escapes_what_came_from_the_wire_and_cuts_the_arguments_to_the_width() {
        let long = json!({"path": "/srv/".to_owned() + &"x".repeat(200), "bidi": "\u{202e}"});
        let p = pending("write_file", long);
        let text = table(&[p], at("2026-01-01T00:01:05.000Z"), 80);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(lines[0].starts_with("ID "), "{text}");
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{202e}'),
            "{text:?}"
        );
        assert!(lines[1].contains("every\\x1b[2Jthing"), "{text}");
        assert!(
            lines[1].contains("1m05s") && lines[1].contains("3m55s"),
            "{text}"
        );
        assert!(lines[1].ends_with('…'), "{text}");
        assert!(
            unicode_width::UnicodeWidthStr::width(lines[1]) <= 80,
            "{}",
            lines[1]
        );
    }

    #[test]
    fn short_arguments_are_shown_whole_and_a_missing_deadline_is_a_dash() {
        let mut p = pending("echo", json!({"message": "hi"}));
        p.deadline = None;
        let text = table(&[p], at("2026-01-01T00:00:04.000Z"), 200);
        assert!(text.contains(r#"{"message":"hi"}"#), "{text}");
        assert!(
            text.lines()
                .nth(1)
                .is_some_and(|l| l.contains(" 4s ") && l.contains(" - ")),
            "{text}"
        );
    }

    #[test]
    fn json_gives_the_file_members_and_the_times_in_milliseconds() {
        let p = pending("echo", json!({}));
        let v = as_json(&p, at("2026-01-01T00:00:02.500Z"));
        assert_eq!(v["id"], "abc234");
        assert_eq!(v["waited_ms"], 2500);
        assert_eq!(v["left_ms"], 297_500);
        assert_eq!(v["rules"], json!(["ask"]));
    }

    #[test]
    fn spans_read_as_people_write_them() {
        for (secs, shown) in [
            (0, "0s"),
            (59, "59s"),
            (60, "1m00s"),
            (125, "2m05s"),
            (3720, "1h02m"),
        ] {
            assert_eq!(span(Duration::from_secs(secs)), shown);
        }
    }
}
