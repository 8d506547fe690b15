//! Unit tests of the front: a session's task driven over an in-memory [`Link`] (its
//! routing, its refusals, its end), and [`serve_on`] on a real port-0 listener, answering
//! a real HTTP request from a tape and stopped by its shutdown future.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

use super::session::{self, Item};
use super::*;
use crate::error::{HttpError, LinkError};
use crate::layer::{Layered, Layers};
use crate::message::Message;
use crate::record::session::RecordSession;
use crate::tape::ServerTape;
use crate::tape::close::CloseReason;
use crate::upstream::replay::Options;
use crate::upstream::{Closed, Incoming, Link};
use crate::verdict::Verdict;

/// What the test sees of an in-memory link.
#[derive(Clone, Default)]
struct Seen {
    sent: Arc<Mutex<Vec<String>>>,
    sending: Arc<tokio::sync::Notify>,
    closes: Arc<AtomicUsize>,
}

impl Seen {
    /// Waits (at most ten seconds) until the link has taken `n` client messages: what
    /// comes back is only put in after that, as from a real upstream.
    async fn taken(&self, n: usize) {
        let wait = async {
            while self.sent.lock().expect("sent").len() < n {
                self.sending.notified().await;
            }
        };
        tokio::time::timeout(Duration::from_secs(10), wait)
            .await
            .expect("the link took the messages in time");
    }
}

/// A front's word that never gives up (its sender is gone).
fn never() -> session::GiveUp {
    tokio::sync::watch::channel(false).1
}

/// What `rx` gets next, within ten seconds.
async fn next(rx: &mut mpsc::UnboundedReceiver<Item>) -> Option<Item> {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("an item or the end in time")
}

/// An in-memory upstream: what the client sends is kept; what comes back is what the
/// test puts in; its close yields a verdict naming server `mem`.
struct MemLink {
    seen: Seen,
    incoming: mpsc::UnboundedReceiver<Incoming>,
}

impl Link for MemLink {
    async fn send(&mut self, msg: Message) -> std::result::Result<(), LinkError> {
        let text = String::from_utf8_lossy(msg.raw()).into_owned();
        self.seen.sent.lock().expect("sent").push(text);
        self.seen.sending.notify_one();
        Ok(())
    }

    async fn next(&mut self) -> Option<Incoming> {
        self.incoming.recv().await
    }

    async fn close(self, _reason: CloseReason) -> Result<Closed> {
        self.seen.closes.fetch_add(1, Ordering::SeqCst);
        let verdict = Verdict {
            server: "mem".into(),
            ..Verdict::default()
        };
        Ok(Closed::Replayed {
            verdict: Box::new(verdict),
            server_exit: None,
        })
    }
}

fn mem() -> (MemLink, mpsc::UnboundedSender<Incoming>, Seen) {
    let (tx, incoming) = mpsc::unbounded_channel();
    let seen = Seen::default();
    let link = MemLink {
        seen: seen.clone(),
        incoming,
    };
    (link, tx, seen)
}

fn msg(text: &str) -> Message {
    Message::new(Bytes::copy_from_slice(text.as_bytes()))
}

const CALL_1: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#;
const CALL_2: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{}}"#;
const ANSWER_1: &str = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
const PROGRESS: &str = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#;

/// The message an SSE item carries.
fn data(item: Option<Item>) -> String {
    match item {
        Some(Item::Event(event)) => {
            let text = String::from_utf8_lossy(&event).into_owned();
            text.strip_prefix("event: message\ndata: ")
                .and_then(|t| t.strip_suffix("\n\n"))
                .unwrap_or_else(|| panic!("not one event: {text:?}"))
                .to_owned()
        }
        other => panic!("not an event: {other:?}"),
    }
}

#[tokio::test]
async fn a_response_goes_to_the_stream_waiting_for_its_id_and_ends_it() {
    let (link, up, seen) = mem();
    let (session, task) = session::spawn(link, None, never());
    let (one, mut rx1) = mpsc::unbounded_channel();
    let (two, mut rx2) = mpsc::unbounded_channel();
    assert!(session.post(msg(CALL_1), Some(one)));
    assert!(session.post(msg(CALL_2), Some(two)));
    seen.taken(2).await;
    up.send(Incoming::Message(msg(ANSWER_1))).expect("up");
    assert_eq!(data(next(&mut rx1).await), ANSWER_1);
    assert!(
        next(&mut rx1).await.is_none(),
        "the response ends its stream"
    );
    assert!(rx2.try_recv().is_err(), "the other stream got nothing");
    assert_eq!(seen.sent.lock().expect("sent").clone(), [CALL_1, CALL_2]);
    session.end(CloseReason::SessionEnded);
    assert!(
        next(&mut rx2).await.is_none(),
        "ending the session ends its streams"
    );
    task.await.expect("task");
}

