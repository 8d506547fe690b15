//! What a command came to, and the one place that turns it into the process's exit status.
//!
//! Every `cmd::*::run` returns `Result<Outcome>`. [`exit`] maps either side through its
//! table — [`Outcome::exit_code`] and [`Error::exit_code`], side by side here — and prints
//! an error through the one printer, [`report`]. The exit-status table (docs/reference.md) is these
//! two tables.
//!
//! The printing rule: an error that ends a command goes through [`report`]
//! (`error: …`, then one `caused by: …` per source); so does an error a command reports
//! before it goes on to close what it opened ([`print`]). A problem a proxy or a
//! `record`/`replay` parent finds and files while the session goes on is one line,
//! `mcptape: error: …` ([`problem`]): it lands in the middle of a client's stderr, so it
//! says whose it is. Everything printed is escaped ([`crate::term::line`]): messages
//! quote tapes and servers.

use std::process::ExitCode;

use crate::error::{
    EXIT_DIFFERENT, EXIT_NOT_EXECUTABLE, EXIT_NOT_FOUND, EXIT_OK, EXIT_TAPE, EXIT_TIMEOUT,
    EXIT_USAGE, Error, ProcessError, TapeError,
};

/// What a command came to, when it did not end in an [`Error`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "an outcome decides the exit status"]
pub enum Outcome {
    /// It did what was asked.
    Ok,
    /// Only help or the version was printed.
    Help,
    /// `verify` found an answer that changed, errors now, or stopped erroring; `diff`
    /// found a change `--fail-on` names; a `check` rule failed; `commitments` found a
    /// mismatch.
    Differences,
    /// `redact --check` found something that still looks like a secret.
    SecretsLeft,
    /// `call`/`tools`: the server refused, answered an error, or failed; or the tool
    /// answered `isError: true`.
    Failed,
    /// A replay diverged, left recorded messages unsent, or a recorded connection was
    /// never used.
    Diverged,
    /// A recording could not be written whole (refused, cut by a write error or a
    /// writer crash, or stopped at `--max-bytes`).
    RecordingIncomplete,
    /// `verify`: the run could not be completed (the server failed to start or went
    /// away, the tape is unreadable).
    Unfinished,
    /// `call`/`tools`: no answer within `--timeout`.
    Timeout,
    /// A wrapped command or a child server exited with this status (passed through).
    Exited(u8),
    /// A wrapped command or a child server was killed by this signal (passed through
    /// as 128+N).
    Signaled(i32),
}

impl Outcome {
    /// The exit status: the table in docs/reference.md, with [`Error::exit_code`].
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Ok | Outcome::Help => EXIT_OK,
            Outcome::Differences | Outcome::SecretsLeft | Outcome::Failed => EXIT_DIFFERENT,
            Outcome::Diverged | Outcome::RecordingIncomplete | Outcome::Unfinished => EXIT_TAPE,
            Outcome::Timeout => EXIT_TIMEOUT,
            Outcome::Exited(code) => code,
            Outcome::Signaled(signal) => 128u8.wrapping_add(signal as u8),
        }
    }

    /// A child's status as a wrapper passes it on: 0 is [`Outcome::Ok`].
    pub fn exited(code: u8) -> Outcome {
        match code {
            EXIT_OK => Outcome::Ok,
            code => Outcome::Exited(code),
        }
    }

    /// A child's exit status: its code, or the signal that killed it.
    pub fn of_status(status: std::process::ExitStatus) -> Outcome {
        use std::os::unix::process::ExitStatusExt;
        match (status.code(), status.signal()) {
            (Some(code), _) => Outcome::exited(code as u8),
            (None, Some(signal)) => Outcome::Signaled(signal),
            (None, None) => Outcome::Exited(1),
        }
    }

    /// True when the exit status is 0.
    pub fn is_success(self) -> bool {
        self.exit_code() == EXIT_OK
    }

    /// This outcome, except that a success becomes [`Outcome::RecordingIncomplete`]
    /// when the recording is not whole: a server's own failure says more.
    pub fn recorded(self, whole: bool) -> Outcome {
        if whole || !self.is_success() {
            self
        } else {
            Outcome::RecordingIncomplete
        }
    }

    /// The graver of two outcomes: the one with the higher exit status (a timeout, 124,
    /// outranks an incomplete recording, 3, which outranks a failed tool, 1).
    pub fn max(self, other: Outcome) -> Outcome {
        if other.exit_code() > self.exit_code() {
            other
        } else {
            self
        }
    }

    /// This outcome, or [`Outcome::Diverged`] when a replay failed: a divergence
    /// outranks whatever the client or the server did after it.
    pub fn replayed(self, ok: bool) -> Outcome {
        if ok { self } else { Outcome::Diverged }
    }
}

