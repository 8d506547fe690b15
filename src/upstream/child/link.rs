//! A server process as a [`Link`], line by line: each client message is one line on its
//! stdin, each stdout line one server message.
//!
//! Writing to the child is a task of its own, fed by a channel that [`Link::send`] never
//! waits on: a server that is blocked writing its stdout (because nobody reads it while
//! `send` waits) and so not reading its stdin would otherwise deadlock the pump, which
//! polls `send` and `next` from one loop. What a server does not read waits in memory, as
//! it would in the client's own pipe buffer. [`Link::next`] is cancel-safe: the framing
//! keeps partial lines, and the shutdown's deadlines live in the link, not in the future.
//!
//! Shutdown has the timing of the byte relay and [`crate::process::Server::stop`]: once
//! the client has said everything ([`Link::end_input`]) the server's stdin is closed; if
//! it has not exited after [`STDIN_CLOSE_GRACE`] it gets SIGTERM, and SIGKILL after
//! [`SIGTERM_GRACE`]. Once it has exited, what it wrote still comes, but a stdout that
//! stays open with nothing coming (held by something it left behind) is cut: SIGKILL to
//! its group after a grace with nothing, then the link ends after another.

use std::path::Path;
use std::process::ExitStatus;

use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use nix::sys::signal::Signal;
use tokio::io::AsyncWriteExt;
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::codec::FramedRead;

use super::READ_BUFFER_BYTES;
use crate::duration::sleep_until;
use crate::error::{LinkError, ProcessError, Result};
use crate::framing::LongLine;
use crate::framing::{Frame, LineCodec};
use crate::message::Message;
use crate::process::{self, GAVE_UP_GRACE, SIGTERM_GRACE, STDIN_CLOSE_GRACE, Server};
use crate::tape::Direction;
use crate::tape::close::CloseReason;
use crate::tape::lifecycle::{Lifecycle, Oversize};
use crate::upstream::{Closed, Event, Incoming, Link};

/// Where the end of the server has got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Running; nobody asked it to exit.
    Running,
    /// Its stdin is closed: SIGTERM at this instant.
    Asked(Instant),
    /// SIGTERM sent: SIGKILL at this instant.
    Termed(Instant),
    /// SIGKILL sent: waiting for it to exit.
    Killed,
    /// It exited; its stdout is read until it ends. `quiet_until` is when a stdout with
    /// nothing coming is cut (set when a wait for it begins); `killed` once its group got
    /// SIGKILL for it.
    Exited {
        quiet_until: Option<Instant>,
        killed: bool,
    },
    /// Its stdout ended, or was given up.
    Done,
}

/// A server process as an upstream, in line mode.
pub struct ChildLink {
    server: Server,
    argv: Vec<String>,
    /// Lines for the writer task; None once the client has said everything.
    input: Option<mpsc::UnboundedSender<Bytes>>,
    writer: JoinHandle<()>,
    output: FramedRead<ChildStdout, LineCodec>,
    long: LongLine,
    max_line: usize,
    status: Option<ExitStatus>,
    phase: Phase,
    /// The last signal the graces made us send it (SIGTERM, SIGKILL), if any.
    stopped_by: Option<Signal>,
}

impl ChildLink {
    /// Starts the server `argv` (our environment plus `env`, in `cwd` if given; see
    /// [`process::spawn_server`]); stdout lines longer than `max_line` bytes are not
    /// passed on (said on stderr and as a `$transport/oversize` event).
    pub fn spawn(
        argv: &[String],
        env: &[(String, String)],
        cwd: Option<&Path>,
        max_line: usize,
    ) -> Result<ChildLink, ProcessError> {
        Ok(ChildLink::of(
            process::spawn_server(argv, env, cwd)?,
            argv,
            max_line,
        ))
    }

    /// Starts the server `argv` as [`ChildLink::spawn`] does (our environment, our
    /// directory), with its stderr passed through a [`process::Tail`] that keeps its last
    /// lines.
    pub fn spawn_tailed(
        argv: &[String],
        max_line: usize,
    ) -> Result<(ChildLink, process::Tail), ProcessError> {
        let (server, tail) = process::spawn_server_tailed(argv, &[], None)?;
        Ok((ChildLink::of(server, argv, max_line), tail))
    }

