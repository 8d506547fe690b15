//! Unit tests of [`super`]: the layer stack over an in-memory upstream.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use super::*;
use crate::error::{LinkError, Result};
use crate::tape::close::{CloseReason, CloseStatus};
use crate::upstream::{Closed, Incoming, Link};

/// An in-memory peer: answers each request with `{"id":…,"result":{}}` and records what
/// reached it. It never ends by itself: with nothing to give, its `next` waits.
#[derive(Default)]
struct Echo {
    got: Arc<Mutex<Vec<String>>>,
    out: VecDeque<Message>,
}

impl Link for Echo {
    async fn send(&mut self, msg: Message) -> Result<(), LinkError> {
        self.got.lock().expect("lock").push(msg.text().to_owned());
        if let Some(id) = msg.id() {
            self.out.push_back(Message::new(format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#
            )));
        }
        Ok(())
    }

    async fn next(&mut self) -> Option<Incoming> {
        match self.out.pop_front() {
            Some(msg) => Some(Incoming::Message(msg)),
            None => std::future::pending().await,
        }
    }

    async fn close(self, _reason: CloseReason) -> Result<Closed> {
        Ok(Closed::Remote)
    }
}

/// Writes down what it sees, from which side.
struct Watch(Arc<Mutex<Vec<String>>>, &'static str);

impl Layer for Watch {
    fn client(&mut self, msg: Message) -> Step {
        self.0
            .lock()
            .expect("lock")
            .push(format!("{} up {}", self.1, msg.text()));
        Step::Pass(msg)
    }
    fn server(&mut self, msg: Message) -> Step {
        self.0
            .lock()
            .expect("lock")
            .push(format!("{} down {}", self.1, msg.text()));
        Step::Pass(msg)
    }
    fn close(&mut self, close: &Close) {
        self.0.lock().expect("lock").push(format!(
            "{} close {}",
            self.1,
            close.reason.as_ref().map(|r| r.words()).unwrap_or_default()
        ));
    }
}

/// Answers `tools/call` itself, after a wait (the shape of a policy's `ask` refused).
struct Refuse;

impl Layer for Refuse {
    fn reads_first(&self) -> bool {
        true
    }
    fn client(&mut self, msg: Message) -> Step {
        if msg.method() != Some("tools/call") {
            return Step::Pass(msg);
        }
        Step::Later(Box::pin(async move {
            tokio::task::yield_now().await;
            let id = msg.id().unwrap_or("null").to_owned();
            Step::Answer(vec![Message::new(format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"isError":true}}}}"#
            ))])
        }))
    }
}

#[tokio::test]
async fn a_layer_answers_later_in_place_of_the_upstream_holding_up_nothing_and_the_layers_above_see_the_answer()
 {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let echo = Echo::default();
    let reached = Arc::clone(&echo.got);
    let layers = Layers::new()
        .push(Watch(Arc::clone(&seen), "tap"))
        .push(Refuse)
        .push(Watch(Arc::clone(&seen), "below"));
    assert!(layers.reads_first());
    let mut link = Layered::new(echo, layers);
    link.send(Message::new(r#"{"id":1,"method":"tools/call"}"#))
        .await
        .expect("send");
    link.send(Message::new(r#"{"id":2,"method":"tools/list"}"#))
        .await
        .expect("send");
    let mut answers = Vec::new();
    for _ in 0..2 {
        match link.next().await {
            Some(Incoming::Message(m)) => answers.push(m.text().to_owned()),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(
        answers,
        [
            r#"{"jsonrpc":"2.0","id":2,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"isError":true}}"#,
        ],
        "the request sent after the held one was not held up"
    );
    assert_eq!(
        *reached.lock().expect("lock"),
        [r#"{"id":2,"method":"tools/list"}"#],
        "the refused call never reached the upstream"
    );
    let closed = link.close(CloseReason::ClientDone).await.expect("close");
    assert_eq!(closed.status(), CloseStatus::Unknown);
    assert_eq!(
        *seen.lock().expect("lock"),
        [
            r#"tap up {"id":1,"method":"tools/call"}"#,
            r#"tap up {"id":2,"method":"tools/list"}"#,
            r#"below up {"id":2,"method":"tools/list"}"#,
            r#"below down {"jsonrpc":"2.0","id":2,"result":{}}"#,
            r#"tap down {"jsonrpc":"2.0","id":2,"result":{}}"#,
            r#"tap down {"jsonrpc":"2.0","id":1,"result":{"isError":true}}"#,
            "tap close client done",
            "below close client done",
        ]
    );
}

#[tokio::test]
async fn watching_layers_alone_leave_the_byte_relay_on() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut layers = Layers::new().push(Watch(Arc::clone(&seen), "tap"));
    assert!(!layers.reads_first());
    layers.watch(Direction::Send, Bytes::from_static(b"{\"id\":1}\n"));
    assert_eq!(seen.lock().expect("lock").len(), 1);
}

/// A layer that is behind until its gate opens: `room` waits for the gate.
struct Behind {
    gate: Arc<tokio::sync::Notify>,
    behind: bool,
}

impl Layer for Behind {
    fn room(&mut self) -> Option<Later<()>> {
        let gate = Arc::clone(&self.gate);
        std::mem::take(&mut self.behind)
            .then(|| -> Later<()> { Box::pin(async move { gate.notified().await }) })
    }
}

#[tokio::test]
async fn room_wait_is_none_while_no_layer_is_behind_and_waits_for_the_one_that_is() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let behind = |behind| Behind {
        gate: Arc::clone(&gate),
        behind,
    };
    let mut layers = Layers::new().push(behind(false));
    assert!(
        layers.room_wait().is_none(),
        "nobody is behind: no wait at all"
    );

    let mut layers = layers.push(behind(true));
    let mut wait = layers.room_wait().expect("one layer is behind");
    // Taken without the stack: the stack stays usable while the wait is pending.
    layers.watch(Direction::Send, Bytes::from_static(b"{}"));
    assert!(
        futures_util::FutureExt::now_or_never(&mut wait).is_none(),
        "waits until the layer has room"
    );
    gate.notify_one();
    wait.await;
}
