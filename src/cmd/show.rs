//! `mcptape show SESSION`: a tape as a readable trace, one connection after another.
//!
//! Each request with its arguments, its answer with ok/error and how long it took,
//! notifications, and lifecycle events, truncated to the terminal width unless `--full`.
//! `--json` prints the connections and their entries as one JSON document.

use std::collections::HashMap;
use std::io::Write;
use std::time::SystemTime;

use serde_json::{Value, json};

use crate::cli;
use crate::error::{Error, Result};
use crate::message::Kind;
use crate::mode::{self};
use crate::outcome::Outcome;
use crate::style::{Paint, Role, Stream};
use crate::tape::{Connection, Direction, Entry, LifecycleKind, Tape};

/// Width used when stdout is not a terminal and `COLUMNS` is not set.
const DEFAULT_WIDTH: usize = 120;

/// Loads the tape a SESSION argument names, printing its warnings on stderr.
pub fn load(session: &str) -> Result<Tape> {
    Ok(Tape::load_warning(&mode::session_path(session)?)?)
}

impl cli::Show {
    /// Prints the trace (or JSON) on stdout.
    pub fn run(self) -> Result<Outcome> {
        let tape = load(&self.session)?;
        let conns = tape.connections();
        let mut out = std::io::stdout().lock();
        let text = if self.json {
            let notes: Vec<Value> = tape
                .notes()
                .into_iter()
                .map(|i| {
                    let e = &tape.entries[i];
                    json!({"line": e.line, "ts": e.meta.ts, "text": e.message.value()["params"]["text"]})
                })
                .collect();
            let doc = json!({
                "tape": tape.path,
                "warnings": tape.warnings,
                "notes": notes,
                "connections": conns.iter().map(|c| conn_json(&tape, c)).collect::<Vec<_>>(),
            });
            format!("{}\n", crate::term::json_pretty(&doc))
        } else {
            let width = (!self.full).then(width);
            trace_painted(&tape, &conns, width, Paint::of(Stream::Stdout))
        };
        out.write_all(text.as_bytes()).map_err(Error::Stdout)?;
        Ok(Outcome::Ok)
    }
}

pub(super) fn width() -> usize {
    if let Some((terminal_size::Width(w), _)) = terminal_size::terminal_size() {
        return usize::from(w);
    }
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .filter(|&w| w > 0)
        .unwrap_or(DEFAULT_WIDTH)
}

fn conn_json(tape: &Tape, conn: &Connection) -> Value {
    let entries: Vec<Value> = conn
        .entries
        .iter()
        .map(|&i| {
            let e = &tape.entries[i];
            let mut v = json!({
                "line": e.line,
                "dir": e.meta.dir.as_str(),
                "ts": e.meta.ts,
                "message": e.message.value(),
            });
            if let Some(b) = e.meta.batch {
                v["batch"] = json!(b);
            }
            if let Some(stream) = e.meta.stream {
                v["stream"] = json!(stream.as_str());
            }
            v
        })
        .collect();
    json!({"id": conn.id, "server": conn.server, "entries": entries})
}

fn ts(entry: &Entry) -> Option<SystemTime> {
    humantime::parse_rfc3339(entry.meta.ts.as_deref()?).ok()
}

fn secs(from: SystemTime, to: SystemTime) -> f64 {
    to.duration_since(from)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

fn compact(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        v => v.to_string(),
    }
}

/// The readable trace of every connection.
pub fn trace(tape: &Tape, conns: &[Connection], width: Option<usize>) -> String {
    trace_painted(tape, conns, width, Paint::PLAIN)
}

