//! `redact --check`: what still looks like a secret, and its three reports.
//!
//! - `text`: `FILE:LINE: JSON.PATH (RULE)` per finding on stdout, the sums on stderr, tape
//!   after tape;
//! - `json`: one document on stdout once every tape is read, for scripts: `findings`
//!   (`file`, `line`, `path`, `rule`, `possible`) and a `summary` — printed too when a
//!   tape cannot be read, with what was checked before it and the tape's `errors`;
//! - `github`: a workflow command per finding ([`crate::github`]): `::error` at its file
//!   and line, `::warning` for a possible secret (an `::error` with `--strict`), the sums
//!   on stderr as with text.
//!
//! A torn line cannot be checked: it is a finding with no path, rule `torn line` (or
//! `torn last line`), and fails the check like a secret.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::json;

use crate::cli::CheckFormat;
use crate::error::{Error, Result};
use crate::github::{Annotation, Level};
use crate::redact::Redactor;
use crate::redact::entropy;

/// What a finding is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum What {
    /// A value a redaction rule calls a secret.
    Secret { path: String, rule: String },
    /// A value holding a high-entropy token, which no rule saw.
    Possible { path: String },
    /// A torn line, which cannot be checked.
    Torn { last: bool, reason: String },
}

/// One finding: where, and what.
#[derive(Debug, Clone, Serialize)]
pub(super) struct Finding {
    /// The tape.
    file: PathBuf,
    /// Its line, 1-based.
    line: usize,
    /// The JSON path of the value (none for a torn line).
    path: Option<String>,
    /// The rule that saw it: a redaction rule, `possible secret`, `torn line`.
    rule: String,
    /// True for a possible secret (a high-entropy token), which fails only with --strict.
    possible: bool,
    /// Why a torn line cannot be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

impl Finding {
    fn new(file: &Path, line: usize, what: What) -> Finding {
        let (path, rule, possible, reason) = match what {
            What::Secret { path, rule } => (Some(path), rule, false, None),
            What::Possible { path } => (Some(path), "possible secret".to_owned(), true, None),
            What::Torn { last, reason } => {
                let rule = if last { "torn last line" } else { "torn line" };
                (None, rule.to_owned(), false, Some(reason))
            }
        };
        Finding {
            file: file.to_path_buf(),
            line,
            path,
            rule,
            possible,
            reason,
        }
    }

    /// The text report's line: `FILE:LINE: JSON.PATH (RULE)`.
    fn text(&self) -> String {
        let at = format!("{}:{}", self.file.display(), self.line);
        match (&self.path, &self.reason) {
            (Some(path), _) => format!("{at}: {path} ({})", self.rule),
            (None, reason) => format!(
                "{at}: ({}, cannot be checked: {})",
                self.rule,
                reason.as_deref().unwrap_or("")
            ),
        }
    }

    /// The GitHub annotation.
    fn annotation(&self, strict: bool) -> Annotation {
        let level = if self.possible && !strict {
            Level::Warning
        } else {
            Level::Error
        };
        let message = match (&self.path, &self.reason) {
            (Some(path), _) if self.possible => {
                format!("`{path}` holds a possible secret (a high-entropy token): review it")
            }
            (Some(path), _) => format!(
                "`{path}` still looks like a secret ({}): `mcptape redact` rewrites it",
                self.rule
            ),
            (None, reason) => format!(
                "{}: cannot be checked: {}",
                self.rule,
                reason.as_deref().unwrap_or("")
            ),
        };
        Annotation::new(level, message)
            .at(&self.file, Some(self.line))
            .titled(format!("mcptape redact: {}", self.rule))
    }
}

/// What `--check` has found in one tape so far.
#[derive(Debug, Default)]
pub(super) struct Checked {
    findings: Vec<Finding>,
}

/// What `--check` found in one tape: values the rules call secrets (and torn lines), and
/// values holding a possible secret (and nothing the rules saw).
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Found {
    /// Findings that fail the check.
    pub secrets: usize,
    /// Possible secrets, which fail it only with --strict.
    pub possible: usize,
}

impl Checked {
    /// A torn line (a crash mid-write) is not an entry: it cannot be checked.
    pub(super) fn torn(&mut self, path: &Path, number: usize, terminated: bool, reason: &str) {
        let what = What::Torn {
            last: !terminated,
            reason: reason.to_owned(),
        };
        self.findings.push(Finding::new(path, number, what));
    }

