//! Every child process mcptape starts: spawning, stopping, exit statuses, signals.
//!
//! A server runs in its own process group, so that a stop reaches what it started too
//! (`npx` → `node`), and with `PR_SET_PDEATHSIG` on Linux, so that it dies if its proxy
//! is killed outright. It is stopped the MCP way
//! (<https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#stdio>):
//! close its stdin, wait [`STDIN_CLOSE_GRACE`] (only [`GAVE_UP_GRACE`] after a client's
//! timeout), SIGTERM the group, wait [`SIGTERM_GRACE`], SIGKILL the group.

use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::process::{Child, Command};
use tokio::signal::unix::{SignalKind, signal};

use crate::error::ProcessError;

mod tail;

pub use tail::Tail;

/// How long a server may take to exit after its stdin is closed before it gets SIGTERM.
pub const STDIN_CLOSE_GRACE: Duration = Duration::from_secs(2);
/// How long a server may take to exit after SIGTERM before it gets SIGKILL.
pub const SIGTERM_GRACE: Duration = Duration::from_secs(2);
/// How long a server the client gave up on (`call --timeout`) may take to exit after its
/// stdin is closed before it gets SIGTERM: it was already waited for as long as the user
/// allowed, and one that reads its stdin exits within it.
pub const GAVE_UP_GRACE: Duration = Duration::from_millis(100);

/// A command line as errors show it: [`display`], with its credentials redacted (the
/// value after a credential-named flag, `user:password@`, key shapes, `MCPTAPE_REDACT`
/// values): a config's `${TOKEN}` expands into the argv, and errors are printed and
/// reported.
pub fn shown(display: &str) -> String {
    crate::redact::Redactor::for_messages().shown(display)
}

/// [`shown`] of an argv, each credential-named flag's value redacted too.
fn shown_argv(argv: &[String]) -> String {
    crate::redact::Redactor::for_messages().shown_command(argv)
}