    fn of(mut server: Server, argv: &[String], max_line: usize) -> ChildLink {
        let stdin = server.child.stdin.take().expect("stdin is piped");
        let stdout = server.child.stdout.take().expect("stdout is piped");
        let (tx, rx) = mpsc::unbounded_channel();
        ChildLink {
            argv: argv.to_vec(),
            input: Some(tx),
            writer: tokio::spawn(write_input(stdin, rx)),
            output: FramedRead::with_capacity(stdout, LineCodec::new(max_line), READ_BUFFER_BYTES),
            long: LongLine::default(),
            max_line,
            status: None,
            phase: Phase::Running,
            stopped_by: None,
            server,
        }
    }

    /// The server's process id (also its process group's).
    pub fn pid(&self) -> u32 {
        self.server.pid
    }

    /// The instant the next step of the shutdown is due, if one is.
    fn deadline(&mut self) -> Option<Instant> {
        match &mut self.phase {
            Phase::Asked(at) | Phase::Termed(at) => Some(*at),
            Phase::Exited { quiet_until, .. } => {
                Some(*quiet_until.get_or_insert_with(|| Instant::now() + SIGTERM_GRACE))
            }
            Phase::Running | Phase::Killed | Phase::Done => None,
        }
    }

    /// The deadline came: the next step of the shutdown.
    fn escalate(&mut self) {
        let now = Instant::now();
        self.phase = match self.phase {
            Phase::Asked(_) => {
                self.server.signal(Signal::SIGTERM);
                self.stopped_by = Some(Signal::SIGTERM);
                Phase::Termed(now + SIGTERM_GRACE)
            }
            Phase::Termed(_) => {
                self.server.signal(Signal::SIGKILL);
                self.stopped_by = Some(Signal::SIGKILL);
                Phase::Killed
            }
            Phase::Exited { killed: false, .. } => {
                self.server.signal(Signal::SIGKILL);
                Phase::Exited {
                    quiet_until: None,
                    killed: true,
                }
            }
            Phase::Exited { killed: true, .. } => Phase::Done,
            other => other,
        };
    }

    /// The server exited (or can no longer be waited for).
    fn exited(&mut self, status: std::io::Result<ExitStatus>) {
        self.status = status.ok();
        self.phase = Phase::Exited {
            quiet_until: None,
            killed: false,
        };
    }

    /// Something came from stdout: a stdout that is still busy is not cut.
    fn progressed(&mut self) {
        if let Phase::Exited { quiet_until, .. } = &mut self.phase {
            *quiet_until = None;
        }
    }

    /// A stdout frame as what the link gives, or None for a piece of a long line.
    fn frame(&mut self, frame: Frame) -> Option<Incoming> {
        self.progressed();
        match frame {
            Frame::Line(line) => {
                let end = line.len() - usize::from(line.ends_with(b"\n"));
                Some(Incoming::Message(Message::new(line.slice(..end))))
            }
            Frame::Long { bytes, last, .. } => {
                let (len, prefix) = self.long.push(&bytes, last)?;
                crate::term::eprintln_escaped!(
                    "mcptape: warning: server `{}` wrote a line of {len} bytes, longer than the maximum ({} bytes); it was not passed on",
                    self.server.shown(),
                    self.max_line
                );
                Some(Incoming::Event(oversize_event(len, &prefix)))
            }
        }
    }

    /// Waits for the server to exit, going on with the shutdown's steps from where they
    /// are.
    async fn wait_exit(&mut self) -> Result<ExitStatus, ProcessError> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        loop {
            let deadline = match self.phase {
                Phase::Asked(at) | Phase::Termed(at) => Some(at),
                _ => None,
            };
            tokio::select! {
                status = self.server.child.wait() => {
                    return status.map_err(|source| ProcessError::Wait {
                        command: self.server.shown(),
                        source,
                    });
                }
                () = sleep_until(deadline) => self.escalate(),
            }
        }
    }
}

/// The `$transport/oversize` fact of a stdout line too long to pass on, as the tap writes
/// it for the byte relay.
fn oversize_event(len: usize, prefix: &[u8]) -> Event {
    Lifecycle::Oversize(Oversize {
        dir: Some(Direction::Recv),
        bytes: Some(len as u64),
        prefix: Some(String::from_utf8_lossy(prefix).into_owned()),
    })
    .event()
}

