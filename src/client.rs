//! The built-in MCP client behind `call` and `tools`: the same upstreams as the proxy (a
//! child server process with the recording tap, or the replay engine), in one process.
//!
//! The messages it sends are fixed for a given command line — `initialize` (id 0),
//! `notifications/initialized`, then its requests (ids 1, 2, …), then a clean close — so
//! a recorded call replays. It declares no client capabilities; a server request other
//! than `ping` gets a method-not-found error. Progress and log notifications go to stderr.

use std::collections::VecDeque;
use std::process::ExitStatus;

use bytes::Bytes;
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::process::{ChildStdin, ChildStdout};
use tokio_util::codec::FramedRead;

use crate::config::ServerEntry;
use crate::framing::{self, Frame, LineCodec};
use crate::message::{self, Kind, Message, Shape};
use crate::process::{self, Server};
use crate::record::tap::TapHandle;
use crate::tape::Direction;
use crate::tape::close::{Close, CloseReason, CloseStatus};
use crate::tape::lifecycle::LifecycleKind;
use crate::upstream::http::{self, HttpLink, Remote};
use crate::upstream::pick::Picker;
use crate::upstream::{Incoming, Link as _};
use crate::verdict::Verdict;

/// The protocol version the client asks for.
pub const PROTOCOL_VERSION: &str = "2025-11-25";

pub use crate::error::ClientError;

/// An answer to a request.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The response line exactly as the server wrote it.
    pub raw: String,
    /// It, parsed.
    pub value: Value,
}

impl Reply {
    /// The JSON-RPC error, if the answer is one.
    pub fn error(&self) -> Option<&Value> {
        self.value.get("error")
    }
}

// One link per process: the size difference between the variants costs nothing.
#[allow(clippy::large_enum_variant)]
enum Link {
    Child {
        server: Server,
        stdin: Option<ChildStdin>,
        stdout: FramedRead<ChildStdout, LineCodec>,
        tap: Option<TapHandle>,
    },
    Replay {
        engine: Box<Picker>,
        queue: VecDeque<Vec<u8>>,
    },
    Http {
        /// The session; messages and HTTP facts from every POST under way come out of
        /// it as they arrive.
        link: Box<HttpLink>,
        tap: Option<TapHandle>,
    },
}

/// How a session ended.
#[derive(Debug)]
pub enum Closed {
    /// The server process exited with this status.
    Child(ExitStatus),
    /// The replay engine's verdict.
    Replay(Box<Verdict>),
    /// The remote session was ended.
    Remote,
}

/// One client↔server conversation.
pub struct Session {
    link: Link,
    name: String,
    next_id: u64,
    /// Progress notifications go to stderr (for people; off for machine output).
    show_progress: bool,
}

impl Session {
    /// Starts `argv` as the server `name`; records through `tap` when given.
    pub fn start(
        name: &str,
        entry: &ServerEntry,
        tap: Option<TapHandle>,
        max_line: usize,
    ) -> crate::error::Result<Session> {
        if let Some(url) = &entry.url {
            let remote = Remote::new(url, entry.headers.clone()).map_err(http::http_usage)?;
            let link = HttpLink::new(remote);
            if let Some(tap) = &tap
                && let Some((kind, params)) = link.started()
            {
                tap.lifecycle(kind, params);
            }
            return Ok(Session {
                link: Link::Http {
                    link: Box::new(link),
                    tap,
                },
                name: name.to_owned(),
                next_id: 0,
                show_progress: true,
            });
        }
        let argv = entry.argv();
        let mut server = match process::spawn_server(&argv, &entry.env, entry.cwd.as_deref()) {
            Ok(s) => s,
            Err(e) => {
                if let Some(tap) = &tap {
                    tap.lifecycle(LifecycleKind::Start, json!({"command": argv}));
                    tap.close(&Close::new(
                        CloseReason::StartFailed(crate::error::chain(&e)),
                        CloseStatus::Unknown,
                    ));
                }
                return Err(e.into());
            }
        };
        if let Some(tap) = &tap {
            tap.lifecycle(
                LifecycleKind::Start,
                json!({"command": argv, "pid": server.pid}),
            );
        }
        let stdin = server.child.stdin.take();
        let stdout = FramedRead::new(
            server.child.stdout.take().expect("stdout is piped"),
            LineCodec::new(max_line),
        );
        Ok(Session {
            link: Link::Child {
                server,
                stdin,
                stdout,
                tap,
            },
            name: name.to_owned(),
            next_id: 0,
            show_progress: true,
        })
    }

