//! `mcptape proxy`: sits between a client (our stdin/stdout) and a stdio server (a child),
//! forwards every byte unchanged, and records when a mode says so.
//!
//! One `select!` loop owns the connection: the two directions run as tasks of a
//! single-threaded runtime (so a line's tap event follows its forward with no await in
//! between, keeping the tape in wire order), and the loop watches them, the child, and
//! signals. Shutdown follows the MCP stdio lifecycle: client closes stdin → the server's
//! stdin is closed → wait → SIGTERM → wait → SIGKILL (graces in [`crate::process`]).

use std::path::PathBuf;
use std::process::{ExitCode, ExitStatus};

use futures_util::StreamExt;
use nix::sys::signal::Signal;
use serde_json::json;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::signal::unix::{SignalKind, signal};
use tokio::task::JoinHandle;
use tokio_util::codec::FramedRead;

use crate::cli;
use crate::error::{Error, ProcessError, Result, TapeError};
use crate::framing::{Frame, LineCodec};
use crate::mode::{self, ENV_HOME, ENV_RECORD, ENV_REPLAY, ENV_REPORT, Source};
use crate::process::{self, SIGTERM_GRACE};
use crate::stdio;
use crate::tap::{LongLine, Tap, TapHandle, new_conn_id};
use crate::tape::{Direction, TapeWriter, store};

/// Read buffer size for each direction.
const READ_BUFFER_BYTES: usize = 64 * 1024;

/// What the proxy does with the traffic.
#[derive(Debug)]
enum Mode {
    Passthrough,
    Record {
        tape: PathBuf,
        report: Option<PathBuf>,
        source: String,
    },
}

