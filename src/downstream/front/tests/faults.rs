//! A session's task over a link whose layers inject a disconnect or mark an answer slow:
//! the request's stream gets the status and the session ends; a slow answer reaches its
//! stream marked so (the handler cuts it).

use super::*;
use crate::layer::{Layer, Step};

/// Disconnects on the client's request `id` (with `status`), or marks every answer slow.
struct Fault {
    disconnect: Option<(&'static str, Option<u16>)>,
}

impl Layer for Fault {
    fn reads_first(&self) -> bool {
        true
    }
    fn client(&mut self, msg: Message) -> Step {
        match self.disconnect {
            Some((id, status)) if msg.id() == Some(id) => Step::Disconnect(status),
            _ => Step::Pass(msg),
        }
    }
    fn server(&mut self, msg: Message) -> Step {
        match self.disconnect {
            None => Step::Pass(msg.slowly()),
            Some(_) => Step::Pass(msg),
        }
    }
}

fn faulty(
    disconnect: Option<(&'static str, Option<u16>)>,
) -> (Layered<MemLink>, mpsc::UnboundedSender<Incoming>, Seen) {
    let (link, up, seen) = mem();
    let layers = Layers::new().push(Fault { disconnect });
    (Layered::new(link, layers), up, seen)
}

#[tokio::test]
async fn a_disconnect_gives_its_request_the_status_ends_the_session_and_closes_the_link() {
    for (status, want) in [(Some(503), 503), (None, session::DISCONNECT_STATUS)] {
        let (link, up, seen) = faulty(Some(("2", status)));
        let (session, task) = session::spawn(link, None, never());
        let (one, mut rx1) = mpsc::unbounded_channel();
        session.post(msg(CALL_1), Some(one));
        seen.taken(1).await;
        let (two, mut rx2) = mpsc::unbounded_channel();
        session.post(msg(CALL_2), Some(two));
        match next(&mut rx2).await {
            Some(Item::Disconnect(got)) => assert_eq!(got, want),
            other => panic!("not the disconnect: {other:?}"),
        }
        let ended = task.await.expect("task");
        assert!(session.is_over(), "the session ended");
        assert!(
            next(&mut rx1).await.is_none(),
            "the other request's stream ends without an answer"
        );
        assert_eq!(
            seen.closes.load(Ordering::SeqCst),
            1,
            "the link closed once"
        );
        assert!(ended.verdict.is_some());
        assert_eq!(
            seen.sent.lock().expect("sent").len(),
            1,
            "call 2 never went up"
        );
        drop(up);
    }
}

#[tokio::test]
async fn a_slow_answer_reaches_its_stream_marked_slow_whole() {
    let (link, up, seen) = faulty(None);
    let (session, task) = session::spawn(link, None, never());
    let (one, mut rx1) = mpsc::unbounded_channel();
    session.post(msg(CALL_1), Some(one));
    seen.taken(1).await;
    up.send(Incoming::Message(msg(ANSWER_1))).expect("up");
    match next(&mut rx1).await {
        Some(Item::Slow(event)) => assert_eq!(event, session::sse_event(ANSWER_1.as_bytes())),
        other => panic!("not slow: {other:?}"),
    }
    session.end(CloseReason::SessionEnded);
    task.await.expect("task");
}
