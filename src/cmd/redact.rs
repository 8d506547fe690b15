//! `mcptape redact TAPE [--check [--strict]]`: the recording-time redaction, applied to a
//! tape that already exists — or, with `--check`, a report of what still looks like a
//! secret, for pre-commit hooks and CI on committed fixtures. `--check` also reports the
//! possible secrets of [`crate::entropy`], which fail it only with `--strict`.

use std::io::Write;
use std::process::ExitCode;

use crate::cli;
use crate::entropy;
use crate::error::{EXIT_DIFFERENT, Error, Result, TapeError};
use crate::message;
use crate::mode::{self};
use crate::redact::Redactor;
use crate::tape::format;
use crate::tape::store;
use crate::tape::torn;

impl cli::Redact {
    /// Rewrites the tapes, or checks them.
    pub fn run(self) -> Result<ExitCode> {
        let (redactor, warnings) = Redactor::from_env(&|name| std::env::var(name).ok());
        for w in warnings {
            eprintln!("mcptape: warning: {w}");
        }
        let mut dirty = false;
        for session in &self.sessions {
            let found = one(session, &redactor, self.check)?;
            dirty |= found.secrets > 0 || (self.strict && found.possible > 0);
        }
        Ok(ExitCode::from(if dirty { EXIT_DIFFERENT } else { 0 }))
    }
}

/// What `--check` found in one tape: values the rules call secrets, and values holding a
/// possible secret (and nothing the rules saw).
#[derive(Debug, Default, Clone, Copy)]
struct Found {
    secrets: usize,
    possible: usize,
}

/// Redacts (or checks) one tape.
fn one(session: &str, redactor: &Redactor, check: bool) -> Result<Found> {
    {
        let path = mode::session_path(session)?;
        let read_err = |source| TapeError::Read {
            path: path.clone(),
            source,
        };
        let bytes = std::fs::read(&path).map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => TapeError::Missing { path: path.clone() },
            _ => read_err(source),
        })?;
        let bad = |line: usize, reason: String| TapeError::BadLine {
            path: path.clone(),
            line,
            reason,
        };
        // Only a torn line may be cut inside a character.
        let text = torn::text_of(bytes).map_err(|line| bad(line, "not UTF-8".into()))?;
        let mut out = String::with_capacity(text.len());
        let mut findings = Vec::new();
        let mut possible = 0;
        let mut changed = 0;
        let last = text.split_inclusive('\n').count();
        for (i, line) in text.split_inclusive('\n').enumerate() {
            let number = i + 1;
            let body = line.trim_end_matches(['\n', '\r']);
            let ending = &line[body.len()..];
            if body.trim().is_empty() {
                out.push_str(line);
                continue;
            }
            let decoded = match format::decode(body) {
                Ok(d) => d,
                // A torn last line (a crash mid-write) is not an entry: it cannot be
                // checked, and a rewrite leaves it out.
                Err(reason) if number == last && !line.ends_with('\n') => {
                    if check {
                        findings.push(format!(
                            "{}:{number}: (torn last line, cannot be checked: {reason})",
                            path.display()
                        ));
                    } else {
                        eprintln!(
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
                Err(reason) if torn::is_unfinished(body.as_bytes()) => {
                    if check {
                        findings.push(format!(
                            "{}:{number}: (torn line, cannot be checked: {reason})",
                            path.display()
                        ));
                    } else {
                        eprintln!(
                            "mcptape: warning: `{}` line {number}: torn line emptied to `{{` ({reason})",
                            path.display()
                        );
                        out.push('{');
                        out.push_str(ending);
                        changed += 1;
                    }
                    continue;
                }
                Err(reason) => return Err(bad(number, reason).into()),
            };
            if check {
                let found = redactor.findings(&decoded.message);
                for f in &found {
                    findings.push(format!(
                        "{}:{number}: {} ({})",
                        path.display(),
                        f.path,
                        f.rule
                    ));
                }
                for s in entropy::possible_secrets(&decoded.message) {
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
            let mut redacted = redactor.message(&decoded.message).into_owned();
            // A tape recorded with --no-redact loses its mark once it is redacted.
            if decoded.meta.dir == crate::tape::Direction::Lifecycle
                && message::raw_member(&redacted, &["params", "redaction"]) == Some("\"off\"")
            {
                let mut v: serde_json::Value = serde_json::from_str(&redacted).unwrap_or_default();
                if let Some(params) = v.get_mut("params").and_then(|p| p.as_object_mut()) {
                    params.remove("redaction");
                }
                redacted = v.to_string();
            }
            if redacted == decoded.message {
                out.push_str(line);
                continue;
            }
            changed += 1;
            // Keep the `_meta` member exactly as it was; only the message changes.
            let meta = message::raw_member(body, &["_meta"])
                .ok_or_else(|| bad(number, "no `_meta`".into()))?;
            let head = redacted.trim_end().strip_suffix('}').unwrap_or(&redacted);
            let sep = if head.trim_end().ends_with('{') {
                ""
            } else {
                ","
            };
            out.push_str(&format!("{head}{sep}\"_meta\":{meta}}}{ending}"));
        }
        if check {
            let mut stdout = std::io::stdout().lock();
            for f in &findings {
                writeln!(stdout, "{}", crate::term::line(f)).map_err(Error::Stdout)?;
            }
            if findings.is_empty() {
                eprintln!(
                    "mcptape: nothing in `{}` looks like a secret",
                    path.display()
                );
                return Ok(Found::default());
            }
            let secrets = findings.len() - possible;
            if secrets > 0 {
                eprintln!(
                    "mcptape: {} value{} in `{}` still look{} like secrets: `mcptape redact` rewrites them",
                    secrets,
                    if secrets == 1 { "" } else { "s" },
                    path.display(),
                    if secrets == 1 { "s" } else { "" }
                );
            }
            if possible > 0 {
                eprintln!(
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
            store::replace_file(&path, out.as_bytes())?;
        }
        eprintln!(
            "mcptape: redacted {changed} entr{} of `{}`",
            if changed == 1 { "y" } else { "ies" },
            path.display()
        );
        Ok(Found::default())
    }
}