impl Error {
    /// The exit status this error ends the process with: the table in docs/reference.md, with
    /// [`Outcome::exit_code`].
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Tape(
                TapeError::Write { .. } | TapeError::Full { .. } | TapeError::WriterPanicked { .. },
            ) => EXIT_TAPE,
            Error::Tape(_) | Error::Usage(_) | Error::Config(_) | Error::Io { .. } => EXIT_USAGE,
            Error::Cli(_) => EXIT_USAGE,
            Error::Import(_) => EXIT_USAGE,
            Error::Approval(_) => EXIT_USAGE,
            Error::Diff(_) => EXIT_USAGE,
            Error::Client(_) => EXIT_DIFFERENT,
            Error::Agent(e) if e.is_usage() => EXIT_USAGE,
            Error::Agent(_) => EXIT_DIFFERENT,
            Error::Process(ProcessError::Spawn { source, .. }) => match source.kind() {
                std::io::ErrorKind::NotFound => EXIT_NOT_FOUND,
                _ => EXIT_NOT_EXECUTABLE,
            },
            _ if self.is_broken_pipe() => EXIT_OK,
            Error::Process(_) | Error::Stdout(_) => EXIT_USAGE,
        }
    }

    /// True when the error is only that the reader of our stdout went away: the command
    /// ends quietly, as `head` expects.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Error::Stdout(e) if e.kind() == std::io::ErrorKind::BrokenPipe)
    }
}

/// What clap's refusal to parse comes to: help or the version, printed on stdout (an
/// outcome), or a usage error. A command line that forgot `--` before the command it
/// runs is told so, with the corrected line ([`crate::usage`]).
pub fn parse_failed(err: clap::Error) -> Result<Outcome, Error> {
    // The parse failed, so `--color` is read from the raw arguments for clap's own text.
    crate::style::init(crate::style::scan_args(std::env::args_os()));
    if err.use_stderr() {
        let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
        // clap reads some `MCPTAPE_*` variables as flags' values and then says only
        // "invalid UTF-8": name the variable.
        if err.kind() == clap::error::ErrorKind::InvalidUtf8 {
            crate::mode::own()?;
        }
        if let Some(hint) = crate::usage::missing_dashdash(&args, &err) {
            return Err(Error::Usage(hint));
        }
        return Err(Error::Cli(crate::usage::escaped_refusal(&args, err)));
    }
    crate::style::print_clap(&err);
    Ok(Outcome::Help)
}

/// The one place that decides the exit status: an outcome through its table, an error
/// through [`report`] and its table.
pub fn exit(result: Result<Outcome, Error>) -> ExitCode {
    ExitCode::from(match result {
        Ok(outcome) => outcome.exit_code(),
        Err(err) => {
            report(&err);
            err.exit_code()
        }
    })
}

/// Prints an error that ends a command on stderr (nothing for a closed stdout; clap's
/// own errors in clap's words).
pub fn report(err: &Error) {
    match err {
        _ if err.is_broken_pipe() => {}
        Error::Cli(e) => crate::style::print_clap(e),
        _ => print(err),
    }
}

/// The one error format: `error: …` and one `caused by: …` per source, each one line,
/// control characters escaped.
pub fn print(err: &dyn std::error::Error) {
    let text = format(err);
    crate::progress::suspend(|| eprint!("{text}"));
}

/// The text [`print`] prints.
pub fn format(err: &dyn std::error::Error) -> String {
    let mut out = format!("error: {}\n", crate::term::line(&err.to_string()));
    let mut source = err.source();
    while let Some(cause) = source {
        out.push_str(&format!(
            "caused by: {}\n",
            crate::term::line(&cause.to_string())
        ));
        source = cause.source();
    }
    out
}

/// Prints a problem a proxy (or a `record`/`replay` parent) found while the session goes
/// on: `mcptape: error: …`, one escaped line.
pub fn problem(text: &str) {
    crate::term::eprintln_escaped!("mcptape: error: {text}");
}

#[cfg(test)]
mod tests;
