//! Why a live server went away: its exit status (or the signal that killed it) and the
//! last lines of its stderr, for the problem a verify run reports instead of only "closed
//! its output".
//!
//! A server that closed its output (or stopped reading) but did not exit is stopped by
//! mcptape the MCP way ([`crate::process`]): the signal that then ends it is ours, and is
//! said to be. The stderr lines are redacted with the run's rules, as the server's command
//! line is: a report may be shared, and a server may print a credential.

use nix::sys::signal::Signal;

use crate::process::Tail;
use crate::redact::Redactor;
use crate::upstream::Closed;

/// The problem of a server that closed its output or stopped reading before the tape was
/// played: how it ended, then its
/// last stderr lines, one per line (redacted with `redactor`, escaped where printed).
pub(super) async fn said(closed: &Closed, tail: Option<&mut Tail>, redactor: &Redactor) -> String {
    let ended = ended(closed);
    let Some(tail) = tail else {
        return ended;
    };
    let lines = tail.lines().await;
    match lines.len() {
        0 => format!("{ended}; it wrote nothing on stderr"),
        n => {
            let mut out = format!(
                "{ended}; the last {} of its stderr:",
                if n == 1 {
                    "line".to_owned()
                } else {
                    format!("{n} lines")
                }
            );
            for line in lines {
                out.push_str("\n  ");
                out.push_str(&redactor.shown(&line));
            }
            out
        }
    }
}

/// How the server ended: its exit status, the signal that killed it, or mcptape's stop
/// (the link says which signal was its own: [`Closed::Stopped`]).
fn ended(closed: &Closed) -> String {
    use std::os::unix::process::ExitStatusExt;
    match closed {
        Closed::Stopped { by, .. } => format!(
            "the server did not exit by itself: it was stopped by mcptape ({by}) after its grace"
        ),
        Closed::Exited(status) => match (status.code(), status.signal()) {
            (Some(code), _) => format!("the server exited with status {code}"),
            (None, Some(sig)) => match Signal::try_from(sig) {
                Ok(name) => format!("the server was killed by signal {sig} ({name})"),
                Err(_) => format!("the server was killed by signal {sig}"),
            },
            (None, None) => "the server ended".to_owned(),
        },
        _ => "the server ended".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    #[test]
    fn a_signal_mcptape_sent_is_said_to_be_its_own_and_another_is_not() {
        let status = std::process::ExitStatus::from_raw(15);
        let stopped = Closed::Stopped {
            status,
            by: Signal::SIGTERM,
        };
        assert!(
            ended(&stopped).contains("stopped by mcptape (SIGTERM)"),
            "{}",
            ended(&stopped)
        );
        assert_eq!(
            ended(&Closed::Exited(status)),
            "the server was killed by signal 15 (SIGTERM)"
        );
    }

    #[test]
    fn a_stderr_line_is_redacted_like_the_command_line() {
        let r = Redactor::new(&["hunter2-secret-value".to_owned()]);
        let line = r.shown("auth \"failed\" for hunter2-secret-value");
        assert_eq!(line, "auth \"failed\" for [REDACTED]");
    }
}
