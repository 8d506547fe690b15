//! `mcptape redact TAPE [--check]`: the recording-time redaction, applied to a tape that
//! already exists — or, with `--check`, a report of what still looks like a secret, for
//! pre-commit hooks and CI on committed fixtures.

use std::io::Write;
use std::process::ExitCode;

use crate::cli;
use crate::error::{EXIT_DIFFERENT, Error, Result, TapeError};
use crate::message;
use crate::mode::{self, ENV_HOME};
use crate::redact::Redactor;
use crate::tape::format;
use crate::tape::store;

impl cli::Redact {
    /// Rewrites the tapes, or checks them.
    pub fn run(self) -> Result<ExitCode> {
        let (redactor, warnings) = Redactor::from_env(&|name| std::env::var(name).ok());
        for w in warnings {
            eprintln!("mcptape: warning: {w}");
        }
        let mut dirty = false;
        for session in &self.sessions {
            dirty |= one(session, &redactor, self.check)?;
        }
        Ok(ExitCode::from(if dirty { EXIT_DIFFERENT } else { 0 }))
    }
}

/// Redacts (or checks) one tape; true when `--check` found something.
fn one(session: &str, redactor: &Redactor, check: bool) -> Result<bool> {
    {
        let own = mode::own();
        let home = store::home(own.get(ENV_HOME))?;
        let path = store::resolve(session, &home, &own.cwd)?;
        let read_err = |source| TapeError::Read {
            path: path.clone(),
            source,
        };
        let text = std::fs::read_to_string(&path).map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => TapeError::Missing { path: path.clone() },
            _ => read_err(source),
        })?;
        let bad = |line: usize, reason: String| TapeError::BadLine {
            path: path.clone(),
            line,
            reason,
        };
        let mut out = String::with_capacity(text.len());
        let mut findings = Vec::new();
        let mut changed = 0;
        for (i, line) in text.split_inclusive('\n').enumerate() {
            let number = i + 1;
            let body = line.trim_end_matches(['\n', '\r']);
            if body.trim().is_empty() {
                out.push_str(line);
                continue;
            }
            let decoded = format::decode(body).map_err(|reason| bad(number, reason))?;
            if check {
                for f in redactor.findings(&decoded.message) {
                    findings.push(format!(
                        "{}:{number}: {} ({})",
                        path.display(),
                        f.path,
                        f.rule
                    ));
                }
                continue;
            }
            let redacted = redactor.message(&decoded.message);
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
            out.push_str(&format!("{head}{sep}\"_meta\":{meta}}}\n"));
        }
        if check {
            let mut stdout = std::io::stdout().lock();
            for f in &findings {
                writeln!(stdout, "{f}").map_err(Error::Stdout)?;
            }
            if findings.is_empty() {
                eprintln!(
                    "mcptape: nothing in `{}` looks like a secret",
                    path.display()
                );
                return Ok(false);
            }
            eprintln!(
                "mcptape: {} value{} in `{}` still look{} like secrets: `mcptape redact` rewrites them",
                findings.len(),
                if findings.len() == 1 { "" } else { "s" },
                path.display(),
                if findings.len() == 1 { "s" } else { "" }
            );
            return Ok(true);
        }
        if changed > 0 {
            store::replace_file(&path, out.as_bytes())?;
        }
        eprintln!(
            "mcptape: redacted {changed} entr{} of `{}`",
            if changed == 1 { "y" } else { "ies" },
            path.display()
        );
        Ok(false)
    }
}
