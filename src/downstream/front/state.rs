//! The front's shared state: where answers come from ([`Source`]), the sessions by id
//! and their tasks, and what ended sessions found ([`Served`]). The handler and the
//! accept loop reach it; it knows nothing of either.

use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper::StatusCode;

use tokio::task::JoinSet;

use crate::downstream::front::guard::Guard;
use crate::downstream::front::listen::Limits;
use crate::error::Result;
use crate::layer::{Layered, Stack};
use crate::record::session::RecordSession;
use crate::tape::ServerTape;
use crate::tape::close::CloseReason;
use crate::tape::lifecycle::Start;
use crate::upstream::http::{HttpLink, Remote};
use crate::upstream::pick::Picker;
use crate::upstream::replay::{Options, ReplayLink};
use crate::verdict::Verdict;

use super::session::{self, Ended, SessionHandle};

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
        /// The layers below the tap (faults).
        stack: Stack,
    },
    /// The tape, with no upstream.
    Replay {
        /// The loaded tape.
        tape: Arc<ServerTape>,
        /// How to match.
        options: Options,
        /// Where verdicts go.
        report: Option<PathBuf>,
        /// The layers in front of the replay engine (faults).
        stack: Stack,
        /// Keep the recorded delays (`--pace`).
        pace: bool,
    },
}

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
    pub(super) server: String,
    pub(super) source: Source,
    /// Claims of recorded connections among this front's sessions, when no `replay`
    /// parent gave a report directory: each session gets its own recorded connection.
    pub(super) claims: Option<tempfile::TempDir>,
    pub(super) limits: Limits,
    pub(super) guard: Guard,
    pub(super) sessions: Mutex<HashMap<String, SessionHandle>>,
    /// The sessions' tasks, awaited before [`serve`] returns.
    pub(super) tasks: Mutex<JoinSet<Ended>>,
    /// What ended sessions found.
    pub(super) ended: Mutex<Vec<Ended>>,
    /// Said once the wait for the sessions' links to close is over ([`session::GiveUp`]).
    pub(super) give_up: tokio::sync::watch::Sender<bool>,
    /// Sessionless (2026-07-28) requests' shared replay state ([`super::stateless`]).
    pub(super) stateless: super::stateless::Stateless,
}

impl Front {
    /// The session `id`, while it lasts.
    pub(super) fn get(&self, id: &str) -> Option<SessionHandle> {
        let sessions = self.sessions.lock().ok()?;
        sessions.get(id).filter(|s| !s.is_over()).cloned()
    }

    /// Takes the session `id` out (to end it); None when it is unknown or over.
    pub(super) fn remove(&self, id: &str) -> Option<SessionHandle> {
        let mut sessions = self.sessions.lock().ok()?;
        sessions.remove(id).filter(|s| !s.is_over())
    }

    /// Starts a session (an `initialize` without a session id): its id and handle, or
    /// the status and text of the answer that says why it could not start.
    pub(super) fn open(
        &self,
    ) -> std::result::Result<(String, SessionHandle), (StatusCode, String)> {
        let id = crate::ids::session_id().map_err(|e| {
            eprintln!("mcptape: error: {}", crate::error::chain(&e));
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "no session id".to_owned(),
            )
        })?;
        let (session, task) = self
            .start()
            .map_err(|e| (StatusCode::BAD_GATEWAY, crate::error::chain(&e)))?;
        self.admit(&id, &session, task);
        Ok((id, session))
    }

    /// Keeps a started session: its task awaited at the end, its handle under `id` (so
    /// that the idle reaper and the front's stop reach it).
    pub(super) fn admit(
        &self,
        id: &str,
        session: &SessionHandle,
        task: tokio::task::JoinHandle<Ended>,
    ) {
        if let Ok(mut tasks) = self.tasks.lock() {
            while let Some(done) = tasks.try_join_next() {
                self.keep(done.unwrap_or_default());
            }
            tasks.spawn(async move { task.await.unwrap_or_default() });
        }
        if let Ok(mut sessions) = self.sessions.lock() {
            // Sessions that ended on their own (a 404, a refused initialize) go now.
            sessions.retain(|_, s| !s.is_over());
            sessions.insert(id.to_owned(), session.clone());
        }
    }

    /// A new recording of a session, when the front records (`record`); one that cannot
    /// be opened is kept among the front's errors too.
    pub(super) fn recording(
        &self,
        record: Option<&(PathBuf, crate::mode::Recording)>,
    ) -> Result<Option<RecordSession>> {
        record
            .map(|(path, how)| {
                RecordSession::open(path, &self.server, how)
                    .inspect_err(|e| self.keep_error(crate::error::chain(e)))
                    .map_err(Into::into)
            })
            .transpose()
    }

    /// Starts a session's task over the link its source gives.
    fn start(&self) -> Result<(SessionHandle, tokio::task::JoinHandle<Ended>)> {
        match &self.source {
            Source::Forward {
                url,
                headers,
                record,
                stack,
            } => {
                let recording = self.recording(record.as_ref())?;
                let remote =
                    Remote::new(url, headers.clone()).map_err(crate::upstream::http::http_usage)?;
                let offer = remote.offer();
                // The upstream's GET stream is opened once the session exists: what it
                // brings is recorded, and given on the client's GET stream.
                let link = HttpLink::new(remote)
                    .with_start(Start {
                        url: Some(url.clone()),
                        front: true,
                        ..Start::default()
                    })
                    .listening();
                let layers = stack.layers(recording.as_ref().map(RecordSession::layer));
                let give_up = self.give_up.subscribe();
                let (handle, task) = session::spawn(Layered::new(link, layers), recording, give_up);
                Ok((handle.with_offer(offer), task))
            }
            Source::Replay {
                tape,
                options,
                report,
                stack,
                pace,
            } => {
                let claims = self.claims.as_ref().map(tempfile::TempDir::path);
                let dir = report.as_deref().or(claims);
                // Requests in flight together came on POSTs of their own, which have no
                // order on the wire: any request of the recorded burst may come first.
                let matching = match options.matching {
                    crate::cli::MatchMode::Strict => crate::cli::MatchMode::Unordered,
                    other => other,
                };
                let options = Options {
                    matching,
                    ..options.clone()
                };
                let picker = Picker::new(Arc::clone(tape), &self.server, dir, &options);
                let link = Layered::new(ReplayLink::new(picker, *pace), stack.replay_layers());
                Ok(session::spawn(link, None, self.give_up.subscribe()))
            }
        }
    }

    /// Ends the sessions idle for longer than `limit` (and forgets those already over).
    pub(super) fn expire_idle(&self, limit: Duration) {
        let Ok(mut sessions) = self.sessions.lock() else {
            return;
        };
        sessions.retain(|_, s| !s.is_over());
        let idle = crate::downstream::front::idle::expired(
            sessions.iter().map(|(id, s)| (id, s.activity())),
            limit,
        );
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

    pub(super) fn keep_error(&self, why: String) {
        self.keep(Ended {
            verdict: None,
            tape_error: Some(why),
        });
    }

    /// Ends every session and waits for their tasks, at most `grace`, or until `rest`
    /// (a second stop signal) comes; says on stderr how many were left. Those are given
    /// up on ([`session::GiveUp`]): they end without their link's close, once their
    /// recordings (which end before it) have ended — a recording is never given up.
    pub(super) async fn finish(&self, grace: Duration, rest: impl Future<Output = ()>) -> Served {
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
        self.give_up.send_replace(true);
        while let Some(done) = tasks.join_next().await {
            self.keep(done.unwrap_or_default());
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
        served.verdicts.extend(self.stateless.verdicts());
        served
    }
}