    /// A session answered by the replay engine.
    pub fn replay(name: &str, mut engine: Picker) -> Session {
        let queue = engine.start().into_iter().map(|o| o.line).collect();
        Session {
            link: Link::Replay {
                engine: Box::new(engine),
                queue,
            },
            name: name.to_owned(),
            next_id: 0,
            show_progress: true,
        }
    }

    async fn send(&mut self, value: &Value) -> Result<(), ClientError> {
        let mut line = value.to_string();
        line.push('\n');
        match &mut self.link {
            Link::Child { stdin, tap, .. } => {
                let Some(pipe) = stdin.as_mut() else {
                    return Ok(());
                };
                let write_err = |source| ClientError::Write {
                    server: self.name.clone(),
                    source,
                };
                pipe.write_all(line.as_bytes()).await.map_err(write_err)?;
                if let Some(tap) = tap {
                    tap.line(Direction::Send, Bytes::from(line));
                }
            }
            Link::Replay { engine, queue } => {
                let out = engine.on_client(framing::content(line.as_bytes()));
                queue.extend(out.into_iter().map(|o| o.line));
            }
            Link::Http { link, tap } => {
                let body = Bytes::copy_from_slice(framing::content(line.as_bytes()));
                if let Some(tap) = tap {
                    tap.line(Direction::Send, Bytes::from(line));
                }
                // The answer streams in while the client goes on (it may have to answer a
                // server's ping inside it); a failure comes back from `recv`.
                let _ = link.send(Message::new(body)).await;
            }
        }
        Ok(())
    }

    /// The next line from the server (without its `\n`), `None` when it is gone.
    async fn recv(&mut self) -> Option<Vec<u8>> {
        match &mut self.link {
            Link::Child { stdout, tap, .. } => loop {
                match stdout.next().await? {
                    Ok(Frame::Line(bytes)) => {
                        if let Some(tap) = tap {
                            tap.line(Direction::Recv, bytes.clone());
                        }
                        return Some(framing::content(&bytes).to_vec());
                    }
                    Ok(Frame::Long { last, .. }) => {
                        if last {
                            crate::term::eprintln_escaped!(
                                "mcptape: warning: server `{}` wrote a line longer than the maximum; skipped",
                                self.name
                            );
                        }
                    }
                    Err(_) => return None,
                }
            },
            Link::Replay { queue, .. } => {
                let line = queue.pop_front()?;
                Some(framing::content(&line).to_vec())
            }
            Link::Http { link, tap } => loop {
                let line = match link.next().await? {
                    Incoming::Message(m) => m.raw().to_vec(),
                    Incoming::Refused { request, error } => {
                        match http::error_for(&request, &error.to_string()) {
                            Some(line) => line,
                            None => continue,
                        }
                    }
                    Incoming::Event((method, params)) => {
                        if let Some(tap) = tap {
                            tap.lifecycle(method, params);
                        }
                        continue;
                    }
                };
                if let Some(tap) = tap {
                    let mut l = line.clone();
                    l.push(b'\n');
                    tap.line(Direction::Recv, Bytes::from(l));
                }
                return Some(line);
            },
        }
    }

    /// Sends a request that asks for progress (`params._meta.progressToken`: the
    /// request's own id, so the line stays the same from run to run) and waits for its
    /// answer, like [`Session::request`].
    pub async fn request_with_progress(
        &mut self,
        method: &str,
        mut params: Value,
    ) -> Result<Reply, ClientError> {
        if let Some(members) = params.as_object_mut() {
            let meta = members.entry("_meta").or_insert_with(|| json!({}));
            meta["progressToken"] = json!(self.next_id);
        }
        self.request(method, params).await
    }

    /// Whether progress notifications are shown on stderr (they are unless turned off).
    pub fn show_progress(&mut self, on: bool) {
        self.show_progress = on;
    }

