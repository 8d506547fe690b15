//! The HTTP front: a local Streamable HTTP endpoint an agent points at
//! (`mcptape proxy --listen 127.0.0.1:PORT`), forwarding to a remote server
//! (`--url`) or, in replay mode, answering from the tape with no upstream at all.
//!
//! Every HTTP session (`Mcp-Session-Id`, given by the front on `initialize`) is one
//! connection of the tape. A POSTed request is answered with an SSE stream that carries
//! what belongs to it — server requests and notifications first, then its response —
//! and ends after the response; a POSTed notification or response gets `202 Accepted`.
//! `DELETE` ends the session. Only POST and DELETE are served (no GET stream yet).
//!
//! Parts, one role each:
//! - [`accept`]: the accept loop — connections, the idle [`crate::idle::Reaper`], and the
//!   shutdown future that stops it;
//! - [`handler`]: the hyper handler — guard, method, body, the session's lookup or start,
//!   the answer;
//! - [`session`]: one task per session that owns its [`Link`](crate::upstream::Link) — a
//!   [`Layered`] [`HttpLink`] when forwarding, a [`ReplayLink`] when replaying — and
//!   routes what comes back to the streams that wait for it.
//!
//! When forwarding with a tape, each session has its own [`RecordSession`], whose tap is
//! the first layer: it sees each client message before the upstream does and each server
//! message before the client does. What is refused before a session sees a request
//! (`Origin`, `Host`, a slow or large body) is [`crate::guard`]; the connection bound,
//! the `EMFILE` pause and the header timeout are [`crate::listen`]; when a session counts
//! as abandoned is [`crate::idle`].

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper::{Response, StatusCode};
use serde_json::json;
use tokio::task::JoinSet;

use crate::error::{Error, Result};
use crate::guard::Guard;
use crate::layer::{Layered, Layers};
use crate::listen::Limits;
use crate::record::session::RecordSession;
use crate::tape::ServerTape;
use crate::tape::close::CloseReason;
use crate::upstream::http::{HttpLink, Remote};
use crate::upstream::pick::Picker;
use crate::upstream::replay::Options;
use crate::upstream::replay::ReplayLink;
use crate::verdict::Verdict;

pub mod accept;
pub mod handler;
pub mod session;

pub use crate::guard::MAX_BODY_BYTES;
use session::{Ended, SessionHandle};

/// How long the front waits at shutdown, in all, for its sessions to end (their upstream
/// `DELETE`s, their recordings).
pub const END_GRACE: Duration = Duration::from_secs(5);

/// Where answers come from.
pub enum Source {
    /// A remote server; recorded into `tape` when given.
    Forward {
        /// The server's URL.
        url: String,
        /// Headers for every request to it.
        headers: Vec<(String, String)>,
        /// Recording: the tape and how to write it.
        record: Option<(PathBuf, crate::mode::Recording)>,
    },
    /// The tape, with no upstream.
    Replay {
        /// The loaded tape.
        tape: Arc<ServerTape>,
        /// How to match.
        options: Options,
        /// Where verdicts go.
        report: Option<PathBuf>,
    },
}

/// What a shutdown future resolves to: the future of a second stop signal, which cuts
/// short the wait for the sessions' ends ([`END_GRACE`]).
pub struct Stop<G>(pub G);

/// What the front leaves when it stops.
#[must_use = "a recording's result must reach the exit status"]
pub struct Served {
    /// The verdicts of the replayed sessions (empty when forwarding).
    pub verdicts: Vec<Verdict>,
    /// Why recordings are incomplete (empty when they are whole, or none was made).
    pub tape_errors: Vec<String>,
}

/// The front's shared state: where answers come from, and the sessions.
pub struct Front {
    server: String,
    source: Source,
    /// Claims of recorded connections among this front's sessions, when no `replay`
    /// parent gave a report directory: each session gets its own recorded connection.
    claims: Option<tempfile::TempDir>,
    limits: Limits,
    guard: Guard,
    sessions: Mutex<HashMap<String, SessionHandle>>,
    /// The sessions' tasks, awaited before [`serve`] returns.
    tasks: Mutex<JoinSet<Ended>>,
    /// What ended sessions found.
    ended: Mutex<Vec<Ended>>,
}

impl Front {
    /// The session `id`, while it lasts.
    fn get(&self, id: &str) -> Option<SessionHandle> {
        let sessions = self.sessions.lock().ok()?;
        sessions.get(id).filter(|s| !s.is_over()).cloned()
    }

    /// Takes the session `id` out (to end it); None when it is unknown or over.
    fn remove(&self, id: &str) -> Option<SessionHandle> {
        let mut sessions = self.sessions.lock().ok()?;
        sessions.remove(id).filter(|s| !s.is_over())
    }