#[tokio::test]
async fn a_notification_goes_to_the_newest_open_stream() {
    let (link, up, seen) = mem();
    let (session, task) = session::spawn(link, None, never());
    let (one, mut rx1) = mpsc::unbounded_channel();
    let (two, mut rx2) = mpsc::unbounded_channel();
    session.post(msg(CALL_1), Some(one));
    session.post(msg(CALL_2), Some(two));
    seen.taken(2).await;
    up.send(Incoming::Message(msg(PROGRESS))).expect("up");
    assert_eq!(data(next(&mut rx2).await), PROGRESS);
    up.send(Incoming::Message(msg(
        r#"{"jsonrpc":"2.0","id":2,"result":{}}"#,
    )))
    .expect("up");
    let _ = next(&mut rx2).await;
    assert!(
        next(&mut rx2).await.is_none(),
        "stream 2 ended with its response"
    );
    assert!(rx1.try_recv().is_err(), "stream 1 was not the newest");
    session.end(CloseReason::SessionEnded);
    task.await.expect("task");
}

#[tokio::test]
async fn a_refused_request_gives_its_stream_the_status_and_a_404_ends_the_session() {
    let (link, up, seen) = mem();
    let (session, task) = session::spawn(link, None, never());
    let (one, mut rx1) = mpsc::unbounded_channel();
    session.post(msg(CALL_1), Some(one));
    seen.taken(1).await;
    let refusal = |status| Incoming::Refused {
        request: msg(CALL_1),
        error: HttpError::Status {
            url: "http://u/mcp".into(),
            status,
            body: Bytes::from_static(b"nope"),
        },
    };
    up.send(refusal(503)).expect("up");
    match next(&mut rx1).await {
        Some(Item::Refused(HttpError::Status { status: 503, .. })) => {}
        other => panic!("not the status: {other:?}"),
    }
    assert!(!session.is_over(), "a 503 leaves the session open");
    let (again, mut rx2) = mpsc::unbounded_channel();
    session.post(msg(CALL_1), Some(again));
    seen.taken(2).await;
    up.send(refusal(404)).expect("up");
    assert!(matches!(next(&mut rx2).await, Some(Item::Refused(_))));
    let ended = task.await.expect("task");
    assert!(session.is_over(), "a 404 ends the session");
    assert_eq!(seen.closes.load(Ordering::SeqCst), 1);
    assert_eq!(ended.verdict.map(|v| v.server).as_deref(), Some("mem"));
}

#[tokio::test]
async fn ending_a_session_closes_the_link_once_and_yields_its_verdict() {
    let (link, _up, seen) = mem();
    let (session, task) = session::spawn(link, None, never());
    session.end_and_wait(CloseReason::SessionEnded).await;
    session.end(CloseReason::SessionEnded);
    assert!(session.is_over());
    assert!(
        !session.post(msg(CALL_1), None),
        "an ended session takes nothing"
    );
    let ended = task.await.expect("task");
    assert_eq!(seen.closes.load(Ordering::SeqCst), 1, "closed once");
    assert_eq!(ended.verdict.map(|v| v.server).as_deref(), Some("mem"));
    assert!(ended.tape_error.is_none());
}

/// A link whose close never finishes (an upstream `DELETE` that hangs).
struct Stuck;

impl Link for Stuck {
    async fn send(&mut self, _msg: Message) -> std::result::Result<(), LinkError> {
        Ok(())
    }
    async fn next(&mut self) -> Option<Incoming> {
        std::future::pending().await
    }
    async fn close(self, _reason: CloseReason) -> Result<Closed> {
        std::future::pending().await
    }
}

fn limits() -> Limits {
    Limits {
        max_connections: 4,
        header_timeout: Duration::from_secs(5),
        body_timeout: Duration::from_secs(5),
        session_idle: None,
    }
}

