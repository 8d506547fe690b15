//! The link's budget of server messages not yet taken: a flood the consumer does not
//! read stops at it, and nothing the worker owes the client's order waits on it.

use super::*;

/// How many progress notifications the flooding server streams to request 1.
const FLOOD: usize = 10_000;
/// Each is about 4 kB: 40 MB in all, far more than the link's budget and the sockets'
/// buffers together.
const PAD: usize = 4_000;
const ANSWER_2: &str = r#"{"jsonrpc":"2.0","id":2,"result":{}}"#;

fn flood_progress(i: usize) -> String {
    let pad = "x".repeat(PAD);
    format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progress":{i},"pad":"{pad}"}}}}"#
    )
}

/// A server that answers request 1 with [`FLOOD`] progress notifications, then its
/// answer (counting what it wrote in `written`, telling `gone` when the stream is
/// dropped), request 2 at once, and a notification with `notification` (a status).
async fn flooding(
    notification: u16,
    gone: Option<oneshot::Sender<()>>,
) -> (String, mpsc::UnboundedReceiver<Seen>, Arc<AtomicUsize>) {
    let written = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&written);
    let gone = Arc::new(std::sync::Mutex::new(gone));
    let (url, seen) = server(move |s| {
        if s.body.contains(r#""id":2"#) {
            return done(status(200, ANSWER_2));
        }
        if !s.body.contains(r#""id":1"#) {
            return done(status(notification, ""));
        }
        let (written, guard) = (
            Arc::clone(&counted),
            Gone(gone.lock().expect("lock").take()),
        );
        // Made as the server's socket takes them: a stream that is not read stops here.
        let events = futures_util::stream::iter((0..=FLOOD).map(move |i| {
            let _held = &guard;
            if i == FLOOD {
                return Bytes::from(format!("data: {ANSWER}\n\n"));
            }
            written.fetch_add(1, Ordering::SeqCst);
            Bytes::from(format!("data: {}\n\n", flood_progress(i)))
        }));
        done(sse(&[], events))
    })
    .await;
    (url, seen, written)
}

/// Waits, within a deadline, until a producer found the link's budget spent.
async fn budget_spent(link: &HttpLink) {
    tokio::time::timeout(Duration::from_secs(10), link.budget.waited.notified())
        .await
        .expect("the budget was spent within the deadline");
}

/// What the link gave, read until `answers` responses came or it ended.
#[derive(Default)]
struct Read {
    progress: Vec<u64>,
    refused: Vec<(String, HttpError)>,
    answers: Vec<String>,
}

async fn read_until(link: &mut HttpLink, answers: usize) -> Read {
    let mut read = Read::default();
    while read.answers.len() < answers {
        match next(link).await {
            None => break,
            Some(Incoming::Message(m)) if m.method().is_some() => {
                let progress = m.value()["params"]["progress"].as_u64();
                read.progress.push(progress.expect("a progress number"));
            }
            Some(Incoming::Message(m)) => read.answers.push(m.text().to_owned()),
            Some(Incoming::Event(_)) => {}
            Some(Incoming::Refused { request, error }) => {
                read.refused.push((request.text().to_owned(), error));
            }
        }
    }
    read
}

/// The most items the budget lets the link hold of the flood (and its stream's fact).
fn flood_bound() -> usize {
    MAX_HELD_BYTES / (flood_progress(0).len() + HELD_ITEM_BYTES) + 1
}

