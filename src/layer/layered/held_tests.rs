//! Unit tests of [`super`]: client messages a layer holds and decides on later (the
//! shape of a policy's `ask`), over an in-memory upstream, in paused time.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::FutureExt;
use serde_json::json;
use tokio::sync::{Notify, mpsc, oneshot};

use super::*;
use crate::layer::{Layer, Step};
use crate::tape::lifecycle::LifecycleKind;

/// What reached the peer, in order: each message's text, `end` when its input was
/// closed.
type Log = Arc<Mutex<Vec<String>>>;

fn log() -> Log {
    Arc::new(Mutex::new(Vec::new()))
}

fn lines(log: &Log) -> Vec<String> {
    log.lock().expect("lock").clone()
}

/// An in-memory server: answers each request with `{"id":…,"result":{}}`. With nothing
/// to give its `next` waits, until its input is closed (then it ends once it has given
/// what it owed) or it exits.
struct Peer {
    got: Log,
    out: VecDeque<Message>,
    input_closed: bool,
    exited: Arc<AtomicBool>,
}

impl Peer {
    fn new() -> Peer {
        Peer {
            got: log(),
            out: VecDeque::new(),
            input_closed: false,
            exited: Arc::new(AtomicBool::new(false)),
        }
    }
}

impl Link for Peer {
    async fn send(&mut self, msg: Message) -> Result<(), LinkError> {
        if self.input_closed {
            return Err(LinkError::Gone);
        }
        self.got.lock().expect("lock").push(msg.text().to_owned());
        if let Some(id) = msg.id() {
            self.out.push_back(Message::new(format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#
            )));
        }
        Ok(())
    }

    async fn next(&mut self) -> Option<Incoming> {
        if let Some(msg) = self.out.pop_front() {
            return Some(Incoming::Message(msg));
        }
        if self.input_closed || self.exited.load(Ordering::SeqCst) {
            return None;
        }
        std::future::pending().await
    }

    async fn end_input(&mut self) {
        self.input_closed = true;
        self.got.lock().expect("lock").push("end".into());
    }

    async fn close(self, _reason: CloseReason) -> Result<Closed> {
        Ok(Closed::Remote)
    }
}

/// How the test decides on a held call.
#[derive(Debug)]
enum Verdict {
    /// Let it through.
    Let,
    /// Answer it with a refusal.
    Refuse,
    /// End the connection on it.
    Disconnect,
}

/// A held call, as the test sees it: its id, and where its verdict goes.
struct Gate {
    id: String,
    tx: oneshot::Sender<Verdict>,
}

/// Marks a held call withdrawn when its future is dropped undecided.
struct Withdraw {
    id: String,
    told: Arc<Mutex<Vec<Event>>>,
    armed: bool,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        if self.armed {
            tell(&self.told, &self.id, "withdrawn");
        }
    }
}

fn tell(queue: &Arc<Mutex<Vec<Event>>>, id: &str, what: &str) {
    let params = json!({"id": id, "resolution": what});
    queue
        .lock()
        .expect("lock")
        .push((LifecycleKind::PolicyDecision, params));
}

/// Holds every `tools/call` until the test decides (the shape of a policy's `ask`):
/// each held call's gate goes to the test; its decision is told as an event, from the
/// future, through a shared queue, as the policy layer does.
struct Hold {
    gates: mpsc::UnboundedSender<Gate>,
    told: Arc<Mutex<Vec<Event>>>,
    /// The cancel signal of each held call, by id.
    cancels: Vec<(String, oneshot::Sender<()>)>,
}

impl Layer for Hold {
    fn reads_first(&self) -> bool {
        true
    }

