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

    /// The JSON report's last line when nothing was compared: `{"warning": …,
    /// "compared": 0, …}` (every other line is one call).
    pub fn json_line(&self) -> Option<String> {
        self.warning().map(|warning| {
            json!({
                "warning": warning,
                "compared": self.compared,
                "skipped": self.skipped,
                "requests": self.requests,
            })
            .to_string()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Format;
    use crate::cmd::verify::report::{Ran, render};
    use crate::style::Paint;

    /// The report of a run that played nothing, in `format`.
    fn rendered(format: Format, coverage: &Coverage) -> String {
        let ran = Ran {
            tape: std::path::Path::new("t"),
            server: "x",
            command: "srv",
            conns: &[],
            coverage,
        };
        render(format, Paint::PLAIN, &ran, &[], &[])
    }

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
        let out = rendered(Format::Github, &cov(0, 1, 1));
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2, "{out}");
        assert!(lines[0].starts_with("::warning") && lines[0].contains("nothing compared"));
        assert!(lines[1].starts_with("::notice"), "{out}");
    }

    #[test]
    fn a_run_that_compared_something_is_not_warned_about() {
        assert_eq!(cov(1, 1, 2).warning(), None);
        assert!(!rendered(Format::Text, &cov(1, 0, 1)).contains("WARNING"));
        assert_eq!(cov(1, 0, 1).json_line(), None);
        assert!(cov(1, 1, 2).fails_on_skip());
        assert!(!cov(2, 0, 2).fails_on_skip());
    }

    #[test]
    fn a_run_that_compared_nothing_says_so_on_its_summary_line_and_in_json() {
        let all_skipped = cov(0, 2, 2);
        let text = rendered(Format::Text, &all_skipped);
        assert!(
            text.starts_with("verify `t` (server `x`) against `srv`: 0 same, 0 changed; WARNING: nothing was compared: 2 recorded requests skipped"),
            "{text}"
        );
        assert_eq!(text.lines().count(), 1, "{text}");
        let json = rendered(Format::Json, &all_skipped);
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