#[tokio::test]
async fn a_flood_not_read_stays_at_the_budget_then_all_of_it_comes_in_order() {
    let (url, _seen, written) = flooding(202, None).await;
    let mut link = link(&url);
    link.send(msg(REQUEST)).await.expect("sent");
    budget_spent(&link).await;
    let (held, queued) = (link.budget.held(), link.incoming.len());
    let largest = flood_progress(FLOOD - 1).len() + HELD_ITEM_BYTES;
    assert!(
        held <= MAX_HELD_BYTES && held + largest > MAX_HELD_BYTES,
        "held {held} of {MAX_HELD_BYTES}"
    );
    assert!(queued <= flood_bound(), "{queued} items held");
    // Everything else runs meanwhile (the server, the HTTP client's connection): nothing
    // more comes in, and the server cannot write the rest to a socket nobody reads.
    for _ in 0..1_000 {
        tokio::task::yield_now().await;
    }
    assert_eq!(
        (link.incoming.len(), link.budget.held()),
        (queued, held),
        "more came in while the budget was spent"
    );
    let stalled = written.load(Ordering::SeqCst);
    assert!(stalled < FLOOD, "the server wrote all {stalled} events");
    let read = read_until(&mut link, 1).await;
    assert!(read.refused.is_empty());
    assert_eq!(read.answers, [ANSWER]);
    assert!(
        read.progress.iter().copied().eq(0..FLOOD as u64),
        "{} progress notifications, out of order or missing",
        read.progress.len()
    );
    assert_eq!(written.load(Ordering::SeqCst), FLOOD);
    // The stream's last facts may still be on their way: drain them.
    link.end_input().await;
    let rest = read_until(&mut link, usize::MAX).await;
    assert!(rest.progress.is_empty() && rest.answers.is_empty() && rest.refused.is_empty());
    assert_eq!(link.budget.held(), 0, "the budget came back whole");
}

#[tokio::test]
async fn a_refused_notification_does_not_hold_the_worker_while_the_budget_is_spent() {
    let (url, mut seen_rx, _written) = flooding(503, None).await;
    let mut link = link(&url);
    link.send(msg(REQUEST)).await.expect("sent");
    budget_spent(&link).await;
    link.send(msg(INITIALIZED)).await.expect("sent");
    link.send(msg(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#))
        .await
        .expect("sent");
    // Nothing is read, yet the worker took the refusal and went on to the next request.
    let bodies = [
        seen(&mut seen_rx).await.body,
        seen(&mut seen_rx).await.body,
        seen(&mut seen_rx).await.body,
    ];
    assert!(
        bodies[1] == INITIALIZED && bodies[2].contains(r#""id":2"#),
        "{bodies:?}"
    );
    let read = read_until(&mut link, 2).await;
    assert!(
        read.answers.contains(&ANSWER.to_owned()),
        "{:?}",
        read.answers
    );
    assert!(
        read.answers.contains(&ANSWER_2.to_owned()),
        "{:?}",
        read.answers
    );
    assert!(read.progress.iter().copied().eq(0..FLOOD as u64));
    assert!(
        matches!(&read.refused[..], [(n, HttpError::Status { status: 503, .. })] if n == INITIALIZED),
        "{:?}",
        read.refused
    );
}

#[tokio::test]
async fn a_cancellation_aborts_a_post_waiting_for_room_and_the_drain_ends() {
    let (gone_tx, gone_rx) = oneshot::channel::<()>();
    let (url, mut seen_rx, _written) = flooding(202, Some(gone_tx)).await;
    let mut link = link(&url);
    link.send(msg(REQUEST)).await.expect("sent");
    budget_spent(&link).await;
    let queued = link.incoming.len();
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;
    link.send(msg(cancel)).await.expect("sent");
    tokio::time::timeout(Duration::from_secs(10), gone_rx)
        .await
        .expect("the request's stream was closed within the deadline")
        .expect("guard dropped");
    assert_eq!(seen(&mut seen_rx).await.body, REQUEST);
    assert_eq!(seen(&mut seen_rx).await.body, cancel);
    // What was held still comes, in order, then the link ends: nothing waits for room.
    link.end_input().await;
    let read = read_until(&mut link, 1).await;
    assert!(read.answers.is_empty() && read.refused.is_empty());
    assert!(
        read.progress.len() < queued,
        "{} of {queued}",
        read.progress.len()
    );
    assert!(
        read.progress
            .iter()
            .copied()
            .eq(0..read.progress.len() as u64)
    );
    assert_eq!(link.budget.held(), 0, "the budget came back whole");
}