    fn client(&mut self, msg: Message) -> Step {
        if msg.method() != Some("tools/call") {
            return Step::Pass(msg);
        }
        let id = msg.id().unwrap_or("null").to_owned();
        let (tx, verdict) = oneshot::channel();
        let (cancel, cancelled) = oneshot::channel();
        self.cancels.push((id.clone(), cancel));
        let _ = self.gates.send(Gate { id: id.clone(), tx });
        let told = Arc::clone(&self.told);
        // Made now, so that a future dropped before it is ever polled still says so.
        let guard = Withdraw {
            id: id.clone(),
            told: Arc::clone(&told),
            armed: true,
        };
        Step::Later(Box::pin(async move {
            // The whole guard moves in (not only the field this block writes).
            let mut guard = guard;
            let verdict = tokio::select! {
                verdict = verdict => verdict.ok(),
                _ = cancelled => None,
            };
            guard.armed = false;
            match verdict {
                Some(Verdict::Let) => {
                    tell(&told, &id, "allowed");
                    Step::Pass(msg)
                }
                Some(Verdict::Refuse) => {
                    tell(&told, &id, "refused");
                    Step::Answer(vec![Message::new(format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"isError":true}}}}"#
                    ))])
                }
                Some(Verdict::Disconnect) => Step::Disconnect(Some(503)),
                None => {
                    tell(&told, &id, "withdrawn");
                    Step::Drop
                }
            }
        }))
    }

    fn cancelled(&mut self, id: &str) {
        if let Some(at) = self.cancels.iter().position(|(held, _)| held == id) {
            let (_, cancel) = self.cancels.remove(at);
            let _ = cancel.send(());
        }
    }

    fn events(&mut self) -> Vec<Event> {
        std::mem::take(&mut *self.told.lock().expect("lock"))
    }
}

/// Writes down what it sees, both ways, and the events told to it: the tap's place.
struct Watch(Log);

impl Layer for Watch {
    fn client(&mut self, msg: Message) -> Step {
        self.0
            .lock()
            .expect("lock")
            .push(format!("up {}", msg.text()));
        Step::Pass(msg)
    }
    fn server(&mut self, msg: Message) -> Step {
        self.0
            .lock()
            .expect("lock")
            .push(format!("down {}", msg.text()));
        Step::Pass(msg)
    }
    fn event(&mut self, event: &Event) {
        let (kind, params) = event;
        if *kind == LifecycleKind::PolicyDecision {
            self.0.lock().expect("lock").push(format!(
                "event {} {}",
                params["id"].as_str().unwrap_or("?"),
                params["resolution"].as_str().unwrap_or("?")
            ));
        }
    }
}

/// A layer whose room, once asked for while `behind` is set, waits for `gate`.
struct Room {
    behind: Arc<AtomicBool>,
    gate: Arc<Notify>,
}

impl Layer for Room {
    fn room(&mut self) -> Option<Later<()>> {
        if !self.behind.swap(false, Ordering::SeqCst) {
            return None;
        }
        let gate = Arc::clone(&self.gate);
        Some(Box::pin(async move { gate.notified().await }))
    }
}

/// A layered peer: the watch (nearest the client), the room, the hold.
struct Rig {
    link: Layered<Peer>,
    gates: mpsc::UnboundedReceiver<Gate>,
    seen: Log,
    got: Log,
    exited: Arc<AtomicBool>,
    behind: Arc<AtomicBool>,
    room: Arc<Notify>,
}

fn rig() -> Rig {
    let (gates_tx, gates) = mpsc::unbounded_channel();
    let seen = log();
    let peer = Peer::new();
    let (got, exited) = (Arc::clone(&peer.got), Arc::clone(&peer.exited));
    let behind = Arc::new(AtomicBool::new(false));
    let room = Arc::new(Notify::new());
    let layers = Layers::new()
        .push(Watch(Arc::clone(&seen)))
        .push(Room {
            behind: Arc::clone(&behind),
            gate: Arc::clone(&room),
        })
        .push(Hold {
            gates: gates_tx,
            told: Arc::default(),
            cancels: Vec::new(),
        });
    Rig {
        link: Layered::new(peer, layers),
        gates,
        seen,
        got,
        exited,
        behind,
        room,
    }
}

fn call(id: u32) -> Message {
    Message::new(format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call"}}"#
    ))
}

fn list(id: u32) -> Message {
    Message::new(format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#
    ))
}

fn answer(id: u32) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)
}

fn refusal(id: u32) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"isError":true}}}}"#)
}

/// The next message the link gives, within a minute of (paused) time.
async fn next_text(link: &mut Layered<Peer>) -> String {
    match tokio::time::timeout(Duration::from_secs(60), link.next()).await {
        Ok(Some(Incoming::Message(m))) => m.text().to_owned(),
        other => panic!("{other:?}"),
    }
}

