//! The stdio pump: our stdin and stdout as the downstream of any [`Link`], line by line.
//!
//! One `select!` loop owns the connection: the client's lines go to [`Link::send`] as
//! they are read, what [`Link::next`] gives is written to the client one write per
//! line (an answer right after a notification once the client has read the
//! notification: [`crate::downstream::apart`]), and `shutdown` (a future the caller
//! passes: our signals, or a test's trigger) ends it. When the client closes its side the
//! link is told ([`Link::end_input`]) and the pump goes on writing what it is still owed
//! until the link says it is done; a shutdown likewise ([`Link::interrupt`]: a child gets
//! the signal and what it writes before it exits still reaches the client). Then the link
//! is closed with the reason the pump saw. A message a layer holds (a call waiting for
//! approval) holds up neither the client's other messages nor a shutdown: it waits in
//! the layers ([`crate::layer::Layered`]), and a client that closes its side right after
//! it still gets its answer (the link's input is closed once it is decided).
//!
//! An injected disconnect ends [`Link::next`] as a server that went away does: the
//! client's stdout is closed when the proxy exits, and [`Pumped::disconnect`] says so
//! (the proxy then exits with its status, [`Pumped::disconnect_exit`]). A message a
//! fault marked slow is written in small pieces ([`crate::downstream::slow`]).
//!
//! This is the stdio proxy's path for a remote server (`--url`), for replay, and for a
//! child server when a layer must read messages before they are forwarded. A child with
//! only watching layers takes the byte relay instead ([`crate::downstream::relay`]).

use std::future::Future;

use futures_util::StreamExt;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio_util::codec::FramedRead;

use crate::downstream::apart::{Backlog, Spacing};
use crate::downstream::slow;
use crate::error::Result;
use crate::framing::{Frame, LineCodec, LongLine};
use crate::message::Message;
use crate::tape::close::CloseReason;
use crate::upstream::child::READ_BUFFER_BYTES;
use crate::upstream::{Closed, Disconnect, Incoming, Link};

/// Drives `link` from our own stdin and stdout until the client or the upstream is gone,
/// or a signal comes (SIGTERM, SIGINT, SIGHUP); then closes it.
pub async fn stdio<L: Link>(link: L, max_line: usize) -> Result<Pumped> {
    let mut signals = crate::process::Signals::new()?;
    let shutdown = async move { CloseReason::Signal(signals.recv().await) };
    let (input, output) = (super::stdio::stdin(), super::stdio::stdout());
    let spacing = Spacing::new(Backlog::stdout());
    serve_spaced(link, input, output, spacing, max_line, shutdown).await
}

/// What the pump ended with.
#[derive(Debug)]
pub struct Pumped {
    /// How the upstream ended.
    pub closed: Closed,
    /// Why the pump ended it.
    pub reason: CloseReason,
    /// The injected disconnect that ended it, when one did ([`Link::disconnected`]):
    /// the client saw the server's output close.
    pub disconnect: Option<Disconnect>,
}

impl Pumped {
    /// The proxy's exit status for an injected disconnect: its status when it fits one
    /// (0–255), else 1. None when no disconnect ended the pump.
    pub fn disconnect_exit(&self) -> Option<u8> {
        let d = self.disconnect.as_ref()?;
        Some(d.status.and_then(|s| u8::try_from(s).ok()).unwrap_or(1))
    }
}

/// Whether the client may still write.
enum State {
    /// Reading the client's lines.
    Open,
    /// The client closed its side; writing what is still owed.
    Draining,
    /// A shutdown came; writing what the link still gives, then closing for this reason.
    Interrupted(CloseReason),
    /// Done, for this reason.
    Done(CloseReason),
}

/// Drives `link` from `input`/`output` until the client or the upstream is gone, or
/// `shutdown` resolves; then closes it.
pub async fn serve<L, R, W, S>(
    link: L,
    input: R,
    output: W,
    max_line: usize,
    shutdown: S,
) -> Result<Pumped>
where
    L: Link,
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
    S: Future<Output = CloseReason>,
{
    serve_spaced(link, input, output, Spacing::default(), max_line, shutdown).await
}