/// [`trace`], its directions coloured by `paint`: a client → server arrow, a server →
/// client arrow, lifecycle entries dim, connection headings bold.
pub fn trace_painted(
    tape: &Tape,
    conns: &[Connection],
    width: Option<usize>,
    paint: Paint,
) -> String {
    let mut out = String::new();
    let push = |out: &mut String, width: Option<usize>, line: &str, look: Look| {
        push_painted(out, width, line, look, paint)
    };
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let header = format!(
        "tape {} · {} · {}",
        tape.path.display(),
        plural(conns.len(), "connection"),
        plural(tape.entries.len(), "entry").replace("entrys", "entries")
    );
    push(&mut out, width, &header, Look::Plain);
    // Notes belong to no connection: each is printed once, as a heading, before the first
    // entry (or connection) that comes after it on the tape.
    let notes: Vec<&Entry> = tape.notes().into_iter().map(|i| &tape.entries[i]).collect();
    let mut next_note = 0;
    let mut notes_before = |out: &mut String, line: usize| {
        while let Some(n) = notes.get(next_note).filter(|n| n.line < line) {
            push(out, width, &note_heading(n), Look::Heading);
            next_note += 1;
        }
    };
    for conn in conns {
        let entries: Vec<&Entry> = conn.entries.iter().map(|&i| &tape.entries[i]).collect();
        notes_before(&mut out, entries.first().map_or(usize::MAX, |e| e.line));
        let start = entries.iter().find_map(|e| ts(e));
        let started = entries
            .iter()
            .find_map(|e| e.meta.ts.as_deref())
            .unwrap_or("no timestamp");
        // An imported connection says so: its handshake was made up, not recorded.
        let imported = entries
            .iter()
            .find_map(|e| e.meta.source.as_ref())
            .map(|s| {
                let session = s
                    .session
                    .as_deref()
                    .map(|id| format!(" session {id}"))
                    .unwrap_or_default();
                format!(" · imported from {}{session}", s.imported)
            })
            .unwrap_or_default();
        push(
            &mut out,
            width,
            &format!(
                "── {} · conn {} · {started}{imported}",
                printable(&conn.server),
                printable(&conn.id)
            ),
            Look::Heading,
        );
        let mut asked: HashMap<(Direction, String), SystemTime> = HashMap::new();
        for e in entries {
            notes_before(&mut out, e.line);
            let at = match (start, ts(e)) {
                (Some(s), Some(t)) => format!("+{:.3}s", secs(s, t)),
                _ => "       ".into(),
            };
            let line = describe(e, &mut asked);
            let prefix = format!("  {at:>8}  ");
            let look = Look::Entry(e.meta.dir, prefix.chars().count());
            push(&mut out, width, &format!("{prefix}{line}"), look);
        }
    }
    notes_before(&mut out, usize::MAX);
    out
}

/// A note as a heading: `══ NOTE text · 2026-12-02T10:00:00.250Z`.
fn note_heading(e: &Entry) -> String {
    let text = match crate::tape::lifecycle::Lifecycle::of(e) {
        Some(crate::tape::lifecycle::Lifecycle::Note(n)) => n.text,
        _ => String::new(),
    };
    let at = e.meta.ts.as_deref().unwrap_or("no timestamp");
    format!("══ NOTE {text} · {at}")
}

/// A name from a tape as it may be printed: control characters escaped, so that a
/// shared tape cannot drive the terminal ([`crate::term::line`]).
pub fn printable(s: &str) -> String {
    crate::term::line(s).into_owned()
}

/// What a line of the trace is, for its colour.
#[derive(Debug, Clone, Copy)]
enum Look {
    /// The tape's header.
    Plain,
    /// A connection's heading.
    Heading,
    /// An entry in this direction, its arrow after this many characters.
    Entry(Direction, usize),
}

/// Appends one line of the trace, escaped (everything in it may come from the tape),
/// then cut to the width, then painted: the width counts what is shown, and only the
/// escaped text is styled.
fn push_painted(out: &mut String, width: Option<usize>, line: &str, look: Look, paint: Paint) {
    let line = crate::term::line(line);
    let line: String = match width {
        Some(w) if line.chars().count() > w => {
            let mut cut: String = line.chars().take(w.saturating_sub(1)).collect();
            cut.push('…');
            cut
        }
        _ => line.into_owned(),
    };
    let painted = match look {
        Look::Plain => line,
        Look::Heading => paint.paint(Role::Heading, &line),
        Look::Entry(Direction::Lifecycle, _) => paint.paint(Role::Dim, &line),
        Look::Entry(dir, at) => {
            let role = if dir == Direction::Send {
                Role::Send
            } else {
                Role::Recv
            };
            // The arrow is one character after the prefix (when the cut left it).
            let split = |n: usize| line.char_indices().nth(n).map_or(line.len(), |(i, _)| i);
            let (head, rest) = line.split_at(split(at));
            let (arrow, tail) = rest.split_at(split(at + 1) - head.len());
            format!("{head}{}{tail}", paint.paint(role, arrow))
        }
    };
    out.push_str(&painted);
    out.push('\n');
}

