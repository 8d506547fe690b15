//! `mcptape redact TAPE [--check [--strict]]`: the recording-time redaction, applied to a
//! tape that already exists — or, with `--check`, a report of what still looks like a
//! secret, for pre-commit hooks and CI on committed fixtures. `--check` also reports the
//! possible secrets of [`crate::redact::entropy`], which fail it only with `--strict`.

mod check;
mod commits;

use std::path::Path;

use crate::cli;
use crate::error::Result;
use crate::message;
use crate::mode::{self};
use crate::outcome::Outcome;
use crate::redact::Redactor;
use crate::tape::Direction;
use crate::tape::format::{Cut, Meta};
use crate::tape::lines::{self, Class, LineReader, Read};
use crate::tape::store;

use check::{Checked, Found, Report};

impl cli::Redact {
    /// Rewrites the tapes, or checks them.
    pub fn run(self) -> Result<Outcome> {
        let (redactor, warnings) = Redactor::from_env(&|name| std::env::var(name).ok());
        for w in warnings {
            crate::term::eprintln_escaped!("mcptape: warning: {w}");
        }
        let mut dirty = false;
        let mut report = self.check.then(|| Report::new(self.format, self.strict));
        for session in &self.sessions {
            let found = match one(session, &redactor, report.as_mut()) {
                Ok(found) => found,
                Err(e) => {
                    // The json report is printed at the end: what was checked before the
                    // error is not lost (text and github printed it already).
                    if let Some(mut report) = report {
                        report.failed(session, &e);
                        report.finish()?;
                    }
                    return Err(e);
                }
            };
            dirty |= found.secrets > 0 || (self.strict && found.possible > 0);
        }
        if let Some(report) = report {
            report.finish()?;
        }
        Ok(if dirty {
            Outcome::SecretsLeft
        } else {
            Outcome::Ok
        })
    }
}

/// Redacts (or checks) one tape, read line by line as every reader reads one
/// ([`LineReader`], [`lines::classify`]).
fn one(session: &str, redactor: &Redactor, check: Option<&mut Report>) -> Result<Found> {
    let path = mode::session_path(session)?;
    let mut reader = LineReader::open(&path)?;
    let mut pass = if check.is_some() {
        Pass::Check(Checked::default())
    } else {
        Pass::Rewrite(Rewrite::default())
    };
    let size = std::fs::metadata(&path).map_or(0, |m| m.len());
    let bar = crate::progress::Progress::file(
        if check.is_some() { "check" } else { "redact" },
        &path,
        size,
    );
    let mut raw = Vec::new();
    loop {
        raw.clear();
        let Some(read) = reader.next_into(&mut raw)? else {
            break;
        };
        bar.inc((raw.len() + usize::from(read.terminated)) as u64);
        pass.line(&reader, redactor, &Line::new(&raw, read))?;
    }
    bar.finish();
    match (pass, check) {
        (Pass::Check(checked), Some(report)) => report.tape(&path, checked),
        (Pass::Check(_), None) => Ok(Found::default()),
        (Pass::Rewrite(rewrite), _) => rewrite.save(&path),
    }
}

/// One line of the tape as it was read.
struct Line<'a> {
    /// The line without its `\n`.
    raw: &'a [u8],
    /// Its 1-based number.
    number: usize,
    /// False for a last line without `\n`.
    terminated: bool,
    /// The line's length without the `\r`s before its end.
    body_len: usize,
}

impl<'a> Line<'a> {
    fn new(raw: &'a [u8], read: Read) -> Line<'a> {
        Line {
            raw,
            number: read.number,
            terminated: read.terminated,
            body_len: raw.len() - raw.iter().rev().take_while(|&&b| b == b'\r').count(),
        }
    }

    /// Its `\n`, when it had one.
    fn newline(&self) -> &'static [u8] {
        if self.terminated { b"\n" } else { b"" }
    }

    /// The line's end as it was: any `\r` before its `\n`, and the `\n`.
    fn push_ending(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.raw[self.body_len..]);
        out.extend_from_slice(self.newline());
    }

    /// The line as it was, its end included.
    fn push_whole(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.raw);
        out.extend_from_slice(self.newline());
    }
}

/// What a pass over one tape gathers: a report (`--check`) or the rewritten tape.
enum Pass {
    /// `--check`.
    Check(Checked),
    /// The rewrite.
    Rewrite(Rewrite),
}

impl Pass {
    /// Takes one line: a blank line is kept, a torn one reported, a broken one is an
    /// error, an entry is checked or redacted.
    fn line(&mut self, reader: &LineReader, redactor: &Redactor, line: &Line) -> Result<()> {
        let path = reader.path();
        let (meta, message) = match lines::classify(line.raw, line.terminated) {
            Class::Blank => {
                if let Pass::Rewrite(rewrite) = self {
                    line.push_whole(&mut rewrite.out);
                }
                return Ok(());
            }
            Class::Torn(reason) => {
                match self {
                    Pass::Check(checked) => {
                        checked.torn(path, line.number, line.terminated, &reason)
                    }
                    Pass::Rewrite(rewrite) => rewrite.torn(path, line, &reason),
                }
                return Ok(());
            }
            Class::Bad(reason) => return Err(reader.bad(line.number, reason).into()),
            Class::Entry { meta, cut, lead } => {
                (meta, message_of(&line.raw[lead..line.body_len], cut))
            }
        };
        match self {
            Pass::Check(checked) => checked.entry(
                path,
                line.number,
                redactor,
                &message,
                meta.dir == Direction::Lifecycle,
            ),
            Pass::Rewrite(rewrite) => rewrite.entry(reader, line, redactor, &meta, &message)?,
        }
        Ok(())
    }
}