/// [`serve`], writing an answer that follows a notification only once the client has
/// read the notification, as `spacing` tells ([`crate::downstream::apart`]).
pub async fn serve_spaced<L, R, W, S>(
    mut link: L,
    input: R,
    mut output: W,
    mut spacing: Spacing,
    max_line: usize,
    shutdown: S,
) -> Result<Pumped>
where
    L: Link,
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
    S: Future<Output = CloseReason>,
{
    let mut out = Out {
        output: &mut output,
        buf: Vec::new(),
        spacing: &mut spacing,
    };
    let mut input = FramedRead::with_capacity(input, LineCodec::new(max_line), READ_BUFFER_BYTES);
    let mut shutdown = std::pin::pin!(shutdown);
    let mut long = LongLine::default();
    let mut state = State::Open;
    let reason = loop {
        state = match state {
            State::Done(reason) => break reason,
            State::Open => tokio::select! {
                biased;
                reason = &mut shutdown => interrupt(&mut link, reason).await,
                // What the upstream gives goes out before more is read: a client is
                // answered line by line, as it asked.
                incoming = link.next() => deliver(incoming, &mut out, State::Open).await,
                frame = input.next() => match frame {
                    Some(Ok(Frame::Line(line))) => {
                        let end = crate::framing::content(&line).len();
                        if line[..end].trim_ascii().is_empty() {
                            State::Open
                        } else {
                            // A message a layer holds (a call waiting for approval)
                            // does not hold up `send`: it waits in the layers and comes
                            // out of `next` once decided. `send` may still wait for the
                            // layers' room (the tap's queue behind a slow disk): a
                            // shutdown ends that wait.
                            let msg = Message::new(line.slice(..end));
                            tokio::select! {
                                biased;
                                reason = &mut shutdown => interrupt(&mut link, reason).await,
                                // A failure to take a notification or an answer is not
                                // the client's to hear (it has no id); the end shows in
                                // `next`.
                                _ = link.send(msg) => State::Open,
                            }
                        }
                    }
                    Some(Ok(Frame::Long { bytes, last, .. })) => {
                        if let Some((len, prefix)) = long.push(&bytes, last) {
                            link.oversize(len, prefix.into()).await;
                        }
                        State::Open
                    }
                    Some(Err(_)) | None => {
                        link.end_input().await;
                        State::Draining
                    }
                },
            },
            State::Draining => tokio::select! {
                biased;
                reason = &mut shutdown => interrupt(&mut link, reason).await,
                incoming = link.next() => match incoming {
                    None => State::Done(CloseReason::ClientClosedStdin),
                    some => deliver(some, &mut out, State::Draining).await,
                },
            },
            // The shutdown has resolved: it is not polled again.
            State::Interrupted(reason) => match link.next().await {
                None => State::Done(reason),
                some => match deliver(some, &mut out, State::Open).await {
                    State::Done(_) => State::Done(reason),
                    _ => State::Interrupted(reason),
                },
            },
        };
    };
    let disconnect = link.disconnected();
    let closed = link.close(reason.clone()).await?;
    Ok(Pumped {
        closed,
        reason,
        disconnect,
    })
}

/// A shutdown came: the link is told, and drained first if it still owes the client.
async fn interrupt<L: Link>(link: &mut L, reason: CloseReason) -> State {
    if link.interrupt(&reason).await {
        State::Interrupted(reason)
    } else {
        State::Done(reason)
    }
}

/// Where the pump writes: the client's side, a buffer for one line, and the spacing.
struct Out<'a, W> {
    output: &'a mut W,
    buf: Vec<u8>,
    spacing: &'a mut Spacing,
}

/// Writes what the upstream gave to the client: the state to go on in, or why it ends.
async fn deliver<W: AsyncWrite + Unpin>(
    incoming: Option<Incoming>,
    out: &mut Out<'_, W>,
    going: State,
) -> State {
    let (line, msg) = match incoming {
        None => return State::Done(CloseReason::ServerExited),
        Some(Incoming::Message(msg)) => (msg.bytes(), msg),
        // A remote's refusals reach the pump as the JSON-RPC errors the client is given:
        // its callers put `upstream::refusals::Refusals` beneath their layers, so that
        // the tap records what the client got. No other upstream refuses.
        Some(Incoming::Refused { .. }) => return going,
        Some(Incoming::Event(_)) => return going,
    };
    // An answer right after a notification waits for the client to read the
    // notification: the TypeScript SDK drops progress that shares a read with its answer.
    out.spacing.before(msg.kind()).await;
    // One write per line: a client that reads a line at a time sees whole lines. A
    // line a fault marked slow goes in small pieces instead ([`slow`]).
    let (output, buf) = (&mut *out.output, &mut out.buf);
    buf.clear();
    buf.extend_from_slice(&line);
    buf.push(b'\n');
    let written = if msg.is_slow() {
        write_slowly(output, buf).await
    } else {
        output.write_all(buf).await.is_ok() && output.flush().await.is_ok()
    };
    if !written {
        return State::Done(CloseReason::ClientStoppedReading);
    }
    going
}

/// Writes `bytes` in pieces with a pause between them ([`slow`]), each piece flushed;
/// false when the client stopped reading.
async fn write_slowly<W: AsyncWrite + Unpin>(output: &mut W, bytes: &[u8]) -> bool {
    for (n, piece) in slow::pieces(bytes.len()).enumerate() {
        if n > 0 {
            tokio::time::sleep(slow::SLOW_PAUSE).await;
        }
        if output.write_all(&bytes[piece]).await.is_err() || output.flush().await.is_err() {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests;
