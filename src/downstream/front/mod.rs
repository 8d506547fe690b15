//! The HTTP front: a local Streamable HTTP endpoint an agent points at
//! (`mcptape proxy --listen 127.0.0.1:PORT`), forwarding to a remote server
//! (`--url`) or, in replay mode, answering from the tape with no upstream at all.
//!
//! Every HTTP session (`Mcp-Session-Id`, given by the front on `initialize`) is one
//! connection of the tape. A POSTed request is answered with an SSE stream that carries
//! what belongs to it — server requests and notifications first, then its response —
//! and ends after the response; a POSTed notification or response gets `202 Accepted`.
//! `GET` opens the session's GET stream, for what the server sends outside any request
//! ([`get`]). `DELETE` ends the session.
//! A sessionless request of the stateless revision (2026-07-28) is an exchange of its
//! own, a session that ends with it ([`stateless`]).
//!
//! Parts, one role each:
//! - [`accept`]: the accept loop — connections, the idle [`crate::downstream::front::idle::Reaper`], and the
//!   shutdown future that stops it;
//! - [`handler`]: the hyper handler — guard, method, body, the session's lookup or start,
//!   the answer;
//! - [`get`]: the session's GET stream — its event ids, what is kept for a client that
//!   resumes it (`Last-Event-ID`), one per session;
//! - [`session`]: one task per session that owns its [`Link`](crate::upstream::Link) — a
//!   [`Layered`](crate::layer::Layered) [`HttpLink`](crate::upstream::http::HttpLink) when
//!   forwarding, a [`ReplayLink`](crate::upstream::replay::ReplayLink) when replaying — and
//!   routes what comes back to the streams that wait for it;
//! - [`state`]: what they share — the source, the sessions by id, what ended ones found.
//!
//! When forwarding with a tape, each session has its own
//! [`RecordSession`](crate::record::session::RecordSession), whose tap is
//! the first layer: it sees each client message before the upstream does and each server
//! message before the client does. What is refused before a session sees a request
//! (`Origin`, `Host`, a slow or large body) is [`crate::downstream::front::guard`]; the connection bound,
//! the `EMFILE` pause and the header timeout are [`crate::downstream::front::listen`]; when a session counts
//! as abandoned is [`crate::downstream::front::idle`].

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::task::JoinSet;

use crate::downstream::front::guard::Guard;
use crate::downstream::front::listen::Limits;
use crate::error::{Error, Result};

pub mod accept;
pub mod get;
pub mod guard;
pub mod handler;
pub mod idle;
pub mod listen;
pub mod progress;
pub mod session;
pub mod state;
pub mod stateless;

pub use state::{Front, Served, Source};

/// How long the front waits at shutdown, in all, for its sessions to end (their upstream
/// `DELETE`s). Their recordings end before their `DELETE`s, and are always waited for.
pub const END_GRACE: Duration = Duration::from_secs(5);

/// What a shutdown future resolves to: the future of a second stop signal, which cuts
/// short the wait for the sessions' ends ([`END_GRACE`]).
pub struct Stop<G>(pub G);

/// Serves the front on `addr` until `shutdown` resolves: [`serve_on`] a listener bound
/// there.
pub async fn serve<F, G>(
    addr: SocketAddr,
    server: &str,
    source: Source,
    limits: Limits,
    shutdown: F,
) -> Result<Served>
where
    F: Future<Output = Stop<G>>,
    G: Future<Output = ()>,
{
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| Error::Io {
            what: format!("cannot listen on {addr}"),
            source,
        })?;
    serve_on(listener, server, source, limits, shutdown).await
}

/// Serves the front on `listener` until `shutdown` resolves; returns the verdicts of the
/// replayed sessions and what went wrong with the recorded ones. `shutdown` resolves to
/// a [`Stop`] holding a second future — a second stop signal — that cuts short the wait at the end: the
/// open sessions are ended and their tasks (upstream `DELETE`s) awaited, at most
/// [`END_GRACE`], or until that second future resolves. Every session's recording is
/// ended (its close written, the tape synced, its error kept) however its `DELETE` goes.
pub async fn serve_on<F, G>(
    listener: tokio::net::TcpListener,
    server: &str,
    source: Source,
    limits: Limits,
    shutdown: F,
) -> Result<Served>
where
    F: Future<Output = Stop<G>>,
    G: Future<Output = ()>,
{
    let local = listener.local_addr().map_err(|source| Error::Io {
        what: "cannot listen: no local address".into(),
        source,
    })?;
    if !local.ip().is_loopback() {
        crate::term::eprintln_escaped!(
            "mcptape: warning: listening on {local}, which is not a loopback address"
        );
    }
    crate::term::eprintln_escaped!("mcptape: listening on http://{local}/mcp (server `{server}`)");
    let claims = match &source {
        Source::Replay { report: None, .. } => tempfile::tempdir().ok(),
        _ => None,
    };
    let front = Arc::new(Front {
        server: server.to_owned(),
        source,
        claims,
        limits,
        guard: Guard::new(local),
        sessions: Mutex::new(HashMap::new()),
        tasks: Mutex::new(JoinSet::new()),
        ended: Mutex::new(Vec::new()),
        give_up: tokio::sync::watch::Sender::new(false),
        stateless: stateless::Stateless::default(),
    });
    let Stop(rest) = accept::run(listener, Arc::clone(&front), shutdown).await;
    Ok(front.finish(END_GRACE, rest).await)
}

#[cfg(test)]
mod tests;
