//! What a verify run actually compared, said loudly when it is nothing: a run whose
//! every request was skipped (a `mcptape call` tape without a `tools/list`, say) or that
//! held no request past the handshake must not pass as a check that found nothing wrong.
//! Why nothing was compared is told from the tape (how many requests it records) and the
//! run (a server that failed to start or went away yields no outcome at all).
//!
//! The warning goes to stderr in every format, onto the text report's summary line, and
//! into the JSON report as a last line of its own; `--fail-on-skip` turns any skipped
//! request (or a run that compared nothing) into exit status 1.

use serde_json::json;

use crate::cli::Format;
use crate::verify::{Class, Played};

/// The counts that tell whether a run checked anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Coverage {
    /// Requests whose answers were compared (same, changed, new-error, gone-error).
    pub compared: usize,
    /// Requests skipped (not played on purpose, or played with no answer to compare).
    pub skipped: usize,
    /// Every recorded request reported.
    pub requests: usize,
    /// The requests past the handshake the tape records for the server.
    pub recorded: usize,
    /// The run could not be completed (the server failed to start, went away, or refused
    /// to initialize).
    pub failed: bool,
}

impl Coverage {
    /// The coverage of `outcomes`, of a tape recording `recorded` requests past the
    /// handshake, in a run that `failed` or not.
    pub fn of(outcomes: &[Played], recorded: usize, failed: bool) -> Coverage {
        let count = |f: fn(Class) -> bool| outcomes.iter().filter(|o| f(o.class)).count();
        Coverage {
            compared: count(|c| c == Class::Same || c.is_difference()),
            skipped: count(|c| c == Class::Skipped),
            requests: outcomes.len(),
            recorded,
            failed,
        }
    }

    /// The warning when nothing was compared, as one sentence.
    pub fn warning(&self) -> Option<String> {
        if self.compared > 0 {
            return None;
        }
        if self.recorded == 0 {
            return Some(
                "nothing was compared: the tape holds no request past the handshake".into(),
            );
        }
        if self.failed {
            return Some(format!(
                "nothing was compared: the server failed (see the run's problems); the tape holds {}",
                requests(self.recorded)
            ));
        }
        Some(match (self.requests, self.skipped) {
            (0, _) => format!(
                "nothing was compared: none of {} was played",
                requests(self.recorded)
            ),
            (n, s) if s == n => format!(
                "nothing was compared: {} skipped (a tools/call is played only when the tape's tools/list marks its tool readOnlyHint: true; --allow-writes plays the others)",
                requests(n)
            ),
            (n, _) => format!(
                "nothing was compared: none of {} could be compared",
                requests(n)
            ),
        })
    }

    /// Whether `--fail-on-skip` fails this run.
    pub fn fails_on_skip(&self) -> bool {
        self.skipped > 0 || self.compared == 0
    }
}

fn requests(n: usize) -> String {
    format!("{n} recorded request{}", if n == 1 { "" } else { "s" })
}

/// The report with the warning in it: appended to the text report's first line (its
/// summary), or as a last JSON line `{"warning": …, "compared": 0, …}`. JUnit already
/// counts its skipped cases; the github report gains a `::warning` before its last line,
/// the `::notice` with the counts.
pub(super) fn amend(format: Format, report: String, coverage: &Coverage) -> String {
    let Some(warning) = coverage.warning() else {
        return report;
    };
    match format {
        Format::Text => match report.split_once('\n') {
            Some((summary, rest)) => format!("{summary}; WARNING: {warning}\n{rest}"),
            None => format!("{report}; WARNING: {warning}\n"),
        },
        Format::Json => {
            let line = json!({
                "warning": warning,
                "compared": coverage.compared,
                "skipped": coverage.skipped,
                "requests": coverage.requests,
            });
            format!("{report}{line}\n")
        }
        Format::Junit => report,
        Format::Github => {
            let note = crate::github::Annotation::new(crate::github::Level::Warning, warning)
                .titled("mcptape verify: nothing compared");
            // The `::notice` with the counts stays last.
            let body = report.strip_suffix('\n').unwrap_or(&report);
            match body.rsplit_once('\n') {
                Some((before, last)) if last.starts_with("::notice") => {
                    format!("{before}\n{note}\n{last}\n")
                }
                None if body.starts_with("::notice") => format!("{note}\n{body}\n"),
                _ => format!("{report}{note}\n"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cov(compared: usize, skipped: usize, requests: usize) -> Coverage {
        Coverage {
            compared,
            skipped,
            requests,
            recorded: requests,
            failed: false,
        }
    }

    #[test]
    fn a_failed_server_is_the_reason_and_not_an_empty_tape() {
        let failed = Coverage {
            failed: true,
            recorded: 4,
            ..cov(0, 0, 0)
        };
        assert_eq!(
            failed.warning().as_deref(),
            Some(
                "nothing was compared: the server failed (see the run's problems); the tape holds 4 recorded requests"
            )
        );
    }

    #[test]
    fn the_github_warning_comes_before_the_notice_with_the_counts() {
        let report = "::warning file=t::skipped\n::notice file=t::0 same\n".to_owned();
        let out = amend(Format::Github, report, &cov(0, 1, 1));
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3, "{out}");
        assert!(lines[1].starts_with("::warning") && lines[1].contains("nothing compared"));
        assert!(lines[2].starts_with("::notice"), "{out}");
        let only = amend(Format::Github, "::notice::0 same\n".into(), &cov(0, 0, 0));
        assert!(only.ends_with("\n::notice::0 same\n"), "{only}");
    }

    #[test]
    fn a_run_that_compared_something_is_not_warned_about() {
        assert_eq!(cov(1, 1, 2).warning(), None);
        assert_eq!(
            amend(Format::Text, "a\nb\n".into(), &cov(1, 0, 1)),
            "a\nb\n"
        );
        assert!(cov(1, 1, 2).fails_on_skip());
        assert!(!cov(2, 0, 2).fails_on_skip());
    }

    #[test]
    fn a_run_that_compared_nothing_says_so_on_its_summary_line_and_in_json() {
        let all_skipped = cov(0, 2, 2);
        let text = amend(
            Format::Text,
            "verify x: 0 same, 2 skipped\nskipped …\n".into(),
            &all_skipped,
        );
        assert!(
            text.starts_with("verify x: 0 same, 2 skipped; WARNING: nothing was compared: 2 recorded requests skipped"),
            "{text}"
        );
        assert!(text.ends_with("\nskipped …\n"), "{text}");
        let json = amend(Format::Json, String::new(), &all_skipped);
        let v: serde_json::Value = serde_json::from_str(json.trim()).expect("one JSON line");
        assert_eq!(v["compared"], 0);
        assert_eq!(v["skipped"], 2);
        assert!(all_skipped.fails_on_skip());
        let none = cov(0, 0, 0);
        assert_eq!(
            none.warning().as_deref(),
            Some("nothing was compared: the tape holds no request past the handshake")
        );
        assert!(none.fails_on_skip());
    }
}