impl cli::Proxy {
    /// Runs the proxy until the server is gone; returns the server's exit status.
    pub fn run(self) -> Result<ExitCode> {
        let (server, derived) = match &self.server {
            Some(name) => (name.clone(), false),
            None => (derive_name(&self.command), true),
        };
        if derived {
            eprintln!(
                "mcptape: server name `{server}` (derived from the command; --server NAME sets it)"
            );
        }
        let mode = self.mode(&server)?;
        let tap = match &mode {
            Mode::Passthrough => None,
            Mode::Record { tape, source, .. } => {
                store::ensure_dir(tape)?;
                let writer = TapeWriter::open(tape)?;
                eprintln!(
                    "mcptape: recording server `{server}` into `{}` ({source})",
                    tape.display()
                );
                Some(Tap::start(writer, server.clone(), new_conn_id()))
            }
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(ProcessError::Signals)?;
        let result = runtime.block_on(relay(
            &self.command,
            tap.as_ref().map(Tap::handle),
            self.max_line_bytes,
        ));
        // A tokio stdin read may be parked on the blocking pool; do not wait for it.
        runtime.shutdown_background();
        if let Some(tap) = tap {
            let outcome = tap.finish();
            if let (
                Some(err),
                Mode::Record {
                    report: Some(dir), ..
                },
            ) = (&outcome.error, &mode)
            {
                leave_report(dir, &server, err);
            }
        }
        result.map(ExitCode::from)
    }

    fn mode(&self, server: &str) -> Result<Mode> {
        if let Some(session) = &self.record {
            let own = mode::own();
            let home = store::home(own.get(ENV_HOME))?;
            return Ok(Mode::Record {
                tape: store::resolve(session, &home, &own.cwd)?,
                report: None,
                source: "--record".into(),
            });
        }
        let env = mode::find();
        if !env.covers(server) {
            return Ok(Mode::Passthrough);
        }
        let home = store::home(env.get(ENV_HOME))?;
        match (env.get(ENV_RECORD), env.get(ENV_REPLAY)) {
            (Some(_), Some(_)) => Err(Error::Usage(format!(
                "both {ENV_RECORD} and {ENV_REPLAY} are set in the {}; set one",
                env.source
            ))),
            (Some(session), None) => Ok(Mode::Record {
                tape: store::resolve(session, &home, &env.cwd)?,
                report: env.get(ENV_REPORT).map(PathBuf::from),
                source: match &env.source {
                    Source::Own => format!("{ENV_RECORD} is set"),
                    other => format!("{ENV_RECORD} from the {other}"),
                },
            }),
            (None, Some(_)) => Err(Error::Usage(format!(
                "{ENV_REPLAY} is set in the {}, but this mcptape cannot replay yet",
                env.source
            ))),
            (None, None) => Ok(Mode::Passthrough),
        }
    }
}

/// Tells the `record` parent that this proxy's recording is incomplete.
fn leave_report(dir: &std::path::Path, server: &str, err: &TapeError) {
    let cause = std::error::Error::source(err)
        .map(ToString::to_string)
        .unwrap_or_default();
    let report = json!({"server": server, "error": format!("{err}: {cause}")});
    let path = dir.join(format!("record-{}.json", std::process::id()));
    if let Err(e) = std::fs::write(&path, report.to_string()) {
        eprintln!(
            "mcptape: cannot leave a report in `{}`: {e}",
            path.display()
        );
    }
}

/// A name for the server from its command line: the package or script, not the launcher.
pub fn derive_name(argv: &[String]) -> String {
    const LAUNCHERS: &[&str] = &[
        "npx", "pnpx", "bunx", "uvx", "pipx", "node", "bun", "deno", "python", "python3", "uv",
        "pnpm", "yarn", "npm", "sh", "bash", "env",
    ];
    const SUBCOMMANDS: &[&str] = &["run", "exec", "dlx", "x", "tool"];
    let base = |s: &str| s.rsplit('/').next().unwrap_or(s).to_owned();
    let mut words = argv.iter().map(String::as_str);
    let mut name = base(words.next().unwrap_or("server"));
    if LAUNCHERS.contains(&name.as_str()) {
        let mut module = false;
        for w in words {
            if w == "-m" {
                module = true;
                continue;
            }
            if w.starts_with('-') || SUBCOMMANDS.contains(&w) || w.contains('=') {
                continue;
            }
            name = if module { w.to_owned() } else { base(w) };
            break;
        }
    }
    // `@scope/pkg@1.2` → `pkg`; `server.py` → `server`.
    if let Some((pkg, _version)) = name.rsplit_once('@').filter(|(p, _)| !p.is_empty()) {
        name = pkg.to_owned();
    }
    for ext in [".js", ".mjs", ".cjs", ".ts", ".py", ".exe"] {
        if let Some(stem) = name.strip_suffix(ext) {
            name = stem.to_owned();
        }
    }
    let mut short = name.as_str();
    for prefix in ["mcp-server-", "server-", "mcp-"] {
        short = short.strip_prefix(prefix).unwrap_or(short);
    }
    for suffix in ["-mcp-server", "-server", "-mcp"] {
        short = short.strip_suffix(suffix).unwrap_or(short);
    }
    let chosen = if short.is_empty() {
        name.as_str()
    } else {
        short
    };
    let clean: String = chosen
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    if clean.is_empty() {
        "server".into()
    } else {
        clean
    }
}

/// How one direction of the relay ended.
#[derive(Debug)]
enum PumpEnd {
    /// The reading side closed (EOF) or failed.
    SourceClosed,
    /// Writing to the other side failed: it is gone.
    SinkGone,
}

/// Forwards frames from `src` to `dst` as they complete, then hands each to the tap.
async fn pump<R, W>(
    mut src: FramedRead<R, LineCodec>,
    mut dst: W,
    dir: Direction,
    tap: Option<TapHandle>,
) -> PumpEnd
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut long = LongLine::default();
    while let Some(frame) = src.next().await {
        let Ok(frame) = frame else {
            return PumpEnd::SourceClosed;
        };
        if dst.write_all(frame.bytes()).await.is_err() || dst.flush().await.is_err() {
            return PumpEnd::SinkGone;
        }
        let Some(tap) = &tap else { continue };
        match frame {
            Frame::Line(bytes) => tap.line(dir, bytes),
            Frame::Long { bytes, last, .. } => {
                if let Some((len, prefix)) = long.push(&bytes, last) {
                    tap.oversize(dir, len, &prefix);
                }
            }
        }
    }
    PumpEnd::SourceClosed
}

