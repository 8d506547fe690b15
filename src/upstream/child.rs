//! A server process as the upstream: the client's lines go to its stdin, its stdout
//! lines come back, byte for byte, and the tap sees each line after it is forwarded.
//!
//! One `select!` loop owns the connection: the two directions run as tasks of a
//! single-threaded runtime (so a line's tap event follows its forward with no await in
//! between, keeping the tape in wire order), and the loop watches them, the child, and
//! signals. Shutdown follows the MCP stdio lifecycle: client closes stdin → the server's
//! stdin is closed → wait → SIGTERM → wait → SIGKILL (graces in [`crate::process`]).

use std::process::ExitStatus;

use futures_util::StreamExt;
use nix::sys::signal::Signal;
use serde_json::json;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::task::JoinHandle;
use tokio_util::codec::FramedRead;

use crate::error::{ProcessError, Result};
use crate::framing::{Frame, LineCodec};
use crate::process::{self, SIGTERM_GRACE, Signals};
use crate::stdio;
use crate::tap::{LongLine, TapHandle};
use crate::tape::Direction;

/// Read buffer size for each direction.
pub const READ_BUFFER_BYTES: usize = 64 * 1024;

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
pub async fn relay(argv: &[String], tap: Option<TapHandle>, max_line: usize) -> Result<u8> {
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