/// One entry as one line; remembers request times to tell how long answers took.
fn describe(e: &Entry, asked: &mut HashMap<(Direction, String), SystemTime>) -> String {
    let v = e.message.value();
    let arrow = match e.meta.dir {
        Direction::Send => "→",
        Direction::Recv => "←",
        Direction::Lifecycle => "·",
    };
    let batch = e
        .meta
        .batch
        .map(|b| format!(" [batch {b}]"))
        .unwrap_or_default()
        + &e.meta
            .stream
            .map(|s| format!(" [{} stream]", s.as_str()))
            .unwrap_or_default()
        + if e.meta.synthesized() {
            " [synthesized]"
        } else {
            ""
        }
        + &e.meta
            .incomplete()
            .map(|why| format!(" [incomplete: {why}]"))
            .unwrap_or_default();
    let method = e.message.method().unwrap_or("?");
    let id = e.message.id().unwrap_or("null");
    let body = match (e.meta.dir, e.message.kind()) {
        (Direction::Lifecycle, _) => match crate::tape::lifecycle::Lifecycle::of(e) {
            Some(crate::tape::lifecycle::Lifecycle::Fault(f)) => fault_line(&f),
            Some(crate::tape::lifecycle::Lifecycle::Policy(p)) => policy_line(&p),
            Some(crate::tape::lifecycle::Lifecycle::Commit(c)) => commit_line(&c),
            _ => {
                let event = LifecycleKind::parse(method);
                format!("{} {}", event.label(), compact(&v["params"]))
            }
        },
        (dir, Kind::Request) => {
            if let Some(t) = ts(e) {
                asked.insert((dir, id.to_owned()), t);
            }
            if method == "tools/call" {
                let p = &v["params"];
                let name = p["name"].as_str().unwrap_or("?");
                format!("{method} #{id} {name} {}", compact(&p["arguments"]))
            } else {
                format!("{method} #{id} {}", compact(&v["params"]))
            }
        }
        (_, Kind::Notification) => format!("{method} {}", compact(&v["params"])),
        (dir, kind @ (Kind::Response | Kind::Error)) => {
            let other = match dir {
                Direction::Send => Direction::Recv,
                _ => Direction::Send,
            };
            let took = match (asked.remove(&(other, id.to_owned())), ts(e)) {
                (Some(a), Some(b)) => format!(" {}ms", (secs(a, b) * 1000.0).round()),
                _ => String::new(),
            };
            if kind == Kind::Error {
                let err = &v["error"];
                format!(
                    "#{id} error {} {}{took}",
                    compact(&err["code"]),
                    err["message"].as_str().unwrap_or("")
                )
            } else {
                let result = &v["result"];
                let status = if result["isError"] == Value::Bool(true) {
                    "tool error"
                } else {
                    "ok"
                };
                format!("#{id} {status}{took} {}", compact(result))
            }
        }
        (_, Kind::Other) => crate::depth::shallow(e.message.text()).into_owned(),
    };
    format!("{arrow} {} {batch}", body.trim_end())
        .trim_end()
        .to_owned()
}

#[cfg(test)]
#[path = "show_tests.rs"]
mod tests;

/// A `$fault` entry for people: `FAULT error on #2 tools/call search (rule 1: …)`.
fn fault_line(f: &crate::tape::fault::FaultEntry) -> String {
    let mut at = String::new();
    if let Some(id) = &f.id {
        at.push_str(&format!(" #{id}"));
    }
    for part in [&f.method, &f.tool].into_iter().flatten() {
        at.push(' ');
        at.push_str(part);
    }
    let on = if at.is_empty() {
        String::new()
    } else {
        format!(" on{at}")
    };
    format!(
        "FAULT {}{on} (rule {}: {})",
        f.effect.as_str(),
        f.index,
        f.rule
    )
}

/// A `$policy/decision` entry for people: `POLICY deny → refused #7 tools/call
/// delete_file (rule no-delete)`, with who decided, how long it waited and why.
fn policy_line(p: &crate::tape::policy::PolicyEntry) -> String {
    let mut at = String::new();
    if let Some(id) = &p.id {
        at.push_str(&format!(" #{id}"));
    }
    at.push(' ');
    at.push_str(&p.method);
    if let Some(tool) = &p.tool {
        at.push(' ');
        at.push_str(tool);
    }
    let rules = match p.rules.as_slice() {
        _ if p.error.is_some() => format!("not read: error {}", p.error.unwrap_or_default()),
        [] => "default".to_owned(),
        [one] => format!("rule {one}"),
        many => format!("rules {}", many.join(", ")),
    };
    let mut why = vec![rules];
    if let Some(by) = &p.by {
        why.push(format!("by {by}"));
    }
    if let Some(ms) = p.waited_ms {
        why.push(format!("waited {:.1} s", ms as f64 / 1000.0));
    }
    if let Some(approval) = &p.approval {
        why.push(format!("approval {approval}"));
    }
    if let Some(reason) = &p.reason {
        why.push(reason.clone());
    }
    format!(
        "POLICY {} → {}{at} ({})",
        p.decision.as_str(),
        p.resolution.as_str(),
        why.join("; ")
    )
}

/// A `$commit` entry for people: `COMMIT #2 echo jcs-sha256 4413…8a (body kept)`.
fn commit_line(c: &crate::tape::commit::CommitEntry) -> String {
    let mut at = String::new();
    if let Some(id) = &c.id {
        at.push_str(&format!(" #{id}"));
    }
    if let Some(tool) = &c.tool {
        at.push_str(&format!(" {tool}"));
    }
    let digest = match &c.digest {
        crate::tape::commit::Digest::Sha256(hex) => format!("{} {hex}", c.alg),
        crate::tape::commit::Digest::None(reason) => format!("no commitment: {reason}"),
    };
    format!("COMMIT{at} {digest} (body {})", c.body.as_str())
}
