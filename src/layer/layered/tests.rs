//! Unit tests of [`super`]: a layer's later decision on a server message (a delay) and
//! an injected disconnect, over an in-memory upstream, in paused time.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::*;
use crate::layer::{Layer, Step};

/// An in-memory peer: answers each request with `{"id":…,"result":{}}`, and ends (its
/// `next` gives `None`) when it has nothing more.
#[derive(Default)]
struct Echo {
    out: VecDeque<Message>,
    closed: Arc<Mutex<Option<CloseReason>>>,
}

impl Link for Echo {
    async fn send(&mut self, msg: Message) -> Result<(), LinkError> {
        if let Some(id) = msg.id() {
            self.out.push_back(Message::new(format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#
            )));
        }
        Ok(())
    }

    async fn next(&mut self) -> Option<Incoming> {
        self.out.pop_front().map(Incoming::Message)
    }

    async fn close(self, reason: CloseReason) -> Result<Closed> {
        *self.closed.lock().expect("lock") = Some(reason);
        Ok(Closed::Remote)
    }
}

/// Writes down what it sees on the way down, and the close.
struct Watch(Arc<Mutex<Vec<String>>>);

impl Layer for Watch {
    fn server(&mut self, msg: Message) -> Step {
        self.0.lock().expect("lock").push(msg.text().to_owned());
        Step::Pass(msg)
    }
    fn close(&mut self, close: &Close) {
        let words = close.reason.as_ref().map(|r| r.words()).unwrap_or_default();
        self.0.lock().expect("lock").push(format!("close {words}"));
    }
}

/// What the test layer does with the message whose id is `id`.
enum Effect {
    /// Hands the answer on after this long (the `delay` fault's shape).
    Delay(Duration),
    /// Ends the connection on the client's request (`disconnect` on a request).
    DisconnectRequest(Option<u16>),
    /// Ends the connection on the server's answer.
    DisconnectAnswer(Option<u16>),
    /// Marks the answer slow.
    Slow,
}

/// A fault-shaped layer: `effect` on the message with id `id`.
struct Fault {
    id: &'static str,
    effect: Effect,
}

impl Layer for Fault {
    fn reads_first(&self) -> bool {
        true
    }
    fn client(&mut self, msg: Message) -> Step {
        match self.effect {
            Effect::DisconnectRequest(status) if msg.id() == Some(self.id) => {
                Step::Disconnect(status)
            }
            _ => Step::Pass(msg),
        }
    }
    fn server(&mut self, msg: Message) -> Step {
        if msg.id() != Some(self.id) {
            return Step::Pass(msg);
        }
        match self.effect {
            Effect::Delay(wait) => Step::Later(Box::pin(async move {
                tokio::time::sleep(wait).await;
                Step::Pass(msg)
            })),
            Effect::DisconnectAnswer(status) => Step::Disconnect(status),
            Effect::Slow => Step::Pass(msg.slowly()),
            Effect::DisconnectRequest(_) => Step::Pass(msg),
        }
    }
}

fn layered(id: &'static str, effect: Effect) -> (Layered<Echo>, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let layers = Layers::new()
        .push(Watch(Arc::clone(&seen)))
        .push(Fault { id, effect });
    (Layered::new(Echo::default(), layers), seen)
}

fn request(id: u32) -> Message {
    Message::new(format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call"}}"#
    ))
}

async fn answer_id(link: &mut Layered<Echo>) -> String {
    match link.next().await {
        Some(Incoming::Message(m)) => m.id().unwrap_or("none").to_owned(),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_delayed_answer_holds_up_no_other_and_comes_after_its_delay() {
    let (mut link, seen) = layered("1", Effect::Delay(Duration::from_millis(500)));
    let start = tokio::time::Instant::now();
    link.send(request(1)).await.expect("send");
    link.send(request(2)).await.expect("send");
    assert_eq!(answer_id(&mut link).await, "2", "the other answer first");
    assert!(start.elapsed() < Duration::from_millis(500), "not held up");
    assert_eq!(
        seen.lock().expect("lock").len(),
        1,
        "the layer above has not seen the delayed answer yet"
    );
    assert_eq!(answer_id(&mut link).await, "1");
    assert!(start.elapsed() >= Duration::from_millis(500));
    assert_eq!(seen.lock().expect("lock").len(), 2, "seen when given");
    assert!(link.next().await.is_none(), "then the upstream's end");
}

#[tokio::test(start_paused = true)]
async fn a_next_cancelled_while_an_answer_is_delayed_loses_nothing() {
    let (mut link, _seen) = layered("1", Effect::Delay(Duration::from_millis(500)));
    link.send(request(1)).await.expect("send");
    for _ in 0..3 {
        tokio::select! {
            got = link.next() => panic!("too early: {got:?}"),
            () = tokio::time::sleep(Duration::from_millis(100)) => {}
        }
    }
    assert_eq!(answer_id(&mut link).await, "1");
}

#[tokio::test]
async fn a_disconnect_on_a_request_ends_the_link_and_names_the_request() {
    let (mut link, seen) = layered("2", Effect::DisconnectRequest(Some(503)));
    link.send(request(1)).await.expect("send");
    assert_eq!(answer_id(&mut link).await, "1");
    link.send(request(2)).await.expect("send");
    assert!(link.next().await.is_none(), "the server went away");
    assert_eq!(
        link.disconnected(),
        Some(Disconnect {
            status: Some(503),
            id: Some("2".into())
        })
    );
    assert!(matches!(link.send(request(3)).await, Err(LinkError::Gone)));
    let closed = Arc::clone(&link.inner().closed);
    link.close(CloseReason::ServerExited).await.expect("close");
    assert_eq!(
        *closed.lock().expect("lock"),
        Some(CloseReason::InjectedDisconnect),
        "the upstream is closed its own way, for the injected reason"
    );
    assert_eq!(
        seen.lock().expect("lock").last().map(String::as_str),
        Some("close injected disconnect")
    );
}

#[tokio::test]
async fn a_disconnect_on_an_answer_cuts_it_and_what_follows() {
    let (mut link, _seen) = layered("1", Effect::DisconnectAnswer(None));
    link.send(request(1)).await.expect("send");
    link.send(request(2)).await.expect("send");
    assert!(link.next().await.is_none());
    assert_eq!(
        link.disconnected(),
        Some(Disconnect {
            status: None,
            id: Some("1".into())
        })
    );
}

#[tokio::test]
async fn a_slow_mark_reaches_the_downstream() {
    let (mut link, _seen) = layered("1", Effect::Slow);
    link.send(request(1)).await.expect("send");
    match link.next().await {
        Some(Incoming::Message(m)) => assert!(m.is_slow()),
        other => panic!("{other:?}"),
    }
    assert_eq!(link.disconnected(), None);
}

#[tokio::test(start_paused = true)]
async fn a_shutdown_does_not_wait_for_a_delayed_answer() {
    let (mut link, _seen) = layered("1", Effect::Delay(Duration::from_secs(3600)));
    link.send(request(1)).await.expect("send");
    tokio::select! {
        got = link.next() => panic!("too early: {got:?}"),
        () = tokio::time::sleep(Duration::from_millis(100)) => {}
    }
    assert!(link.is_deciding(), "the answer is held");
    assert!(!link.interrupt(&CloseReason::ClientDone).await);
    let start = tokio::time::Instant::now();
    assert!(link.next().await.is_none(), "nothing more is owed");
    assert!(start.elapsed() < Duration::from_secs(1));
}