    /// Sends a notification.
    pub async fn notify(&mut self, method: &str) -> Result<(), ClientError> {
        self.send(&json!({"jsonrpc": "2.0", "method": method}))
            .await
    }

    /// Sends a request and waits for its answer, answering the server's own requests
    /// and showing its notifications meanwhile.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Reply, ClientError> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        let want = id.to_string();
        loop {
            let Some(line) = self.recv().await else {
                return Err(match self.link {
                    Link::Child { .. } => ClientError::Closed {
                        server: self.name.clone(),
                        method: method.to_owned(),
                    },
                    Link::Replay { .. } | Link::Http { .. } => ClientError::NoAnswer {
                        server: self.name.clone(),
                        method: method.to_owned(),
                    },
                });
            };
            if line.trim_ascii().is_empty() {
                continue;
            }
            if message::shape(&line) != Shape::Object {
                let shown = String::from_utf8_lossy(&line[..line.len().min(120)]).into_owned();
                crate::term::eprintln_escaped!(
                    "mcptape: warning: server `{}` wrote a line that is not a JSON-RPC message: {shown}",
                    self.name
                );
                continue;
            }
            let msg = Message::new(line);
            match msg.kind() {
                Kind::Response | Kind::Error if msg.id() == Some(want.as_str()) => {
                    return Ok(Reply {
                        raw: msg.text().to_owned(),
                        value: msg.value(),
                    });
                }
                Kind::Request => self.answer_server_request(&msg).await?,
                Kind::Notification => self.show_notification(&msg),
                _ => {}
            }
        }
    }

    async fn answer_server_request(&mut self, msg: &Message) -> Result<(), ClientError> {
        let id: Value = serde_json::from_str(msg.id().unwrap_or("null")).unwrap_or(Value::Null);
        let answer = match msg.method() {
            Some("ping") => json!({"jsonrpc": "2.0", "id": id, "result": {}}),
            other => json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": -32601,
                "message": format!("mcptape's client does not support {}", other.unwrap_or("?")),
            }}),
        };
        self.send(&answer).await
    }

    fn show_notification(&self, msg: &Message) {
        let v = msg.value();
        let p = &v["params"];
        match msg.method() {
            Some("notifications/progress") if self.show_progress => {
                let total = p["total"]
                    .as_f64()
                    .map(|t| format!("/{t}"))
                    .unwrap_or_default();
                let text = p["message"]
                    .as_str()
                    .map(|m| format!(" {m}"))
                    .unwrap_or_default();
                crate::term::eprintln_escaped!(
                    "mcptape: `{}` progress {}{total}{text}",
                    self.name,
                    p["progress"]
                );
            }
            Some("notifications/message") => {
                crate::term::eprintln_escaped!(
                    "mcptape: `{}` log [{}] {}",
                    self.name,
                    p["level"].as_str().unwrap_or("?"),
                    p["data"]
                );
            }
            _ => {}
        }
    }

    /// The handshake: `initialize`, then `notifications/initialized`.
    pub async fn initialize(&mut self) -> Result<Reply, ClientError> {
        let reply = self
            .request(
                "initialize",
                json!({
                    "protocolVersion": PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "mcptape", "version": env!("CARGO_PKG_VERSION")},
                }),
            )
            .await?;
        if reply.error().is_none() {
            self.notify("notifications/initialized").await?;
        }
        Ok(reply)
    }

    /// Ends the session the MCP way (close the server's stdin, wait, SIGTERM, SIGKILL);
    /// `reason` goes into the tape's close entry.
    pub async fn close(self, reason: CloseReason) -> crate::error::Result<Closed> {
        match self.link {
            Link::Child {
                mut server,
                stdin,
                stdout,
                tap,
            } => {
                drop(stdin);
                let status = server.stop().await?;
                drop(stdout);
                if let Some(tap) = &tap {
                    tap.close(&Close::new(reason, CloseStatus::of(status)));
                }
                Ok(Closed::Child(status))
            }
            Link::Replay { engine, .. } => Ok(Closed::Replay(Box::new(engine.finish()))),
            Link::Http { link, tap } => {
                let _ = link.close(reason.clone()).await;
                if let Some(tap) = &tap {
                    tap.close(&Close::new(reason, CloseStatus::Unknown));
                }
                Ok(Closed::Remote)
            }
        }
    }
}
