//! Why a live server went away: its exit status (or the signal that killed it) and the
//! last lines of its stderr, for the problem a verify run reports instead of only "closed
//! its output".

use nix::sys::signal::Signal;

use crate::process::Tail;
use crate::upstream::Closed;

/// The problem of a server that closed its output or stopped reading before the tape was
/// played: how it ended, then its last stderr lines, one per line (escaped where printed).
pub(super) async fn said(closed: &Closed, tail: Option<&mut Tail>) -> String {
    use std::os::unix::process::ExitStatusExt;
    let ended = match closed {
        Closed::Exited(status) => match (status.code(), status.signal()) {
            (Some(code), _) => format!("the server exited with status {code}"),
            (None, Some(sig)) => match Signal::try_from(sig) {
                Ok(name) => format!("the server was killed by signal {sig} ({name})"),
                Err(_) => format!("the server was killed by signal {sig}"),
            },
            (None, None) => "the server ended".to_owned(),
        },
        _ => "the server ended".to_owned(),
    };
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
                out.push_str(&line);
            }
            out
        }
    }
}
