//! A session's task over a link whose layer holds a call until the test decides (a
//! policy's `ask`): the session goes on serving its other requests meanwhile, the held
//! call's stream gets its answer once decided, and a client that closes that stream
//! withdraws it.

use tokio::sync::oneshot;

use super::*;
use crate::layer::{Layer, Step};

/// Holds `CALL_1` until `decide` says, then refuses it; withdraws it when its client
/// gives up (`withdrawn` then says so).
struct Ask {
    decide: Option<oneshot::Receiver<()>>,
    cancel: Option<oneshot::Sender<()>>,
    withdrawn: Option<oneshot::Sender<()>>,
}

impl Layer for Ask {
    fn reads_first(&self) -> bool {
        true
    }
    fn client(&mut self, msg: Message) -> Step {
        if msg.id() != Some("1") {
            return Step::Pass(msg);
        }
        let Some(decide) = self.decide.take() else {
            return Step::Pass(msg);
        };
        let (cancel, cancelled) = oneshot::channel();
        self.cancel = Some(cancel);
        let withdrawn = self.withdrawn.take();
        Step::Later(Box::pin(async move {
            tokio::select! {
                _ = decide => Step::Answer(vec![Message::new(
                    r#"{"jsonrpc":"2.0","id":1,"result":{"isError":true}}"#,
                )]),
                _ = cancelled => {
                    if let Some(withdrawn) = withdrawn {
                        let _ = withdrawn.send(());
                    }
                    Step::Drop
                }
            }
        }))
    }
    fn cancelled(&mut self, id: &str) {
        if id == "1"
            && let Some(cancel) = self.cancel.take()
        {
            let _ = cancel.send(());
        }
    }
}

fn asking() -> (
    Layered<MemLink>,
    mpsc::UnboundedSender<Incoming>,
    Seen,
    oneshot::Sender<()>,
    oneshot::Receiver<()>,
) {
    let (link, up, seen) = mem();
    let (decide, decided) = oneshot::channel();
    let (withdraw, withdrawn) = oneshot::channel();
    let layers = Layers::new().push(Ask {
        decide: Some(decided),
        cancel: None,
        withdrawn: Some(withdraw),
    });
    (Layered::new(link, layers), up, seen, decide, withdrawn)
}

#[tokio::test]
async fn a_held_call_holds_up_no_other_request_and_its_stream_gets_the_answer_decided_later() {
    let (link, up, seen, decide, _withdrawn) = asking();
    let (session, task) = session::spawn(link, None, never());
    let (one, mut rx1) = mpsc::unbounded_channel();
    session.post(msg(CALL_1), Some(one));
    let (two, mut rx2) = mpsc::unbounded_channel();
    session.post(msg(CALL_2), Some(two));
    seen.taken(1).await;
    assert_eq!(*seen.sent.lock().expect("sent"), [CALL_2], "call 1 is held");
    up.send(Incoming::Message(msg(
        r#"{"jsonrpc":"2.0","id":2,"result":{}}"#,
    )))
    .expect("up");
    assert_eq!(
        data(next(&mut rx2).await),
        r#"{"jsonrpc":"2.0","id":2,"result":{}}"#
    );
    assert!(
        next(&mut rx2).await.is_none(),
        "its stream ends after its answer"
    );
    decide.send(()).expect("decide");
    assert_eq!(
        data(next(&mut rx1).await),
        r#"{"jsonrpc":"2.0","id":1,"result":{"isError":true}}"#
    );
    assert!(next(&mut rx1).await.is_none());
    assert_eq!(
        seen.sent.lock().expect("sent").len(),
        1,
        "call 1 never went up"
    );
    session.end(CloseReason::SessionEnded);
    task.await.expect("task");
}

#[tokio::test]
async fn a_client_that_closes_a_held_calls_stream_withdraws_it() {
    let (link, _up, seen, _decide, withdrawn) = asking();
    let (session, task) = session::spawn(link, None, never());
    let (one, rx1) = mpsc::unbounded_channel();
    session.post(msg(CALL_1), Some(one));
    drop(rx1);
    session.cancelled("1".into());
    let (two, _rx2) = mpsc::unbounded_channel();
    session.post(msg(CALL_2), Some(two));
    seen.taken(1).await;
    tokio::time::timeout(Duration::from_secs(10), withdrawn)
        .await
        .expect("withdrawn in time")
        .expect("withdrawn, not dropped");
    assert_eq!(*seen.sent.lock().expect("sent"), [CALL_2]);
    session.end(CloseReason::SessionEnded);
    task.await.expect("task");
}
