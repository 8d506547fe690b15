//! The stdio front of a remote server (`proxy --url`): each line the client writes is
//! POSTed as it is, and what comes back — in the client's order, one line per message —
//! is written to the client and tapped after it is written.

use std::sync::PoisonError;

use super::*;
use crate::layer::Layers;
use crate::tape::close::{Close, CloseReason, CloseStatus};

/// The layer stack, shared by the reader of the client's lines and the writer to it;
/// only watching layers are driven here, each told of a line after it was forwarded.
#[derive(Clone)]
struct Watch(Option<Arc<Mutex<Layers>>>);

impl Watch {
    fn with(&self, f: impl FnOnce(&mut Layers)) {
        if let Some(layers) = &self.0 {
            f(&mut layers.lock().unwrap_or_else(PoisonError::into_inner));
        }
    }
}

/// What the stdio front's writer gets, in order: lines for the client (tapped once
/// written) and HTTP facts for the tape (so the tape keeps the order they happened in).
enum Out {
    Line(Bytes),
    Event(Event),
}

/// The stdio front's side: the remote, the tap, and the ordered queue to the client.
struct Front {
    remote: Remote,
    out: mpsc::UnboundedSender<Out>,
}

impl Front {
    fn to_client(&self, text: &[u8]) {
        let text = one_line(text);
        let mut line = BytesMut::with_capacity(text.len() + 1);
        line.extend_from_slice(&text);
        line.extend_from_slice(b"\n");
        let _ = self.out.send(Out::Line(line.freeze()));
    }

    async fn post(self: Arc<Self>, body: Bytes) {
        let request = Message::new(body.clone());
        let result = self
            .remote
            .post(body, &mut |m| self.to_client(m), &mut |e| {
                drop(self.out.send(Out::Event(e)))
            })
            .await;
        if let Err(why) = result
            && let Some(line) = error_for(&request, &why)
        {
            self.to_client(&line);
        }
    }
}

/// Runs a stdio front for the server at `url` until the client hangs up; returns the exit
/// status (0, or 1 when the server could never be reached).
pub async fn relay(
    url: &str,
    headers: Vec<(String, String)>,
    layers: Layers,
    max_line: usize,
) -> Result<u8> {
    let tap = Watch((!layers.is_empty()).then(|| Arc::new(Mutex::new(layers))));
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Out>();
    let shared = Arc::new(Front {
        remote: Remote::new(url, headers)?,
        out: out_tx,
    });
    tap.with(|l| l.event(&(LifecycleKind::Start, json!({"url": url}))));
    let writer_tap = tap.clone();
    let writer = tokio::spawn(async move {
        let mut stdout = stdio::stdout();
        while let Some(out) = out_rx.recv().await {
            match out {
                Out::Line(line) => {
                    if stdout.write_all(&line).await.is_err() || stdout.flush().await.is_err() {
                        return false;
                    }
                    writer_tap.with(|l| l.watch(Direction::Recv, line));
                }
                Out::Event((method, params)) => {
                    writer_tap.with(|l| l.event(&(method, params)));
                }
            }
        }
        true
    });
    let mut input =
        FramedRead::with_capacity(stdio::stdin(), LineCodec::new(max_line), READ_BUFFER_BYTES);
    let mut signals = Signals::new()?;
    let mut inflight = tokio::task::JoinSet::new();
    // Requests under way, by id: a client's cancellation closes the request's stream
    // (how the stateless protocol cancels) besides being forwarded.
    let mut by_id: std::collections::HashMap<String, tokio::task::AbortHandle> =
        std::collections::HashMap::new();
    let mut listener: Option<tokio::task::JoinHandle<()>> = None;
    let mut reason = CloseReason::ClientClosedStdin;
    loop {
        tokio::select! {
            frame = input.next() => match frame {
                Some(Ok(Frame::Line(line))) => {
                    let text = framing::content(&line);
                    if text.trim_ascii().is_empty() {
                        continue;
                    }
                    let body = Bytes::copy_from_slice(text);
                    tap.with(|l| l.watch(Direction::Send, line.clone()));
                    let msg = Message::new(body.clone());
                    if msg.method() == Some("notifications/cancelled")
                        && let Some(id) = crate::message::raw_member(msg.text(), &["params", "requestId"])
                        && let Some(task) = by_id.remove(id)
                    {
                        task.abort();
                    }
                    if msg.kind() == crate::message::Kind::Request {
                        let task = inflight.spawn(Arc::clone(&shared).post(body));
                        if let Some(id) = msg.id() {
                            by_id.insert(id.to_owned(), task);
                        }
                    } else {
                        // Notifications and answers go in the order the client wrote
                        // them (a server may refuse requests before `initialized`).
                        Arc::clone(&shared).post(body).await;
                    }
                    by_id.retain(|_, t| !t.is_finished());
                    if listener.is_none() && shared.remote.has_session() {
                        let front = Arc::clone(&shared);
                        listener = Some(tokio::spawn(async move {
                            // The server may close it at any time; reopen it a few times.
                            // A server that refuses the stream (405) is not asked again.
                            for _ in 0..GET_STREAM_OPENINGS {
                                if !front.remote.listen(&mut |m| front.to_client(m), &mut |e| drop(front.out.send(Out::Event(e)))).await {
                                    break;
                                }
                            }
                        }));
                    }
                }
                Some(Ok(Frame::Long { bytes, last, .. })) => {
                    // Too long to hold: never sent whole; its request (if one) is refused.
                    if last {
                        crate::term::eprintln_escaped!("mcptape: warning: a client line over {max_line} bytes was not sent to `{url}`");
                    }
                    let _ = bytes;
                }
                Some(Err(_)) | None => break,
            },
            sig = signals.recv() => {
                reason = CloseReason::Signal(sig);
                break;
            }
            Some(_) = inflight.join_next(), if !inflight.is_empty() => {}
        }
    }
    // The GET stream never ends by itself; what is under way may finish, within a grace.
    if let Some(l) = listener {
        l.abort();
    }
    let _ = tokio::time::timeout(DRAIN_GRACE, async {
        while inflight.join_next().await.is_some() {}
    })
    .await;
    inflight.abort_all();
    shared.remote.end().await;
    tap.with(|l| l.close(&Close::new(reason, CloseStatus::Unknown)));
    drop(shared);
    let _ = writer.await;
    Ok(0)
}
