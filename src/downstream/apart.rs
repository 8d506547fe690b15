//! A notification and the answer after it reach a stdio client in separate reads.
//!
//! Why: the TypeScript SDK (1.32) loses a progress notification that arrives in the same
//! read as the answer to its request. `StdioClientTransport` (`client/stdio.js`) handles
//! each `data` chunk of the server's stdout synchronously: `processReadBuffer` takes every
//! complete line out of the `ReadBuffer` (`shared/stdio.js`) and calls `onmessage` for
//! each, in one loop. `Protocol` (`shared/protocol.js`) dispatches a notification in
//! `_onnotification` through `Promise.resolve().then(handler)` — a microtask, so
//! `_onprogress` runs only after the loop — but an answer synchronously: `_onresponse`
//! deletes the request's entry from `_progressHandlers` at once. When both lines were in
//! one chunk, the microtask then finds no handler and `_onprogress` reports "Received a
//! progress notification for an unknown token" to `onerror`: the notification is gone.
//! Between two `data` events the microtasks run (each libuv read callback is its own
//! macrotask), so two reads keep it.
//!
//! What guarantees two reads is not two writes (a reader slower than the writer gets both
//! in one read anyway) but writing the answer only once the client has read everything
//! before it: a read returns only what is in the pipe. So before an answer that directly
//! follows a notification, the writer waits until the client's side holds nothing unread
//! ([`Backlog`]: `FIONREAD` on our end of a pipe, `TIOCOUTQ` on a socket, which Node's
//! stdio pipes are), for at most [`SEPARATE_READ_WAIT`]: a client that does not read
//! meanwhile gets the answer anyway. Nothing else waits: requests, answers after answers,
//! notifications after notifications go out as they come, and a terminal or a file has no
//! backlog to wait for (nor has a descriptor the kernel will not answer about: the two
//! queries are Linux's). While the pump waits it reads nothing else: a shutdown is seen
//! when the wait ends, at most [`SEPARATE_READ_WAIT`] later. A wait that runs out means
//! the client is not reading: nothing waits again until it has read all it was given, so a
//! client that stalls costs one wait, not one per answer.

use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use std::time::Duration;

use tokio::io::{AsyncWrite, AsyncWriteExt};

use crate::message::Kind;

/// The longest a notification's answer is held back while the client has not read the
/// notification.
pub const SEPARATE_READ_WAIT: Duration = Duration::from_millis(200);

/// How often the backlog is looked at while waiting (tokio's timer granularity).
const BACKLOG_POLL: Duration = Duration::from_millis(1);

/// Which query tells what the client has not read yet.
#[derive(Debug, Clone, Copy)]
enum Query {
    /// Bytes in a pipe: `FIONREAD` works on its write end too (Linux).
    Pipe,
    /// Bytes sent on a socket and not yet read by the peer: `TIOCOUTQ` (`SIOCOUTQ`).
    Socket,
}

/// Our end of the client's pipe or socket, to ask how much it has not read yet.
#[derive(Debug)]
pub struct Backlog {
    fd: OwnedFd,
    query: Query,
}

impl Backlog {
    /// Our stdout's backlog, when it is a pipe or a socket.
    pub fn stdout() -> Option<Backlog> {
        Backlog::of(std::io::stdout())
    }

    /// The backlog of `fd` (a copy of the descriptor is kept), when it is a pipe or a
    /// socket.
    pub fn of(fd: impl AsFd) -> Option<Backlog> {
        let fd = fd.as_fd().try_clone_to_owned().ok()?;
        let ty = std::fs::File::from(fd.try_clone().ok()?)
            .metadata()
            .ok()?
            .file_type();
        let query = if ty.is_fifo() {
            Query::Pipe
        } else if ty.is_socket() {
            Query::Socket
        } else {
            return None;
        };
        let backlog = Backlog { fd, query };
        // A descriptor that does not answer the query has no backlog to wait for.
        backlog.unread().map(|_| backlog)
    }

    /// How much the client has not read yet (for a socket, in the kernel's accounting:
    /// zero exactly when all is read); `None` when the kernel will not say.
    #[allow(unsafe_code)]
    fn unread(&self) -> Option<u64> {
        let request = match self.query {
            Query::Pipe => nix::libc::FIONREAD,
            Query::Socket => nix::libc::TIOCOUTQ,
        };
        let mut n: nix::libc::c_int = 0;
        // SAFETY: both requests write one `int` through the pointer, which points to
        // `n`, alive for the call; the descriptor is ours and open.
        let rc = unsafe { nix::libc::ioctl(self.fd.as_raw_fd(), request, &mut n) };
        (rc == 0).then(|| u64::try_from(n).unwrap_or(0))
    }