    /// Starts a session (an `initialize` without a session id): its id and handle, or
    /// the answer that says why it could not start.
    fn open(&self) -> std::result::Result<(String, SessionHandle), Box<Response<handler::Body>>> {
        let fail =
            |status, text: String| Box::new(handler::full(status, format!("mcptape: {text}\n")));
        let id = crate::ids::session_id().map_err(|e| {
            eprintln!("mcptape: error: {}", crate::error::chain(&e));
            fail(StatusCode::INTERNAL_SERVER_ERROR, "no session id".into())
        })?;
        let (session, task) = match self.start() {
            Ok(started) => started,
            Err(e) => return Err(fail(StatusCode::BAD_GATEWAY, crate::error::chain(&e))),
        };
        if let Ok(mut tasks) = self.tasks.lock() {
            while let Some(done) = tasks.try_join_next() {
                self.keep(done.unwrap_or_default());
            }
            tasks.spawn(async move { task.await.unwrap_or_default() });
        }
        if let Ok(mut sessions) = self.sessions.lock() {
            // Sessions that ended on their own (a 404, a refused initialize) go now.
            sessions.retain(|_, s| !s.is_over());
            sessions.insert(id.clone(), session.clone());
        }
        Ok((id, session))
    }

    /// Starts a session's task over the link its source gives.
    fn start(&self) -> Result<(SessionHandle, tokio::task::JoinHandle<Ended>)> {
        match &self.source {
            Source::Forward {
                url,
                headers,
                record,
            } => {
                let recording = match record {
                    Some((path, how)) => Some(
                        RecordSession::open(path, &self.server, how)
                            .inspect_err(|e| self.keep_error(crate::error::chain(e)))?,
                    ),
                    None => None,
                };
                let remote =
                    Remote::new(url, headers.clone()).map_err(crate::upstream::http::http_usage)?;
                let link = HttpLink::new(remote).with_start(json!({"url": url, "front": "http"}));
                let layers = Layers::new().push_some(recording.as_ref().map(RecordSession::layer));
                Ok(session::spawn(Layered::new(link, layers), recording))
            }
            Source::Replay {
                tape,
                options,
                report,
            } => {
                let claims = self.claims.as_ref().map(tempfile::TempDir::path);
                let dir = report.as_deref().or(claims);
                let picker = Picker::new(Arc::clone(tape), &self.server, dir, options);
                Ok(session::spawn(ReplayLink::new(picker, false), None))
            }
        }
    }

    /// Ends the sessions idle for longer than `limit` (and forgets those already over).
    fn expire_idle(&self, limit: Duration) {
        let Ok(mut sessions) = self.sessions.lock() else {
            return;
        };
        sessions.retain(|_, s| !s.is_over());
        let idle = crate::idle::expired(sessions.iter().map(|(id, s)| (id, s.activity())), limit);
        for id in idle {
            if let Some(session) = sessions.remove(&id) {
                session.end(CloseReason::SessionIdle(limit));
            }
        }
    }

    fn keep(&self, ended: Ended) {
        if let Ok(mut all) = self.ended.lock() {
            all.push(ended);
        }
    }

    fn keep_error(&self, why: String) {
        self.keep(Ended {
            verdict: None,
            tape_error: Some(why),
        });
    }

    /// Ends every session and waits for their tasks, at most `grace`, or until `rest`
    /// (a second stop signal) comes; says on stderr how many were left.
    async fn finish(&self, grace: Duration, rest: impl Future<Output = ()>) -> Served {
        let open: Vec<SessionHandle> = self
            .sessions
            .lock()
            .map(|mut s| s.drain().map(|(_, s)| s).collect())
            .unwrap_or_default();
        for session in open {
            session.end(CloseReason::SessionEnded);
        }
        let mut tasks = self
            .tasks
            .lock()
            .map(|mut t| std::mem::take(&mut *t))
            .unwrap_or_default();
        let all = async {
            while let Some(done) = tasks.join_next().await {
                self.keep(done.unwrap_or_default());
            }
        };
        tokio::select! {
            _ = tokio::time::timeout(grace, all) => {}
            () = rest => {}
        }
        let abandoned = tasks.len();
        if abandoned > 0 {
            crate::term::eprintln_escaped!(
                "mcptape: warning: {abandoned} upstream session(s) not deleted within {} s of the stop signal",
                grace.as_secs()
            );
        }
        let ended = self
            .ended
            .lock()
            .map(|mut e| std::mem::take(&mut *e))
            .unwrap_or_default();
        let mut served = Served {
            verdicts: Vec::new(),
            tape_errors: Vec::new(),
        };
        for e in ended {
            served.verdicts.extend(e.verdict);
            served.tape_errors.extend(e.tape_error);
        }
        served
    }
}

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
/// open sessions are ended and their tasks (upstream `DELETE`s, recordings) awaited, at
/// most [`END_GRACE`], or until that second future resolves.
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
    });
    let Stop(rest) = accept::run(listener, Arc::clone(&front), shutdown).await;
    Ok(front.finish(END_GRACE, rest).await)
}

#[cfg(test)]
mod tests;
