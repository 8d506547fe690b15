//! The tape turned into the page's data: one JSON document the page's script reads.
//!
//! Compact on purpose (a 100,000-entry tape must stay a file a browser opens): entries
//! and exchanges are arrays, not objects, each entry's raw line is kept once, and what
//! the script can derive from the raw line (the pretty-printed message) is not repeated.
//!
//! - `entries[i]`: `[line, dir, conn, t, exchange, kind, label, raw, severity]`: the
//!   tape line, `s`/`r`/`l`, the connection's index (-1 for a note), milliseconds since
//!   the first timestamp of the traffic (notes aside; negative for a note before it,
//!   null when the entry has none), the exchange it belongs
//!   to (-1 for none), `q` request / `a` answer / `n` notification / `l` lifecycle / `N`
//!   note / `o` other, a one-line label, the line exactly as on the tape, and for a
//!   lifecycle event `ok` / `info` / `warn` / `bad`.
//! - `exchanges[x]`: `[conn, request, answer, t0, t1, status, from, method, tool]`:
//!   entry indexes (answer -1 when none), times as above, [`Status::as_str`], `s` when
//!   the client asked and `r` when the server did.
//! - `receipt`: what `--verify` named, as read ([`Receipt`]), with `diverged`: the tape
//!   lines it says diverged.
//!
//! Nothing here escapes for HTML: [`super::page`] escapes the whole document once, and the
//! script inserts every string as text. Labels, names, the tape's path and its warnings
//! have their control, bidi and invisible characters written as visible escapes
//! ([`shown`]); the raw line is the tape's.

use std::time::SystemTime;

use serde_json::{Value, json};

use crate::exchange::{Exchanges, time};
use crate::message::Kind;
use crate::receipt::Receipt;
use crate::tape::close::CloseStatus;
use crate::tape::lifecycle::Lifecycle;
use crate::tape::{Direction, Entry, LifecycleKind, Tape};

/// The longest label kept for one entry, in characters (the detail pane has the rest).
const MAX_LABEL_CHARS: usize = 160;

/// The page's data for `tape`, with `receipt` beside it when given.
pub fn of(tape: &Tape, receipt: Option<&Receipt>) -> Value {
    let x = Exchanges::of(tape);
    let raw = tape.original();
    let lines: Vec<&[u8]> = raw
        .as_deref()
        .map(|b| b.split(|&c| c == b'\n').collect())
        .unwrap_or_default();
    // Time counts from the first timestamp of the traffic: a note added later (or
    // earlier) does not move it. A tape of notes only counts from its first note.
    let notes = tape.notes();
    let traffic = |i: &usize| notes.binary_search(i).is_err();
    let first = |keep: &dyn Fn(&usize) -> bool| {
        (0..tape.entries.len())
            .filter(keep)
            .filter_map(|i| time(&tape.entries[i]))
            .min()
    };
    let origin = first(&traffic).or_else(|| first(&|_| true));
    let ms = |t: Option<SystemTime>| -> Value {
        match (origin, t) {
            (Some(o), Some(t)) => match t.duration_since(o) {
                Ok(d) => json!(d.as_millis() as i64),
                Err(e) => json!(-(e.duration().as_millis() as i64)),
            },
            _ => Value::Null,
        }
    };
    // Each entry's connection and exchange, as indexes.
    let n = tape.entries.len();
    let mut conn_of = vec![-1i64; n];
    for (c, conn) in x.connections.iter().enumerate() {
        for &i in &conn.entries {
            conn_of[i] = c as i64;
        }
    }
    let mut ex_of = vec![-1i64; n];
    for (k, ex) in x.exchanges.iter().enumerate() {
        ex_of[ex.request] = k as i64;
        if let Some(a) = ex.answer {
            ex_of[a] = k as i64;
        }
    }
    let entries: Vec<Value> = tape
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let raw_line = lines
                .get(e.line.wrapping_sub(1))
                .map(|l| String::from_utf8_lossy(l.strip_suffix(b"\r").unwrap_or(l)).into_owned())
                .unwrap_or_else(|| e.message.text().to_owned());
            let (kind, label, severity) = describe(e, ex_of[i] >= 0);
            json!([
                e.line,
                dir(e.meta.dir),
                conn_of[i],
                ms(time(e)),
                ex_of[i],
                kind,
                cut(&shown(&label)),
                raw_line,
                severity
            ])
        })
        .collect();
    let exchanges: Vec<Value> = x
        .exchanges
        .iter()
        .map(|ex| {
            json!([
                ex.conn,
                ex.request,
                ex.answer.map_or(-1, |a| a as i64),
                ms(ex.started),
                ms(ex.ended),
                ex.status.as_str(),
                dir(ex.from),
                shown(&ex.method),
                ex.tool.as_deref().map(shown)
            ])
        })
        .collect();
    let conns: Vec<Value> = x
        .connections
        .iter()
        .map(|c| json!({"server": shown(&c.server), "id": shown(&c.id)}))
        .collect();
    json!({
        "tape": shown(&tape.path.to_string_lossy()),
        "warnings": tape.warnings.iter().map(|w| shown(w)).collect::<Vec<_>>(),
        "connections": conns,
        "entries": entries,
        "exchanges": exchanges,
        "notes": notes,
        "receipt": receipt.map(receipt_json),
    })
}

