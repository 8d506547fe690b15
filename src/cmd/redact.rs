//! `mcptape redact TAPE [--check [--strict]]`: the recording-time redaction, applied to a
//! tape that already exists — or, with `--check`, a report of what still looks like a
//! secret, for pre-commit hooks and CI on committed fixtures. `--check` also reports the
//! possible secrets of [`crate::redact::entropy`], which fail it only with `--strict`.

use std::io::Write;

use crate::cli;
use crate::error::{Error, Result};
use crate::message;
use crate::mode::{self};
use crate::outcome::Outcome;
use crate::redact::Redactor;
use crate::redact::entropy;
use crate::tape::format::Cut;
use crate::tape::lines::{self, Class, LineReader};
use crate::tape::store;

impl cli::Redact {
    /// Rewrites the tapes, or checks them.
    pub fn run(self) -> Result<Outcome> {
        let (redactor, warnings) = Redactor::from_env(&|name| std::env::var(name).ok());
        for w in warnings {
            crate::term::eprintln_escaped!("mcptape: warning: {w}");
        }
        let mut dirty = false;
        for session in &self.sessions {
            let found = one(session, &redactor, self.check)?;
            dirty |= found.secrets > 0 || (self.strict && found.possible > 0);
        }
        Ok(if dirty {
            Outcome::SecretsLeft
        } else {
            Outcome::Ok
        })
    }
}

/// What `--check` found in one tape: values the rules call secrets, and values holding a
/// possible secret (and nothing the rules saw).
#[derive(Debug, Default, Clone, Copy)]
struct Found {
    secrets: usize,
    possible: usize,
}

/// Redacts (or checks) one tape, read line by line as every reader reads one
/// ([`LineReader`], [`lines::classify`]).
fn one(session: &str, redactor: &Redactor, check: bool) -> Result<Found> {
    {
        let path = mode::session_path(session)?;
        let mut reader = LineReader::open(&path)?;
        let mut out: Vec<u8> = Vec::new();
        let mut raw = Vec::new();
        let mut findings = Vec::new();
        let mut possible = 0;
        let mut changed = 0;
        loop {
            raw.clear();
            let Some(read) = reader.next_into(&mut raw)? else {
                break;
            };
            let number = read.number;
            // The line's end as it was: any `\r` before its `\n`, and the `\n`.
            let body_len = raw.len() - raw.iter().rev().take_while(|&&b| b == b'\r').count();
            let mut ending = raw[body_len..].to_vec();
            if read.terminated {
                ending.push(b'\n');
            }
            let (meta, message) = match lines::classify(&raw, read.terminated) {
                Class::Blank => {
                    out.extend_from_slice(&raw);
                    out.extend_from_slice(if read.terminated { b"\n" } else { b"" });
                    continue;
                }
                // A torn last line (a crash mid-write) is not an entry: it cannot be
                // checked, and a rewrite leaves it out.
                Class::Torn(reason) if !read.terminated => {
                    if check {
                        findings.push(format!(
                            "{}:{number}: (torn last line, cannot be checked: {reason})",
                            path.display()
                        ));
                    } else {
                        crate::term::eprintln_escaped!(
                            "mcptape: warning: `{}` line {number}: torn last line left out ({reason})",
                            path.display()
                        );
                        changed += 1;
                    }
                    continue;
                }
                // A torn line that a later writer ended: it stays a torn line (`{`), so
                // the connection it may belong to still says so, and the other lines keep
                // their numbers; nothing of what it held is kept.
                Class::Torn(reason) => {
                    if check {
                        findings.push(format!(
                            "{}:{number}: (torn line, cannot be checked: {reason})",
                            path.display()
                        ));
                    } else {
                        crate::term::eprintln_escaped!(
                            "mcptape: warning: `{}` line {number}: torn line emptied to `{{` ({reason})",
                            path.display()
                        );
                        out.push(b'{');
                        out.extend_from_slice(&ending);
                        changed += 1;
                    }
                    continue;
                }
                Class::Bad(reason) => return Err(reader.bad(number, reason).into()),
                Class::Entry { meta, cut, lead } => (meta, message_of(&raw[lead..body_len], cut)),
            };
            if check {
                let found = redactor.findings(&message);
                for f in &found {
                    findings.push(format!(
                        "{}:{number}: {} ({})",
                        path.display(),
                        f.path,
                        f.rule
                    ));
                }
                for s in entropy::possible_secrets(&message) {
                    if !found.iter().any(|f| f.path == s.path) {
                        possible += 1;
                        findings.push(format!(
                            "{}:{number}: {} (possible secret)",
                            path.display(),
                            s.path
                        ));
                    }
                }
                continue;
            }
            let mut redacted = redactor.message(&message).into_owned();
            if meta.dir == crate::tape::Direction::Lifecycle {
                redacted = without_off_mark(redacted);
            }
            if redacted == message {
                out.extend_from_slice(&raw);
                out.extend_from_slice(if read.terminated { b"\n" } else { b"" });
                continue;
            }
            changed += 1;
            // Keep the `_meta` member exactly as it was; only the message changes.
            let body = std::str::from_utf8(&raw[..body_len])
                .map_err(|_| reader.bad(number, "not UTF-8".into()))?;
            let meta = message::raw_member(body, &["_meta"])
                .ok_or_else(|| reader.bad(number, "no `_meta`".into()))?;
            let head = redacted.trim_end().strip_suffix('}').unwrap_or(&redacted);
            let sep = if head.trim_end().ends_with('{') {
                ""
            } else {
                ","
            };
            out.extend_from_slice(format!("{head}{sep}\"_meta\":{meta}}}").as_bytes());
            out.extend_from_slice(&ending);
        }
        if check {
            let mut stdout = std::io::stdout().lock();
            for f in &findings {
                writeln!(stdout, "{}", crate::term::line(f)).map_err(Error::Stdout)?;
            }
            if findings.is_empty() {
                crate::term::eprintln_escaped!(
                    "mcptape: nothing in `{}` looks like a secret",
                    path.display()
                );
                return Ok(Found::default());
            }
            let secrets = findings.len() - possible;
            if secrets > 0 {
                crate::term::eprintln_escaped!(
                    "mcptape: {} value{} in `{}` still look{} like secrets: `mcptape redact` rewrites them",
                    secrets,
                    if secrets == 1 { "" } else { "s" },
                    path.display(),
                    if secrets == 1 { "s" } else { "" }
                );
            }
            if possible > 0 {
                crate::term::eprintln_escaped!(
                    "mcptape: {} value{} in `{}` hold{} possible secrets (high-entropy tokens): review them; --strict fails on them",
                    possible,
                    if possible == 1 { "" } else { "s" },
                    path.display(),
                    if possible == 1 { "s" } else { "" }
                );
            }
            return Ok(Found { secrets, possible });
        }
        if changed > 0 {
            store::replace_file(&path, &out)?;
        }
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

/// A tape recorded with `--no-redact` loses its mark (`params.redaction: "off"` on
/// `$transport/start`) once it is redacted. The member is cut out by its raw span, so
/// the rest of the entry keeps its bytes, whatever its depth.
fn without_off_mark(mut message: String) -> String {
    // `raw_member` reads the last of duplicate keys; each pass removes that one.
    while message::raw_member(&message, &["params", "redaction"]) == Some("\"off\"") {
        match message::remove_member(&message, &["params"], "redaction") {
            Some(cut) => message = cut,
            None => break,
        }
    }
    message
}
