//! The byte relay: a server process behind our stdin/stdout, byte for byte, with the
//! layers shown each line after it is forwarded.
//!
//! One `select!` loop owns the connection: the two directions run as tasks of a
//! single-threaded runtime, and the loop watches them, the child, and signals. Each
//! direction copies what it reads at once, whole lines or not (the server's side cut only
//! before an answer that follows a notification, which waits for the client to have read
//! the notification: [`crate::downstream::apart`]), and only then cuts it into
//! lines for the layers ([`Layers::watch`]), with no await between a chunk's forward and
//! its lines being shown, which keeps the tape in wire order. Only watching layers are
//! driven this way (none [`reads_first`](crate::layer::Layer::reads_first)). After each
//! chunk a direction waits for the layers' room ([`Layers::room_wait`]): nothing while the
//! tape writer keeps up. Shutdown follows the MCP stdio lifecycle: client closes stdin →
//! the server's stdin is closed → wait → SIGTERM → wait → SIGKILL (graces in
//! [`crate::process`]).

use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use bytes::BytesMut;
use nix::sys::signal::Signal;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::task::JoinHandle;
use tokio_util::codec::Decoder;

use crate::downstream::apart::{Backlog, Spacing};
use crate::downstream::stdio;
use crate::duration::sleep_until;
use crate::error::{ProcessError, Result};
use crate::framing::LongLine;
use crate::framing::{Frame, LineCodec};
use crate::layer::Layers;
use crate::process::{self, SIGTERM_GRACE, Server, Signals};
use crate::tape::Direction;
use crate::tape::close::{Close, CloseReason, CloseStatus};
use crate::upstream::child::{self, READ_BUFFER_BYTES};

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

/// The layer stack, shared by the two directions and the loop that closes it. It is
/// only ever held for a synchronous call, never across an await.
#[derive(Clone)]
struct Shared(Arc<Mutex<Layers>>);