fn dir(d: Direction) -> &'static str {
    match d {
        Direction::Send => "s",
        Direction::Recv => "r",
        Direction::Lifecycle => "l",
    }
}

/// A name or label as the page shows it: control, bidi and invisible characters as
/// visible escapes ([`crate::term::line`], as `show` prints them), so that no name can
/// reorder or hide what is around it. The raw line stays exact.
fn shown(s: &str) -> String {
    crate::term::line(s).into_owned()
}

fn cut(label: &str) -> String {
    if label.chars().count() <= MAX_LABEL_CHARS {
        return label.to_owned();
    }
    let mut s: String = label.chars().take(MAX_LABEL_CHARS - 1).collect();
    s.push('…');
    s
}

/// An entry's kind code, one-line label and (for lifecycle events) severity.
fn describe(e: &Entry, paired: bool) -> (&'static str, String, &'static str) {
    let v = e.message.value();
    let method = e.message.method().unwrap_or("");
    let id = e.message.id().unwrap_or("null");
    if e.meta.dir == Direction::Lifecycle {
        let event = LifecycleKind::of(e).unwrap_or(LifecycleKind::Other(method.to_owned()));
        let params = compact(&v["params"]);
        return match Lifecycle::of(e) {
            Some(Lifecycle::Note(n)) => ("N", n.text, "info"),
            Some(Lifecycle::Start(_)) => ("l", format!("start {params}"), "ok"),
            Some(Lifecycle::Close(c)) => {
                let bad = !matches!(c.status, CloseStatus::Unknown | CloseStatus::Exited(0));
                (
                    "l",
                    format!("close {params}"),
                    if bad { "bad" } else { "ok" },
                )
            }
            Some(Lifecycle::Policy(p)) => (
                "l",
                format!("policy {} → {}", p.decision.as_str(), p.resolution.as_str()),
                "warn",
            ),
            _ => {
                let severity = match event {
                    LifecycleKind::Invalid
                    | LifecycleKind::Oversize
                    | LifecycleKind::Truncated
                    | LifecycleKind::HttpError
                    | LifecycleKind::HttpStatus
                    | LifecycleKind::Fault => "bad",
                    _ => "info",
                };
                ("l", format!("{} {params}", event.label()), severity)
            }
        };
    }
    match e.message.kind() {
        Kind::Request => {
            let tool = v["params"]["name"]
                .as_str()
                .filter(|_| method == "tools/call");
            let label = match tool {
                Some(t) => format!("{method} {t} #{id}"),
                None => format!("{method} #{id}"),
            };
            ("q", label, "")
        }
        Kind::Notification => ("n", method.to_owned(), ""),
        Kind::Response | Kind::Error => {
            let status = if e.message.kind() == Kind::Error {
                let err = &v["error"];
                format!(
                    "error {} {}",
                    compact(&err["code"]),
                    err["message"].as_str().unwrap_or("")
                )
            } else if v["result"]["isError"] == Value::Bool(true) {
                "tool error".to_owned()
            } else {
                "ok".to_owned()
            };
            (
                if paired { "a" } else { "o" },
                format!("#{id} {status}"),
                "",
            )
        }
        Kind::Other => (
            "o",
            crate::depth::shallow(e.message.text()).into_owned(),
            "",
        ),
    }
}

fn compact(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        v => v.to_string(),
    }
}

/// The receipt as the page reads it: as written, plus the lines it says diverged.
fn receipt_json(r: &Receipt) -> Value {
    let diverged = r.diverged_lines();
    match r {
        Receipt::Verify { server, calls, .. } => json!({
            "kind": "verify",
            "server": server,
            "calls": calls,
            "diverged": diverged,
        }),
        Receipt::Replay { verdicts, .. } => json!({
            "kind": "replay",
            "verdicts": verdicts.iter().map(|v| {
                let mut j = json!(v);
                j["ok"] = json!(v.ok());
                j["label"] = json!(v.label());
                j
            }).collect::<Vec<_>>(),
            "diverged": diverged,
        }),
    }
}