/// True when the link gives nothing within a second of (paused) time.
async fn quiet(link: &mut Layered<Peer>) -> bool {
    tokio::time::timeout(Duration::from_secs(1), link.next())
        .await
        .is_err()
}

#[tokio::test(start_paused = true)]
async fn a_held_call_holds_up_no_other_request_nor_its_answer_and_goes_up_once_let_through() {
    let mut rig = rig();
    let send = rig.link.send(call(1)).now_or_never();
    assert!(
        matches!(send, Some(Ok(()))),
        "send returns at once for a held call"
    );
    let gate = rig.gates.recv().await.expect("held");
    assert_eq!(gate.id, "1");
    rig.link.send(list(2)).await.expect("send");
    assert_eq!(next_text(&mut rig.link).await, answer(2), "not held up");
    assert!(rig.link.is_deciding(), "the call is still held");
    assert!(quiet(&mut rig.link).await, "nothing else is owed yet");
    assert_eq!(
        lines(&rig.got),
        [list(2).text()],
        "the held call is not up yet"
    );

    gate.tx.send(Verdict::Let).expect("decide");
    assert_eq!(next_text(&mut rig.link).await, answer(1));
    assert_eq!(lines(&rig.got), [list(2).text(), call(1).text()]);
    assert!(!rig.link.is_deciding());
    assert_eq!(
        lines(&rig.seen),
        [
            format!("up {}", call(1).text()),
            format!("up {}", list(2).text()),
            format!("down {}", answer(2)),
            "event 1 allowed".into(),
            format!("down {}", answer(1)),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_refusal_decided_later_reaches_the_client_after_the_layers_above_are_told() {
    let mut rig = rig();
    rig.link.send(call(7)).await.expect("send");
    let gate = rig.gates.recv().await.expect("held");
    gate.tx.send(Verdict::Refuse).expect("decide");
    assert_eq!(next_text(&mut rig.link).await, refusal(7));
    assert!(lines(&rig.got).is_empty(), "the refused call never went up");
    assert_eq!(
        lines(&rig.seen),
        [
            format!("up {}", call(7).text()),
            "event 7 refused".into(),
            format!("down {}", refusal(7)),
        ],
        "the decision is told before the answer it concerns"
    );
}

#[tokio::test(start_paused = true)]
async fn a_decision_made_while_next_waits_for_room_is_kept_and_sent_before_what_comes_after() {
    let mut rig = rig();
    rig.link.send(call(1)).await.expect("send");
    let gate = rig.gates.recv().await.expect("held");
    gate.tx.send(Verdict::Let).expect("decide");
    // The layers are behind when the decision comes: `next` takes it, then waits for
    // room, and is dropped there (a `select!` took another branch).
    rig.behind.store(true, Ordering::SeqCst);
    assert!(rig.link.next().now_or_never().is_none(), "waits for room");
    assert!(
        lines(&rig.got).is_empty(),
        "not sent while the layers are behind"
    );
    assert!(rig.link.is_deciding(), "the call let through is still owed");
    // The client sends more: the call let through goes first.
    rig.link.send(list(2)).await.expect("send");
    assert_eq!(lines(&rig.got), [call(1).text(), list(2).text()]);
    rig.room.notify_one();
    assert_eq!(next_text(&mut rig.link).await, answer(1));
    assert_eq!(next_text(&mut rig.link).await, answer(2));
}

#[tokio::test(start_paused = true)]
async fn a_next_cancelled_while_a_call_is_held_loses_nothing() {
    let mut rig = rig();
    rig.link.send(call(1)).await.expect("send");
    let gate = rig.gates.recv().await.expect("held");
    for _ in 0..3 {
        assert!(quiet(&mut rig.link).await);
    }
    gate.tx.send(Verdict::Let).expect("decide");
    assert_eq!(next_text(&mut rig.link).await, answer(1));
}

#[tokio::test(start_paused = true)]
async fn the_end_of_the_clients_input_is_put_off_until_the_held_calls_are_decided() {
    let mut rig = rig();
    rig.link.send(call(1)).await.expect("send");
    rig.link.send(call(2)).await.expect("send");
    let first = rig.gates.recv().await.expect("held");
    let second = rig.gates.recv().await.expect("held");
    rig.link.end_input().await;
    assert!(lines(&rig.got).is_empty(), "the input is not closed yet");
    first.tx.send(Verdict::Let).expect("decide");
    assert_eq!(next_text(&mut rig.link).await, answer(1));
    assert_eq!(
        lines(&rig.got),
        [call(1).text()],
        "still open: one call is still held"
    );
    second.tx.send(Verdict::Refuse).expect("decide");
    assert_eq!(next_text(&mut rig.link).await, refusal(2));
    assert!(
        tokio::time::timeout(Duration::from_secs(1), rig.link.next())
            .await
            .expect("ends")
            .is_none(),
        "then the upstream ends, as its input was closed"
    );
    assert_eq!(lines(&rig.got), [call(1).text(), "end"]);
}

#[tokio::test(start_paused = true)]
async fn the_end_of_input_after_a_call_let_through_closes_the_input_after_it_is_sent() {
    let mut rig = rig();
    rig.link.send(call(1)).await.expect("send");
    let gate = rig.gates.recv().await.expect("held");
    rig.link.end_input().await;
    gate.tx.send(Verdict::Let).expect("decide");
    assert_eq!(next_text(&mut rig.link).await, answer(1));
    assert!(rig.link.next().await.is_none());
    assert_eq!(lines(&rig.got), [call(1).text(), "end"]);
}

#[tokio::test(start_paused = true)]
async fn a_shutdown_withdraws_the_held_calls_and_the_layers_above_are_told() {
    let mut rig = rig();
    rig.link.send(call(1)).await.expect("send");
    let gate = rig.gates.recv().await.expect("held");
    assert!(quiet(&mut rig.link).await);
    assert!(!rig.link.interrupt(&CloseReason::ClientDone).await);
    assert!(!rig.link.is_deciding(), "nothing is held any more");
    assert!(gate.tx.is_closed(), "the held call's future is gone");
    assert_eq!(
        lines(&rig.seen).last().map(String::as_str),
        Some("event 1 withdrawn")
    );
    assert!(lines(&rig.got).is_empty(), "it never went up");
}

#[tokio::test(start_paused = true)]
async fn a_close_withdraws_the_held_calls() {
    let mut rig = rig();
    rig.link.send(call(1)).await.expect("send");
    let gate = rig.gates.recv().await.expect("held");
    rig.link
        .close(CloseReason::ClientDone)
        .await
        .expect("close");
    assert!(gate.tx.is_closed());
    assert_eq!(
        lines(&rig.seen).last().map(String::as_str),
        Some("event 1 withdrawn")
    );
}

#[tokio::test(start_paused = true)]
async fn a_client_that_gives_up_on_a_held_call_withdraws_it() {
    let mut rig = rig();
    rig.link.send(call(1)).await.expect("send");
    let gate = rig.gates.recv().await.expect("held");
    rig.link.cancel("1").await;
    assert!(quiet(&mut rig.link).await, "nothing reaches the client");
    assert!(!rig.link.is_deciding(), "decided: withdrawn");
    assert!(gate.tx.is_closed());
    assert!(lines(&rig.got).is_empty(), "it never went up");
    assert_eq!(
        lines(&rig.seen).last().map(String::as_str),
        Some("event 1 withdrawn")
    );
}

#[tokio::test(start_paused = true)]
async fn a_server_that_exits_while_a_call_is_held_ends_the_link_and_the_call_is_forgotten() {
    let mut rig = rig();
    rig.link.send(call(1)).await.expect("send");
    let gate = rig.gates.recv().await.expect("held");
    rig.exited.store(true, Ordering::SeqCst);
    assert!(rig.link.next().await.is_none(), "the server is gone");
    assert!(gate.tx.is_closed(), "nowhere left to pass it to");
    assert!(!rig.link.is_deciding());
}

#[tokio::test(start_paused = true)]
async fn a_disconnect_decided_later_ends_the_link_and_names_the_held_request() {
    let mut rig = rig();
    rig.link.send(call(4)).await.expect("send");
    let gate = rig.gates.recv().await.expect("held");
    gate.tx.send(Verdict::Disconnect).expect("decide");
    assert!(rig.link.next().await.is_none());
    assert_eq!(
        rig.link.disconnected(),
        Some(Disconnect {
            status: Some(503),
            id: Some("4".into())
        })
    );
    assert!(matches!(rig.link.send(list(5)).await, Err(LinkError::Gone)));
}