    /// The values of an entry that the rules call secrets, then the possible secrets
    /// among the rest; and a lifecycle entry's mark of a recording made with `--no-redact`
    /// (`params.redaction: "off"`), which fails the check too: the rules' shapes are all
    /// `--check` can see, and such a tape kept everything else as it was.
    pub(super) fn entry(
        &mut self,
        path: &Path,
        number: usize,
        redactor: &Redactor,
        message: &str,
        lifecycle: bool,
    ) {
        if lifecycle && super::is_off_mark(message) {
            let what = What::Secret {
                path: "params.redaction".to_owned(),
                rule: "recorded with --no-redact: nothing here was redacted".to_owned(),
            };
            self.findings.push(Finding::new(path, number, what));
        }
        let found = redactor.findings(message);
        for f in &found {
            let what = What::Secret {
                path: f.path.clone(),
                rule: f.rule.to_string(),
            };
            self.findings.push(Finding::new(path, number, what));
        }
        for s in entropy::possible_secrets(message) {
            if !found.iter().any(|f| f.path == s.path) {
                let what = What::Possible { path: s.path };
                self.findings.push(Finding::new(path, number, what));
            }
        }
    }

    fn found(&self) -> Found {
        let possible = self.findings.iter().filter(|f| f.possible).count();
        Found {
            secrets: self.findings.len() - possible,
            possible,
        }
    }
}

/// The report of a `--check` run over every tape named.
pub(super) struct Report {
    format: CheckFormat,
    strict: bool,
    /// For `json`: every tape's findings, printed at the end.
    all: Vec<Finding>,
    tapes: usize,
    /// For `json`: the tape that could not be checked, and why (the run stops there).
    errors: Vec<serde_json::Value>,
}

impl Report {
    /// A report in `format`.
    pub(super) fn new(format: CheckFormat, strict: bool) -> Report {
        Report {
            format,
            strict,
            all: Vec::new(),
            tapes: 0,
            errors: Vec::new(),
        }
    }

    /// Notes that the tape named `session` could not be checked, for the json document.
    pub(super) fn failed(&mut self, session: &str, error: &Error) {
        self.errors.push(json!({
            "file": session,
            "error": crate::error::chain(error),
        }));
    }

    /// Reports one tape's findings (text and github at once, json at [`Self::finish`]).
    pub(super) fn tape(&mut self, path: &Path, checked: Checked) -> Result<Found> {
        let found = checked.found();
        self.tapes += 1;
        let lines: String = match self.format {
            CheckFormat::Json => {
                self.all.extend(checked.findings);
                sums(path, found);
                return Ok(found);
            }
            CheckFormat::Text => checked
                .findings
                .iter()
                .map(|f| format!("{}\n", crate::term::line(&f.text())))
                .collect(),
            CheckFormat::Github => checked
                .findings
                .iter()
                .map(|f| format!("{}\n", f.annotation(self.strict)))
                .collect(),
        };
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(lines.as_bytes()).map_err(Error::Stdout)?;
        sums(path, found);
        Ok(found)
    }

    /// Prints the JSON document, when that is the format.
    pub(super) fn finish(self) -> Result<()> {
        if self.format != CheckFormat::Json {
            return Ok(());
        }
        let secrets = self.all.iter().filter(|f| !f.possible).count();
        let possible = self.all.len() - secrets;
        let mut doc = json!({
            "findings": self.all,
            "summary": {
                "tapes": self.tapes,
                "secrets": secrets,
                "possible": possible,
                "strict": self.strict,
                "clean": secrets == 0 && (possible == 0 || !self.strict),
            },
        });
        if !self.errors.is_empty() {
            doc["errors"] = serde_json::Value::Array(self.errors);
        }
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{}", crate::term::json_pretty(&doc)).map_err(Error::Stdout)
    }
}

/// What a tape's findings add up to, on stderr.
fn sums(path: &Path, found: Found) {
    let Found { secrets, possible } = found;
    if secrets + possible == 0 {
        crate::term::eprintln_escaped!(
            "mcptape: nothing in `{}` looks like a secret",
            path.display()
        );
    }
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
}
