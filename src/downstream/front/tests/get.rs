//! Routing to a session's GET stream: what came on the upstream's GET stream goes to the
//! client's, not to the newest request stream; without a client GET stream it goes to
//! the newest request stream as before.

use super::*;
use crate::tape::stream::Stream;

const ROOTS: &str = r#"{"jsonrpc":"2.0","id":0,"method":"roots/list"}"#;

/// The message a GET-stream event carries, after its id.
fn get_data(event: Option<Bytes>, id: u64) -> String {
    let text = String::from_utf8_lossy(&event.expect("an event")).into_owned();
    let prefix = format!("id: {id}\nevent: message\ndata: ");
    text.strip_prefix(&prefix)
        .and_then(|t| t.strip_suffix("\n\n"))
        .unwrap_or_else(|| panic!("not event {id}: {text:?}"))
        .to_owned()
}

#[tokio::test]
async fn what_came_on_the_get_stream_goes_to_the_clients_not_the_newest_post() {
    let (link, up, seen) = mem();
    let (session, task) = session::spawn(link, None, never());
    let (one, mut rx1) = mpsc::unbounded_channel();
    session.post(msg(CALL_1), Some(one));
    seen.taken(1).await;
    let mut get = session
        .listen(None)
        .await
        .expect("the session is there")
        .expect("a GET stream opens");
    up.send(Incoming::Message(msg(ROOTS).on(Some(Stream::Get))))
        .expect("up");
    let event = tokio::time::timeout(Duration::from_secs(10), get.recv())
        .await
        .expect("in time");
    assert_eq!(get_data(event, 1), ROOTS);
    // Tied to the open request: its own stream.
    up.send(Incoming::Message(msg(PROGRESS))).expect("up");
    assert_eq!(data(next(&mut rx1).await), PROGRESS);
    assert!(get.try_recv().is_err(), "the GET stream got only its own");
    session.end(CloseReason::SessionEnded);
    task.await.expect("task");
}

#[tokio::test]
async fn without_a_client_get_stream_it_goes_to_the_newest_post_as_before() {
    let (link, up, seen) = mem();
    let (session, task) = session::spawn(link, None, never());
    let (one, mut rx1) = mpsc::unbounded_channel();
    session.post(msg(CALL_1), Some(one));
    seen.taken(1).await;
    up.send(Incoming::Message(msg(ROOTS).on(Some(Stream::Get))))
        .expect("up");
    assert_eq!(data(next(&mut rx1).await), ROOTS);
    // Answered, the request's stream ends; what comes next waits for a GET stream.
    up.send(Incoming::Message(msg(ANSWER_1))).expect("up");
    assert_eq!(data(next(&mut rx1).await), ANSWER_1);
    up.send(Incoming::Message(msg(PROGRESS))).expect("up");
    // Held when it came first, or given at once when the GET stream did: event 1 either
    // way.
    let mut get = session
        .listen(None)
        .await
        .expect("the session is there")
        .expect("a GET stream opens");
    let event = tokio::time::timeout(Duration::from_secs(10), get.recv())
        .await
        .expect("in time");
    assert_eq!(get_data(event, 1), PROGRESS);
    session.end(CloseReason::SessionEnded);
    task.await.expect("task");
}