    /// Waits until the client has read everything written so far, or `most` has passed;
    /// true when it has read it all.
    pub async fn read_by_client(&self, most: Duration) -> bool {
        let until = tokio::time::Instant::now() + most;
        loop {
            if self.drained() {
                return true;
            }
            let now = tokio::time::Instant::now();
            if now >= until {
                return false;
            }
            tokio::time::sleep(BACKLOG_POLL.min(until - now)).await;
        }
    }

    /// True when the client has read everything written so far.
    fn drained(&self) -> bool {
        self.unread().is_none_or(|n| n == 0)
    }
}

/// What was last written to the client, to tell when an answer must wait for a read.
#[derive(Debug, Default)]
pub struct Spacing {
    backlog: Option<Backlog>,
    after_notification: bool,
    /// The byte relay's last chunk ended inside a line.
    mid_line: bool,
    /// A wait ran out: the client is not reading. Nothing waits again until it has read
    /// all it was given, so a client that stalls costs one [`SEPARATE_READ_WAIT`], not one
    /// per answer (while a wait lasts the server's output is not read, nor taped).
    stalled: bool,
}

impl Spacing {
    /// Spacing over `backlog`; without one nothing ever waits.
    pub fn new(backlog: Option<Backlog>) -> Spacing {
        Spacing {
            backlog,
            ..Spacing::default()
        }
    }

    /// What a line of raw bytes (the byte relay's) is, as far as spacing cares: only a
    /// line that names a `method`, or any line right after a notification, is parsed.
    pub fn kind_of(&self, line: &[u8]) -> Kind {
        if self.backlog.is_none()
            || !(self.after_notification || memchr::memmem::find(line, b"\"method\"").is_some())
        {
            return Kind::Other;
        }
        crate::message::Message::new(bytes::Bytes::copy_from_slice(line)).kind()
    }

    /// True when a line of `kind` written now must first wait for the client's read: an
    /// answer right after a notification.
    pub fn must_wait(&mut self, kind: Kind) -> bool {
        let Some(backlog) = &self.backlog else {
            return false;
        };
        // Asked before every line: a client that has caught up is waited for again.
        if self.stalled && backlog.drained() {
            self.stalled = false;
        }
        self.after_notification && matches!(kind, Kind::Response | Kind::Error) && !self.stalled
    }

    /// Waits until the client has read what was written (at most [`SEPARATE_READ_WAIT`]).
    pub async fn wait(&mut self) {
        if let Some(backlog) = &self.backlog {
            self.stalled = !backlog.read_by_client(SEPARATE_READ_WAIT).await;
        }
    }

    /// A line of `kind` was written whole.
    pub fn wrote(&mut self, kind: Kind) {
        self.after_notification = kind == Kind::Notification;
    }

    /// Before a line of `kind` is written: waits when [`Spacing::must_wait`] says so, and
    /// notes what it is.
    pub async fn before(&mut self, kind: Kind) {
        if self.must_wait(kind) {
            self.wait().await;
        }
        self.wrote(kind);
    }

    /// Writes a chunk of the server's bytes as they came (the byte relay's), cut before
    /// each answer that directly follows a notification, where it waits for the client's
    /// read. Without a backlog, or without such a pair, it is one write. A line cut
    /// across chunks is not classified (its head went out with the chunk before).
    /// `written` is shown each piece once it is written, before any wait: what the client
    /// does on reading a notification must never reach the tape before the notification.
    pub async fn write_chunk<W: AsyncWrite + Unpin>(
        &mut self,
        dst: &mut W,
        chunk: &[u8],
        mut written: impl FnMut(&[u8]),
    ) -> std::io::Result<()> {
        let mut from = 0;
        if self.backlog.is_some() {
            let mut line_start = 0;
            for end in memchr::memchr_iter(b'\n', chunk) {
                let kind = if std::mem::take(&mut self.mid_line) {
                    Kind::Other
                } else {
                    self.kind_of(&chunk[line_start..end])
                };
                if self.must_wait(kind) {
                    if line_start > from {
                        dst.write_all(&chunk[from..line_start]).await?;
                        dst.flush().await?;
                        written(&chunk[from..line_start]);
                        from = line_start;
                    }
                    self.wait().await;
                }
                self.wrote(kind);
                line_start = end + 1;
            }
            if line_start < chunk.len() {
                self.mid_line = true;
            }
        }
        dst.write_all(&chunk[from..]).await?;
        dst.flush().await?;
        written(&chunk[from..]);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