/// Writes the client's lines to the server's stdin until the link drops its sender (then
/// the stdin is closed: the MCP way to ask the server to exit) or the server is gone.
async fn write_input(mut stdin: ChildStdin, mut lines: mpsc::UnboundedReceiver<Bytes>) {
    while let Some(line) = lines.recv().await {
        if stdin.write_all(&line).await.is_err() || stdin.flush().await.is_err() {
            return;
        }
    }
}

impl Link for ChildLink {
    fn started(&self) -> Option<Event> {
        Some(super::start_event(&self.argv, Some(self.server.pid)))
    }

    async fn send(&mut self, msg: Message) -> Result<(), LinkError> {
        let input = self.input.as_ref().ok_or(LinkError::Gone)?;
        let bytes = msg.bytes();
        let mut line = BytesMut::with_capacity(bytes.len() + 1);
        line.extend_from_slice(&bytes);
        line.extend_from_slice(b"\n");
        input.send(line.freeze()).map_err(|_| LinkError::Gone)
    }

    async fn next(&mut self) -> Option<Incoming> {
        loop {
            if self.phase == Phase::Done {
                return None;
            }
            let deadline = self.deadline();
            let waiting = self.status.is_none() && !matches!(self.phase, Phase::Exited { .. });
            tokio::select! {
                biased;
                frame = self.output.next() => match frame {
                    Some(Ok(frame)) => {
                        if let Some(incoming) = self.frame(frame) {
                            return Some(incoming);
                        }
                    }
                    Some(Err(_)) | None => {
                        self.phase = Phase::Done;
                        return None;
                    }
                },
                status = self.server.child.wait(), if waiting => self.exited(status),
                () = sleep_until(deadline) => self.escalate(),
            }
        }
    }

    async fn oversize(&mut self, len: usize, _prefix: bytes::Bytes) {
        // Line by line, a line too long to hold cannot be sent whole (the byte relay
        // forwards it as bytes); the tape has its `$transport/oversize` entry.
        crate::term::eprintln_escaped!(
            "mcptape: warning: a client line of {len} bytes, over the maximum, was not sent to the server (line mode); its request gets no answer"
        );
    }

    async fn end_input(&mut self) {
        // The writer task sends what is queued, then drops the server's stdin.
        self.input = None;
        if self.phase == Phase::Running {
            self.phase = Phase::Asked(Instant::now() + STDIN_CLOSE_GRACE);
        }
    }

    async fn interrupt(&mut self, reason: &CloseReason) -> bool {
        let CloseReason::Signal(sig) = reason else {
            // Nothing was passed on: nothing more is owed.
            return false;
        };
        if self.status.is_none() {
            // Passed on as it came, as the byte relay does; SIGKILL after a grace. What
            // the server writes until it exits still reaches the client.
            self.input = None;
            self.server.signal(*sig);
            self.phase = Phase::Termed(Instant::now() + SIGTERM_GRACE);
        }
        true
    }

    async fn close(mut self, reason: CloseReason) -> Result<Closed> {
        self.input = None;
        // What the client still had queued is not owed any more: close the stdin now.
        self.writer.abort();
        if self.status.is_none() {
            let now = Instant::now();
            match (&reason, self.phase) {
                // Already passed on by `interrupt`.
                (CloseReason::Signal(_), Phase::Termed(_) | Phase::Killed) => {}
                (CloseReason::Signal(sig), _) => {
                    // Passed on as it came, as the byte relay does; SIGKILL after a grace.
                    self.server.signal(*sig);
                    self.phase = Phase::Termed(now + SIGTERM_GRACE);
                }
                // The client gave up on it (`--timeout`): the MCP way still, with a short
                // grace, as it was waited for as long as the user allowed.
                (CloseReason::ClientTimeout, Phase::Running | Phase::Done | Phase::Asked(_)) => {
                    self.phase = Phase::Asked(now + GAVE_UP_GRACE);
                }
                // A server whose stdout ended before it exited (it closed it, and lingers)
                // is asked like a running one, not waited for without end.
                (_, Phase::Running | Phase::Done) => {
                    self.phase = Phase::Asked(now + STDIN_CLOSE_GRACE);
                }
                _ => {}
            }
        }
        let status = self.wait_exit().await?;
        // Ours only if it is what ended it (not an outsider's signal, nor an exit of its
        // own that came as we signalled).
        use std::os::unix::process::ExitStatusExt;
        Ok(match self.stopped_by {
            Some(by) if status.signal() == Some(by as i32) => Closed::Stopped { status, by },
            _ => Closed::Exited(status),
        })
    }
}
