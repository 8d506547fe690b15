//! Sessionless requests of the stateless revision (2026-07-28) through the front
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports>).
//!
//! A POST with no `Mcp-Session-Id` whose message is not `initialize` and names a
//! protocol version of the stateless revision (the `MCP-Protocol-Version` header, or
//! `params._meta["io.modelcontextprotocol/protocolVersion"]`: [`crate::era::Era`]) is an
//! **exchange**: it gets a session of its own that ends with it. Forwarding, that
//! session's link is an [`HttpLink`] with no session id (the client's version header
//! goes on with it when the body names none), behind the tap: the tape gets the exchange
//! as its own connection — `$transport/start`, the request, what came back, `$transport/close`
//! with `exchange done` — so nothing is lost and the ids of different clients never
//! collide. Replaying, its link is a [`StatelessLink`] over the exchanges of the tape,
//! shared by every sessionless request ([`crate::upstream::replay::stateless`]).
//!
//! The answer is the upstream's (an SSE stream, or its status on refusal) with no
//! `Mcp-Session-Id`. A sessionless notification or answer is forwarded the same way and
//! gets `202 Accepted`. A client that closes a request's stream cancels it: the upstream
//! POST is dropped and `$http/cancelled` recorded, then the exchange ends. A sessionless
//! message that is not stateless keeps the `400` of
//! [`crate::downstream::front::guard::Rejection::SessionRequired`].

use std::sync::{Arc, Mutex, OnceLock};

use hyper::StatusCode;

use crate::era::{self, Era};
use crate::layer::Layered;
use crate::message::Message;
use crate::record::session::RecordSession;
use crate::tape::lifecycle::Start;
use crate::upstream::http::{HttpLink, Remote};
use crate::upstream::replay::stateless::{Exchanges, Shared, StatelessLink};
use crate::verdict::Verdict;

use super::session::{self, SessionHandle};
use super::state::{Front, Source};

/// The replay state of the front's sessionless requests, made on the first one.
#[derive(Default)]
pub struct Stateless {
    exchanges: OnceLock<Shared>,
}

impl Stateless {
    /// The verdicts of the exchanges replayed (none when there was none).
    pub fn verdicts(&self) -> Vec<Verdict> {
        self.exchanges
            .get()
            .and_then(|e| e.lock().ok().map(|e| e.verdicts()))
            .unwrap_or_default()
    }
}

/// True when `msg`, sent with no session and with the `MCP-Protocol-Version` header
/// `version`, is a request (or notification) of the stateless revision.
pub fn is_stateless(msg: &Message, version: Option<&str>) -> bool {
    Era::of(msg, version) == Era::Stateless
}

impl Front {
    /// Starts the session of one exchange (`msg`, sent with the version header
    /// `version`): its handle, or the status and text of the answer that says why not.
    pub(super) fn open_exchange(
        &self,
        msg: &Message,
        version: Option<&str>,
    ) -> std::result::Result<SessionHandle, (StatusCode, String)> {
        let id = crate::ids::session_id().map_err(|e| {
            eprintln!("mcptape: error: {}", crate::error::chain(&e));
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "no exchange id".to_owned(),
            )
        })?;
        let give_up = self.give_up.subscribe();
        let (session, task) = match &self.source {
            Source::Forward {
                url,
                headers,
                record,
                stack,
            } => {
                let recording = self
                    .recording(record.as_ref())
                    .map_err(|e| (StatusCode::BAD_GATEWAY, crate::error::chain(&e)))?;
                let mut headers = headers.clone();
                if let (None, Some(v)) = (era::body_version(msg), version) {
                    headers.push(("MCP-Protocol-Version".to_owned(), v.to_owned()));
                }
                let remote = Remote::new(url, headers)
                    .map_err(|e| (StatusCode::BAD_GATEWAY, e.to_string()))?;
                let link = HttpLink::new(remote).with_start(Start {
                    url: Some(url.clone()),
                    front: true,
                    ..Start::default()
                });
                let layers = stack.layers(recording.as_ref().map(RecordSession::layer));
                session::spawn(Layered::new(link, layers), recording, give_up)
            }
            Source::Replay {
                tape,
                options,
                stack,
                ..
            } => {
                let shared = self
                    .stateless
                    .exchanges
                    .get_or_init(|| Arc::new(Mutex::new(Exchanges::of(tape, options))));
                let link = Layered::new(
                    StatelessLink::new(Arc::clone(shared)),
                    stack.replay_layers(),
                );
                session::spawn(link, None, give_up)
            }
        };
        // Kept under an id no client is told, so that the front's stop and the idle
        // reaper reach it like any session.
        self.admit(&id, &session, task);
        Ok(session)
    }
}