/// A front over `tape` (a replay source), serving nobody yet.
fn front(tape: Arc<ServerTape>) -> Front {
    front_of(Source::Replay {
        tape,
        options: Options::default(),
        report: None,
        stack: crate::layer::Stack::default(),
        pace: false,
    })
}

/// A front over `source`, serving nobody yet.
fn front_of(source: Source) -> Front {
    Front {
        server: "s".into(),
        source,
        claims: tempfile::tempdir().ok(),
        limits: limits(),
        guard: Guard::new("127.0.0.1:1".parse().expect("addr")),
        sessions: Mutex::new(HashMap::new()),
        tasks: Mutex::new(JoinSet::new()),
        ended: Mutex::new(Vec::new()),
        give_up: tokio::sync::watch::Sender::new(false),
        stateless: Default::default(),
    }
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#;
const INIT_ANSWER: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25"}}"#;

/// A tape of server `s`: one connection, the initialize handshake.
fn tape() -> (Arc<ServerTape>, tempfile::TempDir) {
    let line =
        |m: &str, d| crate::tape::testing::line(m, d, "c-1", Some("2026-01-01T00:00:00.000Z"));
    let text = line(INIT, "send") + &line(INIT_ANSWER, "recv");
    let (tape, dir) = crate::tape::testing::load(&text);
    (Arc::new(tape), dir)
}

#[tokio::test(start_paused = true)]
async fn the_wait_for_ending_sessions_lasts_the_grace_or_until_the_second_signal() {
    let (tape, _dir) = tape();
    let front = front(tape);
    for n in 0..2 {
        let (session, task) = session::spawn(Stuck, None, front.give_up.subscribe());
        front
            .sessions
            .lock()
            .expect("sessions")
            .insert(format!("{n}"), session);
        front
            .tasks
            .lock()
            .expect("tasks")
            .spawn(async move { task.await.unwrap_or_default() });
    }
    let started = tokio::time::Instant::now();
    let served = front.finish(END_GRACE, std::future::pending()).await;
    assert_eq!(started.elapsed(), END_GRACE, "waited the whole grace");
    assert!(served.verdicts.is_empty());

    let (session, task) = session::spawn(Stuck, None, front.give_up.subscribe());
    front
        .sessions
        .lock()
        .expect("sessions")
        .insert("x".into(), session);
    front
        .tasks
        .lock()
        .expect("tasks")
        .spawn(async move { task.await.unwrap_or_default() });
    let started = tokio::time::Instant::now();
    let _ = front.finish(END_GRACE, async {}).await;
    assert!(
        started.elapsed() < END_GRACE,
        "the second signal cut the wait"
    );
}

#[tokio::test]
async fn serve_answers_a_real_request_from_the_tape_and_stops_on_its_shutdown() {
    let (tape, _dir) = tape();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let source = Source::Replay {
        tape,
        options: Options::default(),
        report: None,
        stack: crate::layer::Stack::default(),
        pace: false,
    };
    let shutdown = async move {
        let _ = stopped.await;
        Stop(std::future::pending::<()>())
    };
    let served =
        tokio::spawn(async move { serve_on(listener, "s", source, limits(), shutdown).await });

    let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{INIT}",
        INIT.len()
    );
    s.write_all(request.as_bytes()).await.expect("write");
    let mut answer = String::new();
    let read = tokio::time::timeout(Duration::from_secs(10), s.read_to_string(&mut answer));
    read.await.expect("answered in time").expect("read");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("mcp-session-id: "), "{answer}");
    assert!(
        answer.contains(&format!("data: {INIT_ANSWER}\n\n")),
        "{answer}"
    );

    stop.send(()).expect("stop");
    let served = served.await.expect("task").expect("served");
    assert_eq!(served.verdicts.len(), 1, "the session's verdict");
    assert!(served.verdicts[0].ok(), "{:?}", served.verdicts[0]);
    assert!(served.tape_errors.is_empty());
}

