//! The live server's side of a verified connection: a child process over its stdio, or a
//! Streamable HTTP session. Lines go to it, messages come from it.
//!
//! Moved here as it was; the player ([`super::player`]) talks to the server only through
//! [`Wire`], so the wire can become a [`crate::upstream::Link`] without touching the
//! player's logic.

use bytes::Bytes;
use futures_util::StreamExt;
use tokio::io::AsyncWriteExt;
use tokio_util::codec::FramedRead;

use crate::framing::{Frame, LineCodec};
use crate::message::{Kind, Message};
use crate::process;
use crate::upstream::http::Remote;

use super::Target;

/// The live server's side of the conversation: lines to it, messages from it.
// One per verified connection: the size difference between the variants costs nothing.
#[allow(clippy::large_enum_variant)]
pub(super) enum Wire {
    Child {
        server: process::Server,
        stdin: Option<tokio::process::ChildStdin>,
        stdout: FramedRead<tokio::process::ChildStdout, LineCodec>,
    },
    Http {
        remote: std::sync::Arc<Remote>,
        tx: tokio::sync::mpsc::UnboundedSender<Bytes>,
        rx: tokio::sync::mpsc::UnboundedReceiver<Bytes>,
    },
}

impl Wire {
    /// Sends one message; false when the server can no longer take it.
    pub(super) async fn send(&mut self, text: &str) -> bool {
        match self {
            Wire::Child { stdin, .. } => match stdin.as_mut() {
                Some(pipe) => pipe.write_all(format!("{text}\n").as_bytes()).await.is_ok(),
                None => false,
            },
            Wire::Http { remote, tx, .. } => {
                // A request is its own POST, whose answer streams in while others wait;
                // notifications and answers go in order.
                let (remote, tx, body) = (
                    std::sync::Arc::clone(remote),
                    tx.clone(),
                    Bytes::copy_from_slice(text.as_bytes()),
                );
                let request = Message::new(body.clone());
                let is_request = request.kind() == Kind::Request;
                let post = async move {
                    let sink = tx.clone();
                    let result = remote
                        .post(
                            body,
                            &mut |m| {
                                drop(sink.send(Bytes::copy_from_slice(
                                    &crate::upstream::http::one_line(m),
                                )));
                            },
                            &mut |_| {},
                        )
                        .await;
                    if let Err(why) = result
                        && let Some(error) = crate::upstream::http::error_for(&request, &why)
                    {
                        let _ = tx.send(Bytes::from(error));
                    }
                };
                if is_request {
                    tokio::spawn(post);
                } else {
                    post.await;
                }
                true
            }
        }
    }

    /// The next message from the server, `None` when it is gone.
    pub(super) async fn next(&mut self) -> Option<Bytes> {
        match self {
            Wire::Child { stdout, .. } => loop {
                match stdout.next().await {
                    Some(Ok(Frame::Line(b))) => return Some(b),
                    Some(Ok(Frame::Long { .. })) => continue,
                    Some(Err(_)) | None => return None,
                }
            },
            Wire::Http { rx, .. } => rx.recv().await,
        }
    }

    /// Stops the server the MCP way, or ends the HTTP session.
    pub(super) async fn stop(self) {
        match self {
            Wire::Child {
                mut server, stdin, ..
            } => {
                drop(stdin);
                let _ = server.stop().await;
            }
            Wire::Http { remote, .. } => remote.end().await,
        }
    }

    /// Starts the live server (or opens the session) for one connection; the text of the
    /// error chain when it cannot be.
    pub(super) fn start(target: &Target, max_line: usize) -> Result<Wire, String> {
        match target {
            Target::Command(argv) => process::spawn_server(argv, &[], None)
                .map(|mut server| Wire::Child {
                    stdin: server.child.stdin.take(),
                    stdout: FramedRead::new(
                        server.child.stdout.take().expect("stdout is piped"),
                        LineCodec::new(max_line),
                    ),
                    server,
                })
                .map_err(|e| crate::error::chain(&e)),
            Target::Url(url, headers) => Remote::new(url, headers.clone())
                .map(|remote| {
                    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
                    Wire::Http {
                        remote: std::sync::Arc::new(remote),
                        tx,
                        rx,
                    }
                })
                .map_err(|e| crate::error::chain(&e)),
        }
    }
}
