//! `--record-mode new`: the replay, with the real server behind it for what the tape
//! does not hold.
//!
//! A [`FallbackLink`] wraps the proxy's replay link. A client request the tape holds
//! goes to the replay; one it does not starts the real server ([`live`], once, lazily),
//! which is played this server's recorded handshake first (its `initialize` and
//! `notifications/initialized`; the live answer to `initialize` is not given to the
//! client, which has its replayed one), then gets the request. What comes back is routed
//! by id: the answers to forwarded requests, the live server's own requests (and the
//! client's answers to them, back to it), its notifications. The live connection is
//! recorded into the tape as a connection of its own, marked added
//! ([`live::ADDED_MARK`]), through the usual tap and redaction; the verdict lists the
//! requests added, with their tape lines. A forwarded request is not a divergence.
//!
//! Invariants: the replay never sees a forwarded request (its verdict stays the
//! recorded connection's); nothing is sent to the real server before its `initialize` is
//! answered (what comes meanwhile waits, in order); `next` is cancel-safe (both links'
//! `next` are, and a message taken is handled before anything else is awaited, but for
//! the sends that finish the handshake).

use std::collections::{HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;

use crate::error::{LinkError, Result};
use crate::layer::{Layered, Layers};
use crate::message::{Kind, Message};
use crate::mode::Recording;
use crate::record::session::RecordSession;
use crate::tape::ServerTape;
use crate::tape::close::CloseReason;
use crate::upstream::replay::{DIVERGED_CODE, ReplayLink, error_line};
use crate::upstream::{Closed, Incoming, Link};
use crate::verdict::Added;

pub mod live;
mod recorded;
mod segment;

use live::Live;
pub use live::LiveServer;

/// What the fallback needs besides the replay: where the real server is and where its
/// exchanges are recorded.
pub struct Fallback {
    /// The real server.
    pub server: LiveServer,
    /// The server's name in the tape.
    pub name: String,
    /// The replayed tape, which the live connection is appended to.
    pub tape: Arc<ServerTape>,
    /// The redaction and size limit of the recording.
    pub recording: Recording,
    /// The framing maximum for the server's lines.
    pub max_line: usize,
}

/// The replay, falling back to the real server for what the tape does not hold.
pub struct FallbackLink {
    replay: ReplayLink,
    fallback: Fallback,
    live: State,
    /// Answers of our own for the client (a request the real server could not take).
    ready: VecDeque<Message>,
    replay_done: bool,
    input_ended: bool,
    /// The requests forwarded, in order: id, method, tool.
    added: Vec<(String, Added)>,
    problems: Vec<String>,
}

/// Where the real server stands.
enum State {
    /// Not needed yet.
    Idle,
    /// Started.
    Running(Box<Running>),
    /// Could not be started (why): what does not match is refused.
    Failed(String),
}

/// A started real server and its recording.
struct Running {
    link: Layered<Live>,
    session: RecordSession,
    /// The recorded `initialize`'s id, while its answer is awaited.
    init_id: Option<String>,
    /// The recorded `notifications/initialized`, sent once `initialize` is answered.
    initialized: Option<Message>,
    /// Client messages waiting for the handshake.
    held: Vec<Message>,
    /// Forwarded requests not answered yet.
    pending: HashSet<String>,
    /// The live server's requests the client has not answered yet.
    asked: HashSet<String>,
    /// The client ended its input while the handshake was under way.
    end_after_handshake: bool,
    /// The live link has nothing more.
    done: bool,
}

impl FallbackLink {
    /// `replay`, with `fallback` for what it does not hold.
    pub fn new(replay: ReplayLink, fallback: Fallback) -> FallbackLink {
        FallbackLink {
            replay,
            fallback,
            live: State::Idle,
            ready: VecDeque::new(),
            replay_done: false,
            input_ended: false,
            added: Vec::new(),
            problems: Vec::new(),
        }
    }

    /// True when `msg` goes to the real server.
    fn is_live(&self, msg: &Message) -> bool {
        let running = match &self.live {
            State::Running(r) => Some(r),
            _ => None,
        };
        match msg.kind() {
            Kind::Request => !self.replay.accepts(msg),
            Kind::Response | Kind::Error => {
                running.is_some_and(|r| msg.id().is_some_and(|id| r.asked.contains(id)))
            }
            Kind::Notification if msg.method() == Some("notifications/cancelled") => {
                let id = msg.value()["params"]["requestId"].to_string();
                running.is_some_and(|r| r.pending.contains(&id))
            }
            _ => false,
        }
    }

    /// Starts the real server and plays it the recorded handshake.
    async fn start(&mut self) -> Result<(), String> {
        let Some((init, initialized)) = recorded::handshake(&self.fallback.tape) else {
            return Err(format!(
                "the tape `{}` holds no `initialize` of server `{}` to play to the real server",
                self.fallback.tape.path.display(),
                self.fallback.name
            ));
        };
        let f = &self.fallback;
        let session = RecordSession::open(&f.tape.path, &f.name, &f.recording)
            .map_err(|e| crate::error::chain(&e))?;
        let live = f.server.start(f.max_line)?;
        crate::term::eprintln_escaped!(
            "mcptape: a request of server `{}` is not on the tape: forwarding it to {} and adding it to `{}` (--record-mode new)",
            f.name,
            f.server.describe(),
            f.tape.path.display()
        );
        let mut link = Layered::new(live, Layers::new().push(session.layer()));
        let init_id = init.id().map(str::to_owned);
        link.send(init)
            .await
            .map_err(|e| format!("cannot send `initialize` to the real server: {e}"))?;
        self.live = State::Running(Box::new(Running {
            link,
            session,
            init_id,
            initialized,
            held: Vec::new(),
            pending: HashSet::new(),
            asked: HashSet::new(),
            end_after_handshake: false,
            done: false,
        }));
        Ok(())
    }

    /// Sends `msg` to the real server, starting it first when needed.
    async fn forward(&mut self, msg: Message) {
        if matches!(self.live, State::Idle)
            && let Err(why) = self.start().await
        {
            crate::term::eprintln_escaped!(
                "mcptape: cannot forward to the real server of `{}`: {why}",
                self.fallback.name
            );
            self.problems.push(format!(
                "a request not on the tape could not be forwarded to the real server: {why}"
            ));
            self.live = State::Failed(why);
        }
        let running = match &mut self.live {
            State::Running(r) if !r.done => r,
            State::Failed(why) => {
                let why = why.clone();
                self.refuse(&msg, &why);
                return;
            }
            _ => {
                self.refuse(&msg, "the real server has ended");
                return;
            }
        };
        if msg.kind() == Kind::Request
            && let Some(id) = msg.id()
        {
            running.pending.insert(id.to_owned());
            let tool = (msg.method() == Some("tools/call"))
                .then(|| msg.value()["params"]["name"].as_str().map(str::to_owned))
                .flatten();
            let method = msg.method().unwrap_or_default().to_owned();
            let added = Added {
                line: None,
                method,
                tool,
            };
            self.added.push((id.to_owned(), added));
        }
        if msg.kind() == Kind::Response || msg.kind() == Kind::Error {
            msg.id().map(|id| running.asked.remove(id));
        }
        if running.init_id.is_some() {
            running.held.push(msg);
        } else if let Err(e) = running.link.send(msg.clone()).await {
            self.refuse(&msg, &format!("the real server did not take it: {e}"));
        }
    }

    /// Answers request `msg` with an error saying `why` it got no live answer.
    fn refuse(&mut self, msg: &Message, why: &str) {
        if msg.kind() == Kind::Request
            && let Some(id) = msg.id()
        {
            let text = format!("mcptape replay (--record-mode new): {why}");
            let mut line = error_line(id, DIVERGED_CODE, &text);
            line.pop();
            self.ready.push_back(Message::new(line));
        }
    }

    /// True when the real server owes the client nothing more.
    fn live_quiet(&self) -> bool {
        match &self.live {
            State::Running(r) => {
                r.done || (r.pending.is_empty() && r.init_id.is_none() && r.held.is_empty())
            }
            _ => true,
        }
    }

    /// Handles what the real server gave; a message for the client, if any.
    async fn take_live(&mut self, got: Option<Incoming>) -> Option<Incoming> {
        let State::Running(r) = &mut self.live else {
            return None;
        };
        let msg = match got {
            None => {
                r.done = true;
                let owed: Vec<String> = r.pending.drain().collect();
                if !owed.is_empty() {
                    self.problems.push(format!(
                        "the real server ended before answering {} forwarded request{} (--record-mode new): the tape holds no answer to add",
                        owed.len(),
                        if owed.len() == 1 { "" } else { "s" }
                    ));
                }
                for id in owed {
                    let mut line = error_line(
                        &id,
                        DIVERGED_CODE,
                        "mcptape replay (--record-mode new): the real server ended before answering",
                    );
                    line.pop();
                    self.ready.push_back(Message::new(line));
                }
                return None;
            }
            Some(Incoming::Message(msg)) => msg,
            Some(Incoming::Refused { request, error }) => {
                request.id().map(|id| r.pending.remove(id));
                let why = format!(
                    "the real server refused it: {}",
                    crate::error::chain(&error)
                );
                self.refuse(&request, &why);
                return None;
            }
            Some(Incoming::Event(_)) => return None,
        };
        let is_answer = matches!(msg.kind(), Kind::Response | Kind::Error);
        if is_answer && r.init_id.is_some() && msg.id() == r.init_id.as_deref() {
            // The handshake's answer: the client has its replayed one.
            r.init_id = None;
            let mut queue: Vec<Message> = r.initialized.take().into_iter().collect();
            queue.append(&mut r.held);
            let mut failed = Vec::new();
            for m in queue {
                if let Err(e) = r.link.send(m.clone()).await {
                    failed.push((m, format!("the real server did not take it: {e}")));
                }
            }
            if r.end_after_handshake {
                r.link.end_input().await;
            }
            for (m, why) in failed {
                self.refuse(&m, &why);
            }
            return None;
        }
        match msg.kind() {
            Kind::Response | Kind::Error => {
                msg.id().map(|id| r.pending.remove(id));
            }
            Kind::Request => {
                msg.id().map(|id| r.asked.insert(id.to_owned()));
            }
            _ => {}
        }
        Some(Incoming::Message(msg))
    }
}

/// The real server's next message, or never when there is none running.
async fn live_next(live: &mut State) -> Option<Incoming> {
    match live {
        State::Running(r) if !r.done => r.link.next().await,
        _ => std::future::pending().await,
    }
}

impl Link for FallbackLink {
    async fn send(&mut self, msg: Message) -> Result<(), LinkError> {
        if self.is_live(&msg) {
            self.forward(msg).await;
            return Ok(());
        }
        self.replay.send(msg).await
    }

    async fn next(&mut self) -> Option<Incoming> {
        loop {
            if let Some(msg) = self.ready.pop_front() {
                return Some(Incoming::Message(msg));
            }
            if self.replay_done && self.live_quiet() {
                return None;
            }
            let live_running = matches!(&self.live, State::Running(r) if !r.done);
            tokio::select! {
                got = self.replay.next(), if !self.replay_done => match got {
                    Some(incoming) => return Some(incoming),
                    None => self.replay_done = true,
                },
                got = live_next(&mut self.live), if live_running => {
                    if let Some(incoming) = self.take_live(got).await {
                        return Some(incoming);
                    }
                }
            }
        }
    }

    async fn oversize(&mut self, len: usize, prefix: Bytes) {
        self.replay.oversize(len, prefix).await;
    }

    async fn cancel(&mut self, id: &str) {
        match &mut self.live {
            State::Running(r) if r.pending.contains(id) => r.link.cancel(id).await,
            _ => self.replay.cancel(id).await,
        }
    }

    async fn end_input(&mut self) {
        self.input_ended = true;
        self.replay.end_input().await;
        if let State::Running(r) = &mut self.live {
            if r.init_id.is_some() {
                r.end_after_handshake = true;
            } else {
                r.link.end_input().await;
            }
        }
    }

    async fn interrupt(&mut self, reason: &CloseReason) -> bool {
        let replay = self.replay.interrupt(reason).await;
        let live = match &mut self.live {
            State::Running(r) => r.link.interrupt(reason).await,
            _ => false,
        };
        replay || live
    }

    async fn close(self, reason: CloseReason) -> Result<Closed> {
        let closed = self.replay.close(reason.clone()).await?;
        let Closed::Replayed {
            mut verdict,
            server_exit,
        } = closed
        else {
            return Ok(closed);
        };
        verdict.problems.extend(self.problems);
        if let State::Running(r) = self.live {
            let Running {
                link,
                session,
                done,
                ..
            } = *r;
            // A server that went away ended its connection itself, whatever the client did.
            let reason = if done {
                CloseReason::ServerExited
            } else {
                reason
            };
            if let Err(e) = link.close(reason).await {
                verdict.problems.push(format!(
                    "the real server did not end cleanly: {}",
                    crate::error::chain(&e)
                ));
            }
            let conn = session.conn().to_owned();
            match session.finish() {
                Ok(_) => {}
                Err(e) => verdict.problems.push(format!(
                    "the exchanges added to the tape are incomplete: {}",
                    crate::error::chain(&e)
                )),
            }
            let path: PathBuf = self.fallback.tape.path.clone();
            verdict.added = segment::with_lines(&path, &self.fallback.name, &conn, self.added);
        }
        Ok(Closed::Replayed {
            verdict,
            server_exit,
        })
    }
}
