//! The built-in MCP client behind `call` and `tools`: one downstream driver over any
//! upstream ([`AnyLink`]: a child server process or a remote server behind the layers —
//! the recording tap when recording — or the replay engine), in one process. The
//! transport logic lives only in the links; the session only sends, and reads what
//! comes back until its answer.
//!
//! The messages it sends are fixed for a given command line — `initialize` (id 0),
//! `notifications/initialized`, then its requests (ids 1, 2, …), then a clean close — so
//! a recorded call replays. It declares no client capabilities; a server request other
//! than `ping` gets a method-not-found error. Progress and log notifications go to stderr.
//! A request the upstream refused (an HTTP failure) is answered with the JSON-RPC error a
//! stdio client would get ([`http::error_for`]), shown to the layers as the server's.
//! Over HTTP (and in replay) it probes for the stateless revision first ([`era`]).

use serde_json::{Value, json};

use crate::config::ServerEntry;
use crate::error::LinkError;
use crate::layer::AnyLink;
use crate::layer::{Layered, Layers};
use crate::message::{self, Kind, Message, Shape};
use crate::tape::close::CloseReason;
use crate::upstream::child::{self, ChildLink};
use crate::upstream::http::{self, HttpLink, Remote};
use crate::upstream::pick::Picker;
use crate::upstream::refusals::Refusals;
use crate::upstream::replay::ReplayLink;
use crate::upstream::{Closed, Incoming, Link as _};

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

/// Where the server's notifications are shown.
enum Notices {
    /// On stderr, escaped.
    Stderr,
    /// Kept, for a test to read.
    #[cfg(test)]
    Kept(Vec<String>),
}

/// One client↔server conversation.
pub struct Session {
    link: AnyLink,
    name: String,
    next_id: u64,
    /// Progress notifications go to stderr (for people; off for machine output).
    show_progress: bool,
    notices: Notices,
    /// The `_meta` every request carries once the server spoke the stateless revision
    /// ([`era`]): its protocol version, client info and capabilities.
    envelope: Option<Value>,
    /// False for a replay of a tape whose client never sent `tools/list` (`mcporter
    /// call`, an older `mcptape call`): `call` then does not list either.
    lists_tools: bool,
    /// The bar of the request that asked for progress, on a terminal: its progress
    /// notifications are drawn there instead of printed one a line.
    bar: crate::progress::Progress,
}

impl Session {
    /// Starts the server `name` as `entry` says (a process, or a remote at its URL)
    /// behind `layers` (the tap when recording); a server that cannot be started is told
    /// to the layers as a start that failed.
    pub fn start(
        name: &str,
        entry: &ServerEntry,
        mut layers: Layers,
        max_line: usize,
    ) -> crate::error::Result<Session> {
        let link = match &entry.url {
            Some(url) => {
                let remote = Remote::new(url, entry.headers.clone()).map_err(http::http_usage)?;
                AnyLink::Http(Layered::new(Refusals(HttpLink::new(remote)), layers))
            }
            None => {
                let argv = entry.argv();
                match ChildLink::spawn(&argv, &entry.env, entry.cwd.as_deref(), max_line) {
                    Ok(link) => AnyLink::Child(Layered::new(link, layers)),
                    Err(e) => {
                        layers.failed_start(child::start_failure(&argv, &e));
                        return Err(e.into());
                    }
                }
            }
        };
        Ok(Session::over(name, link))
    }

    /// A session answered by the replay engine (at once: `call` keeps no pace), behind
    /// `layers`.
    pub fn replay(name: &str, picker: Picker, layers: Layers) -> Session {
        let lists_tools = picker.recorded_sends("tools/list");
        let link = Layered::new(ReplayLink::new(picker, false), layers);
        let mut session = Session::over(name, AnyLink::Replay(link));
        session.lists_tools = lists_tools;
        session
    }

    /// Whether `call` lists the tools before calling: always, but in a replay of a tape
    /// whose client never did.
    pub fn lists_tools(&self) -> bool {
        self.lists_tools
    }

    /// A session of server `name` over `link`.
    fn over(name: &str, link: AnyLink) -> Session {
        Session {
            link,
            name: name.to_owned(),
            next_id: 0,
            show_progress: true,
            notices: Notices::Stderr,
            envelope: None,
            lists_tools: true,
            bar: crate::progress::Progress::off(),
        }
    }