/// The rewritten tape so far, and how many entries changed.
#[derive(Default)]
struct Rewrite {
    out: Vec<u8>,
    changed: usize,
    /// The `$commit` entries still waiting for their answers ([`commits`]).
    commits: Box<commits::Pending>,
}

impl Rewrite {
    /// A torn last line (a crash mid-write) is left out. A torn line that a later writer
    /// ended stays a torn line (`{`), so the connection it may belong to still says so,
    /// and the other lines keep their numbers; nothing of what it held is kept.
    fn torn(&mut self, path: &Path, line: &Line, reason: &str) {
        let number = line.number;
        if line.terminated {
            crate::term::eprintln_escaped!(
                "mcptape: warning: `{}` line {number}: torn line emptied to `{{` ({reason})",
                path.display()
            );
            self.out.push(b'{');
            line.push_ending(&mut self.out);
        } else {
            crate::term::eprintln_escaped!(
                "mcptape: warning: `{}` line {number}: torn last line left out ({reason})",
                path.display()
            );
        }
        self.changed += 1;
    }

    /// Writes an entry with its `message` redacted; an entry the redaction leaves alone
    /// keeps its line byte for byte.
    fn entry(
        &mut self,
        reader: &LineReader,
        line: &Line,
        redactor: &Redactor,
        meta: &Meta,
        message: &str,
    ) -> Result<()> {
        let mut redacted = redactor.message(message).into_owned();
        if meta.dir == Direction::Lifecycle {
            redacted = without_off_mark(redacted);
        }
        let start = self.out.len();
        let answer = self.commits.entry(meta, message, &redacted, start);
        if redacted == message {
            line.push_whole(&mut self.out);
            if answer == commits::Seen::Commit {
                self.commits.written(self.out.len());
            }
            return Ok(());
        }
        self.changed += 1;
        // Keep the `_meta` member exactly as it was; only the message changes.
        let body = std::str::from_utf8(&line.raw[..line.body_len])
            .map_err(|_| reader.bad(line.number, "not UTF-8".into()))?;
        let meta = message::raw_member(body, &["_meta"])
            .ok_or_else(|| reader.bad(line.number, "no `_meta`".into()))?;
        let head = redacted.trim_end().strip_suffix('}').unwrap_or(&redacted);
        let sep = if head.trim_end().ends_with('{') {
            ""
        } else {
            ","
        };
        self.out
            .extend_from_slice(format!("{head}{sep}\"_meta\":{meta}}}").as_bytes());
        line.push_ending(&mut self.out);
        Ok(())
    }

    /// Replaces the tape when anything changed, and says how much.
    fn save(mut self, path: &Path) -> Result<Found> {
        self.changed += self.commits.apply(&mut self.out);
        if self.changed > 0 {
            store::replace_file(path, &self.out)?;
        }
        let changed = self.changed;
        crate::term::eprintln_escaped!(
            "mcptape: redacted {changed} entr{} of `{}`",
            if changed == 1 { "y" } else { "ies" },
            path.display()
        );
        Ok(Found::default())
    }
}

/// The message of an entry's line (from its first non-blank byte, without line end),
/// `_meta` cut out where [`lines::classify`] found it.
fn message_of(line: &[u8], cut: Cut) -> String {
    match cut {
        // The loader checked the line as UTF-8, and `i` is the comma before `_meta`.
        Cut::At(i) => format!("{}}}", String::from_utf8_lossy(&line[..i])),
        Cut::Owned(m) => m,
    }
}

/// True when an entry carries the mark of a recording made with `--no-redact`:
/// `params.redaction` is the string `off`, however it is spelt (`"\u006fff"` too).
fn is_off_mark(message: &str) -> bool {
    message::raw_member(message, &["params", "redaction"])
        .and_then(|raw| serde_json::from_str::<String>(raw).ok())
        .is_some_and(|value| value == "off")
}

/// A tape recorded with `--no-redact` loses its mark (`params.redaction: "off"` on
/// `$transport/start`) once it is redacted. The member is cut out by its raw span, so
/// the rest of the entry keeps its bytes, whatever its depth.
fn without_off_mark(mut message: String) -> String {
    // `raw_member` reads the last of duplicate keys; each pass removes that one.
    while is_off_mark(&message) {
        match message::remove_member(&message, &["params"], "redaction") {
            Some(cut) => message = cut,
            None => break,
        }
    }
    message
}