/// Runs the server and relays until it is gone; returns the exit code to pass on.
async fn relay(argv: &[String], tap: Option<TapHandle>, max_line: usize) -> Result<u8> {
    let lifecycle = |method, params| {
        if let Some(tap) = &tap {
            tap.lifecycle(method, params);
        }
    };
    let mut server = match process::spawn_server(argv) {
        Ok(server) => server,
        Err(e) => {
            let cause = std::error::Error::source(&e)
                .map(ToString::to_string)
                .unwrap_or_default();
            lifecycle("$transport/start", json!({"command": argv}));
            lifecycle(
                "$transport/close",
                json!({"error": format!("{e}: {cause}")}),
            );
            return Err(e.into());
        }
    };
    lifecycle(
        "$transport/start",
        json!({"command": argv, "pid": server.pid}),
    );

    let mut signals = Signals::new()?;
    let child_in = server.child.stdin.take().expect("stdin is piped");
    let child_out = server.child.stdout.take().expect("stdout is piped");
    let codec = || LineCodec::new(max_line);
    let mut up: JoinHandle<PumpEnd> = tokio::spawn(pump(
        FramedRead::with_capacity(stdio::stdin(), codec(), READ_BUFFER_BYTES),
        child_in,
        Direction::Send,
        tap.clone(),
    ));
    let mut down: JoinHandle<PumpEnd> = tokio::spawn(pump(
        FramedRead::with_capacity(child_out, codec(), READ_BUFFER_BYTES),
        stdio::stdout(),
        Direction::Recv,
        tap.clone(),
    ));

    let mut up_done = false;
    let mut down_done = false;
    let mut kill_at: Option<tokio::time::Instant> = None;
    let mut reason = "server exited";
    let status: ExitStatus = loop {
        tokio::select! {
            status = server.child.wait() => break wait_result(status, &server.command)?,
            end = &mut up, if !up_done => {
                up_done = true;
                // The pump dropped the server's stdin on return: that is the MCP way to
                // ask a stdio server to exit.
                if matches!(end, Ok(PumpEnd::SourceClosed)) {
                    reason = "client closed stdin";
                    break server.stop().await?;
                }
            }
            end = &mut down, if !down_done => {
                down_done = true;
                if matches!(end, Ok(PumpEnd::SinkGone)) {
                    reason = "client stopped reading";
                    up.abort();
                    let _ = (&mut up).await;
                    break server.stop().await?;
                }
            }
            sig = signals.recv() => {
                reason = sig.as_str();
                server.signal(sig);
                kill_at.get_or_insert(tokio::time::Instant::now() + SIGTERM_GRACE);
            }
            () = sleep_until(kill_at), if kill_at.is_some() => {
                server.signal(Signal::SIGKILL);
                kill_at = None;
            }
        }
    };
    // Whatever the server wrote before it exited still reaches the client; anything it
    // left running that holds its stdout gets the rest of the stop sequence.
    if !down_done
        && tokio::time::timeout(SIGTERM_GRACE, &mut down)
            .await
            .is_err()
    {
        server.signal(Signal::SIGKILL);
        let _ = tokio::time::timeout(SIGTERM_GRACE, &mut down).await;
    }
    down.abort();
    up.abort();
    let mut close = process::status_json(status);
    close["reason"] = json!(reason);
    lifecycle("$transport/close", close);
    Ok(process::exit_code(status))
}

fn wait_result(status: std::io::Result<ExitStatus>, command: &str) -> Result<ExitStatus> {
    status.map_err(|source| {
        ProcessError::Wait {
            command: command.to_owned(),
            source,
        }
        .into()
    })
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The signals a proxy passes on to its server: SIGTERM, SIGHUP, and SIGINT (the server
/// runs in its own process group, so a terminal's Ctrl-C does not reach it directly).
struct Signals {
    term: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> Result<Self> {
        let on = |kind| signal(kind).map_err(ProcessError::Signals);
        Ok(Signals {
            term: on(SignalKind::terminate())?,
            hup: on(SignalKind::hangup())?,
            int: on(SignalKind::interrupt())?,
        })
    }

    async fn recv(&mut self) -> Signal {
        tokio::select! {
            _ = self.term.recv() => Signal::SIGTERM,
            _ = self.hup.recv() => Signal::SIGHUP,
            _ = self.int.recv() => Signal::SIGINT,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::derive_name;

    fn name(cmd: &str) -> String {
        let argv: Vec<String> = cmd.split_whitespace().map(String::from).collect();
        derive_name(&argv)
    }

    #[test]
    fn names_from_commands() {
        assert_eq!(
            name("npx -y @modelcontextprotocol/server-everything"),
            "everything"
        );
        assert_eq!(
            name("npx -y @modelcontextprotocol/server-everything@2026.8.31 stdio"),
            "everything"
        );
        assert_eq!(
            name("/usr/bin/python3 -m mcp_server_git --repo ."),
            "mcp_server_git"
        );
        assert_eq!(name("python3 server.py"), "server");
        assert_eq!(
            name("./target/debug/examples/example-server --variant"),
            "example"
        );
        assert_eq!(name("uvx mcp-server-fetch"), "fetch");
        assert_eq!(name("node dist/index.js"), "index");
        assert_eq!(name("weird$name"), "weird-name");
    }
}