/// The command line as one readable string, for messages.
pub fn display(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if a.is_empty() || a.contains(|c: char| c.is_whitespace() || c == '\'' || c == '"') {
                format!("'{}'", a.replace('\'', r"'\''"))
            } else {
                a.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A server process with piped stdin and stdout, stderr passed through.
pub struct Server {
    /// The tokio child (stdin/stdout are taken by the relay).
    pub child: Child,
    /// Its process id, which is also its process group id.
    pub pid: u32,
    /// The command line as given; messages show it through [`Server::shown`].
    argv: Vec<String>,
}

/// Starts a server: own process group, piped stdin/stdout, inherited stderr, our
/// environment plus `env`, in `cwd` if given.
pub fn spawn_server(
    argv: &[String],
    env: &[(String, String)],
    cwd: Option<&std::path::Path>,
) -> Result<Server, ProcessError> {
    spawn(argv, env, cwd, Stdio::inherit())
}

/// Starts a server as [`spawn_server`] does, but with its stderr relayed to ours through a
/// [`Tail`] that keeps its last lines (for `verify`, which says why a server failed).
pub fn spawn_server_tailed(
    argv: &[String],
    env: &[(String, String)],
    cwd: Option<&std::path::Path>,
) -> Result<(Server, Tail), ProcessError> {
    let mut server = spawn(argv, env, cwd, Stdio::piped())?;
    let stderr = server.child.stderr.take().expect("stderr is piped");
    Ok((server, Tail::relay(stderr)))
}

fn spawn(
    argv: &[String],
    env: &[(String, String)],
    cwd: Option<&std::path::Path>,
    stderr: Stdio,
) -> Result<Server, ProcessError> {
    // Redacted only when an error needs it: a proxy's start stays off the redactor.
    let (program, args) = argv.split_first().ok_or_else(|| ProcessError::Spawn {
        command: shown_argv(argv),
        source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "empty command"),
    })?;
    let mut cmd = Command::new(program);
    cmd.args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .process_group(0)
        .kill_on_drop(true);
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    die_with_parent(&mut cmd);
    let child = cmd.spawn().map_err(|source| ProcessError::Spawn {
        command: shown_argv(argv),
        source,
    })?;
    let pid = child.id().ok_or_else(|| ProcessError::Spawn {
        command: shown_argv(argv),
        source: std::io::Error::other("the process exited before it could be watched"),
    })?;
    Ok(Server {
        child,
        pid,
        argv: argv.to_vec(),
    })
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn die_with_parent(cmd: &mut Command) {
    let parent = std::process::id();
    // SAFETY: the closure runs between fork and exec and only makes two syscalls
    // (prctl, getppid) and possibly raise(): all async-signal-safe, no allocation.
    unsafe {
        cmd.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(std::io::Error::from)?;
            // The parent may have died before prctl took effect.
            if nix::unistd::getppid().as_raw() as u32 != parent {
                let _ = nix::sys::signal::raise(Signal::SIGKILL);
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_cmd: &mut Command) {}

impl Server {
    /// Sends a signal to the server's whole process group (a group already gone is fine).
    pub fn signal(&self, signal: Signal) {
        let _ = killpg(Pid::from_raw(self.pid as i32), signal);
    }

    /// The command line as messages show it, its credentials redacted.
    pub fn shown(&self) -> String {
        shown_argv(&self.argv)
    }

    /// Waits for the server to exit, escalating SIGTERM then SIGKILL after the graces.
    /// Call after its stdin is closed (or when it should go regardless).
    pub async fn stop(&mut self) -> Result<ExitStatus, ProcessError> {
        let argv = &self.argv;
        let wait_err = |source| ProcessError::Wait {
            command: shown_argv(argv),
            source,
        };
        if let Ok(status) = tokio::time::timeout(STDIN_CLOSE_GRACE, self.child.wait()).await {
            return status.map_err(wait_err);
        }
        self.signal(Signal::SIGTERM);
        if let Ok(status) = tokio::time::timeout(SIGTERM_GRACE, self.child.wait()).await {
            return status.map_err(wait_err);
        }
        self.signal(Signal::SIGKILL);
        self.child.wait().await.map_err(wait_err)
    }
}

/// True when we run in the foreground process group of a terminal, where the terminal's
/// SIGINT reaches the whole group.
fn in_terminal_foreground() -> bool {
    nix::unistd::tcgetpgrp(std::io::stdin()).is_ok_and(|fg| fg == nix::unistd::getpgrp())
}

/// The exit status a wrapper passes on: the code, or 128+N when killed by signal N (the
/// table of [`crate::outcome`]).
pub fn exit_code(status: ExitStatus) -> u8 {
    crate::outcome::Outcome::of_status(status).exit_code()
}

/// The signals a proxy passes on to its server: SIGTERM, SIGHUP, and SIGINT (the server
/// runs in its own process group, so a terminal's Ctrl-C does not reach it directly).
pub struct Signals {
    term: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
}

impl Signals {
    /// Starts listening (from then on these signals no longer kill us).
    pub fn new() -> Result<Self, ProcessError> {
        let on = |kind| signal(kind).map_err(ProcessError::Signals);
        Ok(Signals {
            term: on(SignalKind::terminate())?,
            hup: on(SignalKind::hangup())?,
            int: on(SignalKind::interrupt())?,
        })
    }

    /// The next signal received.
    pub async fn recv(&mut self) -> Signal {
        tokio::select! {
            _ = self.term.recv() => Signal::SIGTERM,
            _ = self.hup.recv() => Signal::SIGHUP,
            _ = self.int.recv() => Signal::SIGINT,
        }
    }
}

/// Runs a wrapped command (in our process group, so a terminal's Ctrl-C reaches it
/// directly) to completion, passing SIGTERM and SIGHUP on; returns its exit status.
pub fn run_wrapped(
    mut cmd: tokio::process::Command,
    display: &str,
) -> Result<ExitStatus, ProcessError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ProcessError::Signals)?;
    let status = runtime.block_on(async {
        let on = |kind| signal(kind).map_err(ProcessError::Signals);
        let (mut term, mut hup, mut int) = (
            on(SignalKind::terminate())?,
            on(SignalKind::hangup())?,
            on(SignalKind::interrupt())?,
        );
        let mut child = cmd.spawn().map_err(|source| ProcessError::Spawn {
            command: shown(display),
            source,
        })?;
        let pid = child.id().map(|p| Pid::from_raw(p as i32));
        let forward = |sig| {
            if let Some(pid) = pid {
                let _ = nix::sys::signal::kill(pid, sig);
            }
        };
        loop {
            tokio::select! {
                status = child.wait() => {
                    return status.map_err(|source| ProcessError::Wait { command: shown(display), source });
                }
                _ = term.recv() => forward(Signal::SIGTERM),
                _ = hup.recv() => forward(Signal::SIGHUP),
                // A terminal's Ctrl-C reached CMD too (same foreground process group): wait
                // for it. A SIGINT sent to us alone (kill, timeout -s INT) is passed on.
                _ = int.recv() => if !in_terminal_foreground() { forward(Signal::SIGINT) },
            }
        }
    });
    runtime.shutdown_background();
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_quotes_what_needs_it() {
        let argv = ["sh", "-c", "echo 'a b'", ""].map(String::from);
        assert_eq!(display(&argv), r#"sh -c 'echo '\''a b'\''' ''"#);
    }
}