#[tokio::test]
async fn a_stream_whose_client_went_away_is_recorded_as_cancelled_and_its_late_answer_goes_nowhere()
{
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.ndjson");
    let how = crate::mode::Recording {
        redactor: crate::redact::Redactor::new(&[]),
        max_bytes: None,
    };
    let recording = RecordSession::open(&path, "s", &how).expect("open");
    let (link, up, seen) = mem();
    let layers = Layers::new().push(recording.layer());
    let (session, task) = session::spawn(Layered::new(link, layers), Some(recording), never());
    let (one, rx1) = mpsc::unbounded_channel();
    let (two, mut rx2) = mpsc::unbounded_channel();
    session.post(msg(CALL_1), Some(one));
    session.post(msg(CALL_2), Some(two));
    seen.taken(2).await;
    drop(rx1);
    session.cancelled("1".into());
    // Commands are taken in order: once the link has this one, the cancel was heard.
    session.post(
        msg(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
        None,
    );
    seen.taken(3).await;
    up.send(Incoming::Message(msg(ANSWER_1))).expect("up");
    up.send(Incoming::Message(msg(PROGRESS))).expect("up");
    assert_eq!(
        data(next(&mut rx2).await),
        PROGRESS,
        "not the cancelled answer"
    );
    session.end_and_wait(CloseReason::SessionEnded).await;
    let ended = task.await.expect("task");
    assert!(ended.tape_error.is_none(), "{:?}", ended.tape_error);
    let tape = std::fs::read_to_string(&path).expect("tape");
    let methods: Vec<&str> = tape
        .lines()
        .filter_map(|l| l.split("\"method\":\"").nth(1))
        .filter_map(|m| m.split('"').next())
        .collect();
    assert_eq!(
        methods,
        [
            "tools/call",
            "tools/call",
            "$http/cancelled",
            "notifications/initialized",
            "notifications/progress",
            "$transport/close"
        ],
        "{tape}"
    );
}

mod ending;

mod faults;

mod get;

mod held;

#[tokio::test]
async fn progress_goes_to_the_stream_of_the_request_whose_token_it_names() {
    const SLOW: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"a"}}}"#;
    const STEP: &str = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"a","progress":1}}"#;
    let (link, up, seen) = mem();
    let (session, task) = session::spawn(link, None, never());
    let (one, mut rx1) = mpsc::unbounded_channel();
    let (two, mut rx2) = mpsc::unbounded_channel();
    session.post(msg(SLOW), Some(one));
    session.post(msg(CALL_2), Some(two));
    seen.taken(2).await;
    // Stream 2 is the newest; the progress names request 1's token.
    up.send(Incoming::Message(msg(STEP))).expect("up");
    assert_eq!(data(next(&mut rx1).await), STEP);
    up.send(Incoming::Message(msg(
        r#"{"jsonrpc":"2.0","id":2,"result":{}}"#,
    )))
    .expect("up");
    let _ = next(&mut rx2).await;
    assert!(
        next(&mut rx2).await.is_none(),
        "stream 2 ended with its response"
    );
    // No stream is the newest now: the progress still finds request 1's.
    up.send(Incoming::Message(msg(STEP))).expect("up");
    assert_eq!(data(next(&mut rx1).await), STEP);
    up.send(Incoming::Message(msg(ANSWER_1))).expect("up");
    assert_eq!(data(next(&mut rx1).await), ANSWER_1);
    assert!(next(&mut rx1).await.is_none());
    session.end(CloseReason::SessionEnded);
    task.await.expect("task");
}

#[tokio::test]
async fn a_server_request_goes_to_the_stream_of_the_request_whose_answer_it_came_on() {
    const ASK: &str = r#"{"jsonrpc":"2.0","id":9,"method":"sampling/createMessage","params":{}}"#;
    let (link, up, seen) = mem();
    let (session, task) = session::spawn(link, None, never());
    let (one, mut rx1) = mpsc::unbounded_channel();
    let (two, mut rx2) = mpsc::unbounded_channel();
    session.post(msg(CALL_1), Some(one));
    session.post(msg(CALL_2), Some(two));
    seen.taken(2).await;
    // Stream 2 is the newest; the upstream's answer to request 1 carried the request.
    let ask = msg(ASK).answering(Some("1".into()));
    up.send(Incoming::Message(ask)).expect("up");
    assert_eq!(data(next(&mut rx1).await), ASK);
    assert!(rx2.try_recv().is_err(), "not on the newest stream");
    session.end(CloseReason::SessionEnded);
    task.await.expect("task");
}