impl Shared {
    fn with<T>(&self, f: impl FnOnce(&mut Layers) -> T) -> T {
        f(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// Cuts one direction's forwarded bytes into lines for the layers, after the bytes are
/// on their way: the live path never waits for a line to be complete.
struct Cutter {
    codec: LineCodec,
    pending: BytesMut,
    long: LongLine,
    dir: Direction,
}

impl Cutter {
    fn push(&mut self, chunk: &[u8], layers: &mut Layers) {
        self.pending.extend_from_slice(chunk);
        while let Ok(Some(frame)) = self.codec.decode(&mut self.pending) {
            self.show(frame, layers);
        }
    }

    fn end(&mut self, layers: &mut Layers) {
        while let Ok(Some(frame)) = self.codec.decode_eof(&mut self.pending) {
            self.show(frame, layers);
        }
    }

    fn show(&mut self, frame: Frame, layers: &mut Layers) {
        match frame {
            Frame::Line(bytes) => layers.watch(self.dir, bytes),
            Frame::Long { bytes, last, .. } => {
                // Only its length and prefix are kept.
                if let Some((len, prefix)) = self.long.push(&bytes, last) {
                    layers.oversize(self.dir, len, &prefix);
                }
            }
        }
    }
}

/// Copies bytes from `src` to `dst` as they arrive — a relay, line boundaries or not —
/// and shows each complete line to the layers once it has been written.
async fn pump<R, W>(
    mut src: R,
    mut dst: W,
    dir: Direction,
    layers: Option<Shared>,
    max_line: usize,
    progress: Arc<Progress>,
    mut spacing: Spacing,
) -> PumpEnd
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut cutter = layers.map(|layers| {
        let cutter = Cutter {
            codec: LineCodec::new(max_line),
            pending: BytesMut::new(),
            long: LongLine::default(),
            dir,
        };
        (cutter, layers)
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
        // Each piece is shown to the layers as soon as it is written (before a wait for
        // the client's read), so the tape keeps the order the client saw.
        let written = spacing
            .write_chunk(&mut dst, &chunk, |piece| {
                if let Some((cutter, layers)) = &mut cutter {
                    layers.with(|layers| cutter.push(piece, layers));
                }
            })
            .await
            .is_ok();
        progress.writing.store(false, Ordering::Relaxed);
        progress.steps.fetch_add(1, Ordering::Relaxed);
        if !written {
            return PumpEnd::SinkGone;
        }
        if let Some((_, layers)) = &cutter
            && let Some(wait) = layers.with(|layers| layers.room_wait())
        {
            wait.await;
        }
    }
    // A last line without its newline was forwarded too: show it.
    if let Some((cutter, layers)) = &mut cutter {
        layers.with(|layers| cutter.end(layers));
    }
    PumpEnd::SourceClosed
}

/// The two directions of a running relay.
struct Pumps {
    up: JoinHandle<PumpEnd>,
    down: JoinHandle<PumpEnd>,
    up_done: bool,
    down_done: bool,
    down_progress: Arc<Progress>,
}

/// Runs the server and relays until it is gone; returns the exit code to pass on.
pub async fn relay(argv: &[String], mut layers: Layers, max_line: usize) -> Result<u8> {
    let mut server = match process::spawn_server(argv, &[], None) {
        Ok(server) => server,
        Err(e) => {
            layers.failed_start(child::start_failure(argv, &e));
            return Err(e.into());
        }
    };
    layers.event(&child::start_event(argv, Some(server.pid)));
    let shared = (!layers.is_empty()).then(|| Shared(Arc::new(Mutex::new(layers))));

    let mut signals = Signals::new()?;
    let child_in = server.child.stdin.take().expect("stdin is piped");
    let child_out = server.child.stdout.take().expect("stdout is piped");
    let up = tokio::spawn(pump(
        stdio::stdin(),
        child_in,
        Direction::Send,
        shared.clone(),
        max_line,
        Arc::default(),
        Spacing::default(),
    ));
    let down_progress = Arc::new(Progress::default());
    let down = tokio::spawn(pump(
        child_out,
        stdio::stdout(),
        Direction::Recv,
        shared.clone(),
        max_line,
        Arc::clone(&down_progress),
        Spacing::new(Backlog::stdout()),
    ));
    let mut pumps = Pumps {
        up,
        down,
        up_done: false,
        down_done: false,
        down_progress,
    };
    let (reason, status) = supervise(&mut server, &mut signals, &mut pumps).await?;
    drain(&server, &mut pumps).await;
    pumps.down.abort();
    pumps.up.abort();
    if let Some(shared) = &shared {
        shared.with(|layers| layers.close(&Close::new(reason, CloseStatus::of(status))));
    }
    Ok(process::exit_code(status))
}

/// Watches the directions, the server and our signals until the server has exited;
/// returns why the connection ended and the server's status.
async fn supervise(
    server: &mut Server,
    signals: &mut Signals,
    pumps: &mut Pumps,
) -> Result<(CloseReason, ExitStatus)> {
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
            end = &mut pumps.up, if !pumps.up_done => {
                pumps.up_done = true;
                // The pump dropped the server's stdin on return: that is the MCP way to
                // ask a stdio server to exit.
                if matches!(end, Ok(PumpEnd::SourceClosed)) {
                    reason = CloseReason::ClientClosedStdin;
                    break server.stop().await?;
                }
            }
            end = &mut pumps.down, if !pumps.down_done => {
                pumps.down_done = true;
                if matches!(end, Ok(PumpEnd::SinkGone)) {
                    reason = CloseReason::ClientStoppedReading;
                    if !pumps.up_done {
                        // Dropping the up pump closes the server's stdin.
                        pumps.up.abort();
                        let _ = (&mut pumps.up).await;
                    }
                    break server.stop().await?;
                }
            }
            status = server.child.wait() => break wait_result(status, &server.shown())?,
            () = sleep_until(kill_at), if kill_at.is_some() => {
                server.signal(Signal::SIGKILL);
                kill_at = None;
            }
        }
    };
    Ok((reason, status))
}

/// Whatever the server wrote before it exited still reaches the client, however slowly
/// the client reads. Only a stdout that stays open with nothing coming (something the
/// server left running holds it) is cut: SIGKILL to the group, then give up.
async fn drain(server: &Server, pumps: &mut Pumps) {
    let progress = &pumps.down_progress;
    let mut seen = progress.steps.load(Ordering::Relaxed);
    let mut killed = false;
    while !pumps.down_done {
        if tokio::time::timeout(SIGTERM_GRACE, &mut pumps.down)
            .await
            .is_ok()
        {
            pumps.down_done = true;
            continue;
        }
        let now = progress.steps.load(Ordering::Relaxed);
        if now != seen || progress.writing.load(Ordering::Relaxed) {
            seen = now;
        } else if !killed {
            server.signal(Signal::SIGKILL);
            killed = true;
        } else {
            break;
        }
    }
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

#[cfg(test)]
mod tests;
