//! A server process as the upstream: the client's lines go to its stdin, its stdout
//! lines come back, byte for byte, and the tap sees each line after it is forwarded.
//!
//! One `select!` loop owns the connection: the two directions run as tasks of a
//! single-threaded runtime, and the loop watches them, the child, and signals. Each
//! direction is a byte relay: what is read is written at once, whole lines or not, and
//! only then cut into lines for the tap (so a line's tap event follows its last byte's
//! forward with no await in between, keeping the tape in wire order). Shutdown follows the MCP stdio lifecycle: client closes stdin → the server's
//! stdin is closed → wait → SIGTERM → wait → SIGKILL (graces in [`crate::process`]).

use std::process::ExitStatus;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use bytes::BytesMut;
use nix::sys::signal::Signal;
use serde_json::json;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::task::JoinHandle;
use tokio_util::codec::Decoder;

use crate::downstream::stdio;
use crate::error::{ProcessError, Result};
use crate::framing::{Frame, LineCodec};
use crate::process::{self, SIGTERM_GRACE, Signals};
use crate::record::tap::{LongLine, MAX_QUEUED_BYTES, TapHandle};
use crate::tape::Direction;
use crate::tape::close::{Close, CloseReason, CloseStatus};
use crate::tape::lifecycle::LifecycleKind;

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

/// How far a pump has got: lets the shutdown tell a slow reader (keep waiting) from
/// a stdout held open by something the server left behind (stop it).
#[derive(Debug, Default)]
struct Progress {
    /// Frames read plus frames written.
    steps: AtomicU64,
    /// True while a write to the other side is under way.
    writing: AtomicBool,
}

/// Cuts the forwarded byte stream into lines for the tap, after the bytes are on their
/// way: the live path never waits for a line to be complete.
struct Lines {
    codec: LineCodec,
    pending: BytesMut,
    long: LongLine,
    dir: Direction,
    tap: TapHandle,
    /// Queue budget reserved for bytes not handed to the tap yet.
    held: usize,
}

impl Lines {
    fn push(&mut self, chunk: &[u8]) {
        self.pending.extend_from_slice(chunk);
        while let Ok(Some(frame)) = self.codec.decode(&mut self.pending) {
            self.record(frame);
        }
    }

    fn end(&mut self) {
        while let Ok(Some(frame)) = self.codec.decode_eof(&mut self.pending) {
            self.record(frame);
        }
    }

    /// Reserves queue budget for `n` more bytes, up to half the budget for what is still
    /// in `pending` (a line too long to fit is not waited for: it could never complete).
    async fn reserve(&mut self, n: usize) {
        if self.held + n <= MAX_QUEUED_BYTES / 2 {
            self.tap.reserve(n).await;
            self.held += n;
        }
    }

    fn take_budget(&mut self, len: usize) -> usize {
        let give = self.held.min(len);
        self.held -= give;
        give
    }

    fn record(&mut self, frame: Frame) {
        match frame {
            Frame::Line(bytes) => {
                let budget = self.take_budget(bytes.len());
                self.tap.line_reserved(self.dir, bytes, budget);
            }
            Frame::Long { bytes, last, .. } => {
                // Only its length and prefix are queued.
                let budget = self.take_budget(bytes.len());
                self.tap.release(budget);
                if let Some((len, prefix)) = self.long.push(&bytes, last) {
                    self.tap.oversize(self.dir, len, &prefix);
                }
            }
        }
    }
}

/// Copies bytes from `src` to `dst` as they arrive — a relay, line boundaries or not —
/// and hands each complete line to the tap once it has been written.
async fn pump<R, W>(
    mut src: R,
    mut dst: W,
    dir: Direction,
    tap: Option<TapHandle>,
    max_line: usize,
    progress: Arc<Progress>,
) -> PumpEnd
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut lines = tap.map(|tap| Lines {
        codec: LineCodec::new(max_line),
        pending: BytesMut::new(),
        long: LongLine::default(),
        dir,
        tap,
        held: 0,
    });
    let mut buf = BytesMut::with_capacity(READ_BUFFER_BYTES);
    loop {
        buf.reserve(READ_BUFFER_BYTES);
        match src.read_buf(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let chunk = buf.split();
        progress.steps.fetch_add(1, Ordering::Relaxed);
        progress.writing.store(true, Ordering::Relaxed);
        let written = dst.write_all(&chunk).await.is_ok() && dst.flush().await.is_ok();
        progress.writing.store(false, Ordering::Relaxed);
        progress.steps.fetch_add(1, Ordering::Relaxed);
        if !written {
            return PumpEnd::SinkGone;
        }
        if let Some(lines) = &mut lines {
            lines.reserve(chunk.len()).await;
            lines.push(&chunk);
        }
    }
    // A last line without its newline was forwarded too: record it.
    if let Some(lines) = &mut lines {
        lines.end();
    }
    PumpEnd::SourceClosed
}

