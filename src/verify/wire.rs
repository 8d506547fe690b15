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
use crate::message::Message;
use crate::process;
use crate::upstream::http::{self, HttpLink, Remote};
use crate::upstream::{Incoming, Link as _};

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
    Http(Box<HttpLink>),
}

impl Wire {
    /// Sends one message; false when the server can no longer take it.
    pub(super) async fn send(&mut self, text: &str) -> bool {
        match self {
            Wire::Child { stdin, .. } => match stdin.as_mut() {
                Some(pipe) => pipe.write_all(format!("{text}\n").as_bytes()).await.is_ok(),
                None => false,
            },
            // A request is its own POST, whose answer streams in while others wait;
            // notifications and answers go in order.
            Wire::Http(link) => link
                .send(Message::new(Bytes::copy_from_slice(text.as_bytes())))
                .await
                .is_ok(),
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
            Wire::Http(link) => loop {
                match link.next().await? {
                    Incoming::Message(m) => return Some(m.bytes()),
                    Incoming::Refused { request, error } => {
                        if let Some(line) = http::error_for(&request, &error.to_string()) {
                            return Some(Bytes::from(line));
                        }
                    }
                    Incoming::Event(_) => {}
                }
            },
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
            Wire::Http(link) => drop(
                link.close(crate::tape::close::CloseReason::ClientClosedStdin)
                    .await,
            ),
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
                .map(|remote| Wire::Http(Box::new(HttpLink::new(remote))))
                .map_err(|e| crate::error::chain(&e)),
        }
    }
}
