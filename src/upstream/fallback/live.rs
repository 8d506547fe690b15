//! The real server behind `--record-mode new`: the proxy's own command or its `--url`,
//! started only when a request does not match the tape. Its `$transport/start` carries
//! `"added": "record-mode new"`, the mark of a connection the replay added to the tape.

use bytes::Bytes;
use serde_json::Value;

use crate::error::{LinkError, ProcessError, Result};
use crate::message::Message;
use crate::tape::close::CloseReason;
use crate::tape::lifecycle::LifecycleKind;
use crate::upstream::child::ChildLink;
use crate::upstream::http::{HttpLink, Remote};
use crate::upstream::refusals::Refusals;
use crate::upstream::{Closed, Event, Incoming, Link};

/// The value of `"added"` on the `$transport/start` of a connection `new` appended.
pub const ADDED_MARK: &str = "record-mode new";

/// Where the real server is: what the proxy would have started without a tape.
#[derive(Debug, Clone)]
pub enum LiveServer {
    /// A stdio server's command line.
    Command(Vec<String>),
    /// A Streamable HTTP server.
    Url {
        /// Its URL.
        url: String,
        /// Headers sent with every request.
        headers: Vec<(String, String)>,
    },
}

impl LiveServer {
    /// What it is, for messages.
    pub fn describe(&self) -> String {
        match self {
            LiveServer::Command(argv) => format!("`{}`", crate::process::display(argv)),
            LiveServer::Url { url, .. } => format!("`{url}`"),
        }
    }

    /// Starts it (spawns the command, or makes the remote's client).
    pub fn start(&self, max_line: usize) -> Result<Live, String> {
        match self {
            LiveServer::Command(argv) if argv.is_empty() => {
                Err("the proxy was given no server command (`-- CMD`) or --url".into())
            }
            LiveServer::Command(argv) => ChildLink::spawn(argv, &[], None, max_line)
                .map(Live::Child)
                .map_err(|e: ProcessError| crate::error::chain(&e)),
            LiveServer::Url { url, headers } => Remote::new(url, headers.clone())
                .map(|remote| Live::Http(Refusals(HttpLink::new(remote).listening())))
                .map_err(|e| crate::error::chain(&e)),
        }
    }
}

/// The started real server: it only delegates, adding the mark to its start.
// One per proxy: the size difference between the variants costs nothing.
#[allow(clippy::large_enum_variant)]
pub enum Live {
    /// A server process.
    Child(ChildLink),
    /// A remote server.
    Http(Refusals<HttpLink>),
}

/// Runs `$body` with `$link` bound to whichever server `$live` holds.
macro_rules! each {
    ($live:expr, $link:ident => $body:expr) => {
        match $live {
            Live::Child($link) => $body,
            Live::Http($link) => $body,
        }
    };
}

impl Link for Live {
    fn started(&self) -> Option<Event> {
        let (kind, mut params) = each!(self, link => link.started())?;
        if kind == LifecycleKind::Start
            && let Value::Object(members) = &mut params
        {
            members.insert("added".into(), Value::from(ADDED_MARK));
        }
        Some((kind, params))
    }

    async fn send(&mut self, msg: Message) -> Result<(), LinkError> {
        each!(self, link => link.send(msg).await)
    }

    async fn next(&mut self) -> Option<Incoming> {
        each!(self, link => link.next().await)
    }

    async fn oversize(&mut self, len: usize, prefix: Bytes) {
        each!(self, link => link.oversize(len, prefix).await)
    }

    async fn cancel(&mut self, id: &str) {
        each!(self, link => link.cancel(id).await)
    }

    async fn end_input(&mut self) {
        each!(self, link => link.end_input().await)
    }

    async fn interrupt(&mut self, reason: &CloseReason) -> bool {
        each!(self, link => link.interrupt(reason).await)
    }

    async fn close(self, reason: CloseReason) -> Result<Closed> {
        each!(self, link => link.close(reason).await)
    }
}