    async fn send(&mut self, value: &Value) -> Result<(), ClientError> {
        let msg = Message::new(value.to_string().into_bytes());
        match self.link.send(msg).await {
            // The writer to the server's stdin stopped: the server no longer reads it.
            Err(LinkError::Gone) => Err(ClientError::Write {
                server: self.name.clone(),
                source: std::io::ErrorKind::BrokenPipe.into(),
            }),
            // A remote's failure comes back from `next`, as a refusal of the request.
            Err(LinkError::Http(_)) | Ok(()) => Ok(()),
        }
    }

    /// What the upstream gives next; `None` when it is gone, or when the replay engine
    /// has nothing for the client (the tape holds no answer to what it waits for).
    async fn incoming(&mut self) -> Option<Incoming> {
        if let AnyLink::Replay(replay) = &self.link
            && replay.inner().is_idle()
            && !replay.is_deciding()
        {
            return None;
        }
        self.link.next().await
    }

    /// The next server message, `None` when the server is gone. Refusals come as the
    /// JSON-RPC errors they are for the client; lines that are not messages are warned
    /// about and skipped.
    async fn recv(&mut self) -> Option<Message> {
        loop {
            let msg = match self.incoming().await? {
                Incoming::Message(msg) => msg,
                // A remote's refusals came as the JSON-RPC errors they are for the client
                // (`Refusals`); no other upstream refuses.
                Incoming::Refused { .. } => continue,
                // Facts for the tape: the layers had them.
                Incoming::Event(_) => continue,
            };
            if let Some(msg) = self.readable(msg) {
                return Some(msg);
            }
        }
    }

    /// `msg` when it is a JSON-RPC message; a blank line is skipped, anything else
    /// warned about.
    fn readable(&self, msg: Message) -> Option<Message> {
        let line = msg.raw();
        if line.trim_ascii().is_empty() {
            return None;
        }
        if message::shape(line) != Shape::Object {
            let shown = String::from_utf8_lossy(&line[..line.len().min(120)]).into_owned();
            crate::term::eprintln_escaped!(
                "mcptape: warning: server `{}` wrote a line that is not a JSON-RPC message: {shown}",
                self.name
            );
            return None;
        }
        Some(msg)
    }

    /// The failure of a request whose answer never came.
    fn unanswered(&self, method: &str) -> ClientError {
        let (server, method) = (self.name.clone(), method.to_owned());
        if self.link.disconnected().is_some() {
            // An injected disconnect: the server went away, replayed or live.
            return ClientError::Closed { server, method };
        }
        match self.link {
            AnyLink::Child(_) => ClientError::Closed { server, method },
            AnyLink::Replay(_) | AnyLink::Http(_) => ClientError::NoAnswer { server, method },
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
        if self.show_progress && matches!(self.notices, Notices::Stderr) {
            let name = params["name"].as_str().map(|t| format!(".{t}"));
            let what = format!("{method} `{}{}`", self.name, name.unwrap_or_default());
            self.bar = crate::progress::Progress::server(&what);
        }
        let reply = self.request(method, params).await;
        self.bar.finish();
        self.bar = crate::progress::Progress::off();
        reply
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
        let params = self.enveloped(params);
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        let want = id.to_string();
        loop {
            let Some(msg) = self.recv().await else {
                return Err(self.unanswered(method));
            };
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

    fn show_notification(&mut self, msg: &Message) {
        if self.bar.is_on() && msg.method() == Some("notifications/progress") {
            return self.bar.server_progress(&msg.value()["params"]);
        }
        let Some(text) = self.notice(msg) else {
            return;
        };
        match &mut self.notices {
            Notices::Stderr => crate::term::eprintln_escaped!("{text}"),
            #[cfg(test)]
            Notices::Kept(kept) => kept.push(text),
        }
    }

    /// What a person is shown of a server notification: progress (unless turned off)
    /// and log messages.
    fn notice(&self, msg: &Message) -> Option<String> {
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
                Some(format!(
                    "mcptape: `{}` progress {}{total}{text}",
                    self.name, p["progress"]
                ))
            }
            Some("notifications/message") => Some(format!(
                "mcptape: `{}` log [{}] {}",
                self.name,
                p["level"].as_str().unwrap_or("?"),
                p["data"]
            )),
            _ => None,
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

    /// Ends the session the way its upstream asks (close the server's stdin, wait,
    /// SIGTERM, SIGKILL; `DELETE` the remote session; the replay's verdict); `reason` goes
    /// into the tape's close entry.
    pub async fn close(self, reason: CloseReason) -> crate::error::Result<Closed> {
        self.link.close(reason).await
    }
}

mod era;

#[cfg(test)]
mod tests;