/// Runs the server and relays until it is gone; returns the exit code to pass on.
pub async fn relay(argv: &[String], tap: Option<TapHandle>, max_line: usize) -> Result<u8> {
    let lifecycle = |kind, params| {
        if let Some(tap) = &tap {
            tap.lifecycle(kind, params);
        }
    };
    let close = |close: Close| {
        if let Some(tap) = &tap {
            tap.close(&close);
        }
    };
    let mut server = match process::spawn_server(argv, &[], None) {
        Ok(server) => server,
        Err(e) => {
            lifecycle(LifecycleKind::Start, json!({"command": argv}));
            close(Close::new(
                CloseReason::StartFailed(crate::error::chain(&e)),
                CloseStatus::Unknown,
            ));
            return Err(e.into());
        }
    };
    lifecycle(
        LifecycleKind::Start,
        json!({"command": argv, "pid": server.pid}),
    );

    let mut signals = Signals::new()?;
    let child_in = server.child.stdin.take().expect("stdin is piped");
    let child_out = server.child.stdout.take().expect("stdout is piped");
    let mut up: JoinHandle<PumpEnd> = tokio::spawn(pump(
        stdio::stdin(),
        child_in,
        Direction::Send,
        tap.clone(),
        max_line,
        Arc::default(),
    ));
    let down_progress = Arc::new(Progress::default());
    let mut down: JoinHandle<PumpEnd> = tokio::spawn(pump(
        child_out,
        stdio::stdout(),
        Direction::Recv,
        tap.clone(),
        max_line,
        Arc::clone(&down_progress),
    ));

    let mut up_done = false;
    let mut down_done = false;
    let mut kill_at: Option<tokio::time::Instant> = None;
    let mut reason = CloseReason::ServerExited;
    let status: ExitStatus = loop {
        // Biased: when the client's hang-up made the server exit, both are ready and the
        // hang-up is the reason.
        tokio::select! {
            biased;
            sig = signals.recv() => {
                reason = CloseReason::Signal(sig);
                server.signal(sig);
                kill_at.get_or_insert(tokio::time::Instant::now() + SIGTERM_GRACE);
            }
            end = &mut up, if !up_done => {
                up_done = true;
                // The pump dropped the server's stdin on return: that is the MCP way to
                // ask a stdio server to exit.
                if matches!(end, Ok(PumpEnd::SourceClosed)) {
                    reason = CloseReason::ClientClosedStdin;
                    break server.stop().await?;
                }
            }
            end = &mut down, if !down_done => {
                down_done = true;
                if matches!(end, Ok(PumpEnd::SinkGone)) {
                    reason = CloseReason::ClientStoppedReading;
                    if !up_done {
                        // Dropping the up pump closes the server's stdin.
                        up.abort();
                        let _ = (&mut up).await;
                    }
                    break server.stop().await?;
                }
            }
            status = server.child.wait() => break wait_result(status, &server.command)?,
            () = sleep_until(kill_at), if kill_at.is_some() => {
                server.signal(Signal::SIGKILL);
                kill_at = None;
            }
        }
    };
    // Whatever the server wrote before it exited still reaches the client, however slowly
    // the client reads. Only a stdout that stays open with nothing coming (something the
    // server left running holds it) is cut: SIGKILL to the group, then give up.
    let mut seen = down_progress.steps.load(Ordering::Relaxed);
    let mut killed = false;
    while !down_done {
        if tokio::time::timeout(SIGTERM_GRACE, &mut down).await.is_ok() {
            down_done = true;
            continue;
        }
        let now = down_progress.steps.load(Ordering::Relaxed);
        if now != seen || down_progress.writing.load(Ordering::Relaxed) {
            seen = now;
        } else if !killed {
            server.signal(Signal::SIGKILL);
            killed = true;
        } else {
            break;
        }
    }
    down.abort();
    up.abort();
    close(Close::new(reason, CloseStatus::of(status)));
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
