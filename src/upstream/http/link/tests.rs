//! Unit tests of [`super`]: `HttpLink` against a real HTTP server on a local port (an
//! in-process hyper server: a real socket, scripted per test).

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use http_body_util::{BodyExt, Full, StreamBody, combinators::BoxBody};
use hyper::{Method, Response};
use serde_json::json;
use tokio::sync::{mpsc, oneshot};

use super::*;
use crate::tape::lifecycle::LifecycleKind;

type Body = BoxBody<Bytes, Infallible>;
type Reply = std::pin::Pin<Box<dyn std::future::Future<Output = Response<Body>> + Send>>;

/// What the server saw of one request.
#[derive(Debug, Clone)]
struct Seen {
    method: Method,
    last_event_id: Option<String>,
    /// The `Mcp-Session-Id` and `MCP-Protocol-Version` headers, as sent.
    session: Option<String>,
    protocol: Vec<String>,
    body: String,
}

/// Starts a server on port 0 answering with `reply`; returns its URL and what it sees.
async fn server(
    reply: impl Fn(Seen) -> Reply + Send + Sync + 'static,
) -> (String, mpsc::UnboundedReceiver<Seen>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let (seen_tx, seen_rx) = mpsc::unbounded_channel();
    let reply = Arc::new(reply);
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let (reply, seen_tx) = (Arc::clone(&reply), seen_tx.clone());
            tokio::spawn(async move {
                let service = hyper::service::service_fn(
                    move |req: hyper::Request<hyper::body::Incoming>| {
                        let (reply, seen_tx) = (Arc::clone(&reply), seen_tx.clone());
                        async move {
                            let method = req.method().clone();
                            let last_event_id = req
                                .headers()
                                .get("last-event-id")
                                .and_then(|v| v.to_str().ok())
                                .map(str::to_owned);
                            let header = |name| {
                                req.headers()
                                    .get_all(name)
                                    .iter()
                                    .filter_map(|v| v.to_str().ok().map(str::to_owned))
                                    .collect::<Vec<_>>()
                            };
                            let session = header("mcp-session-id").into_iter().next();
                            let protocol = header("mcp-protocol-version");
                            let body = req.into_body().collect().await.expect("body").to_bytes();
                            let seen = Seen {
                                method,
                                last_event_id,
                                session,
                                protocol,
                                body: String::from_utf8_lossy(&body).into_owned(),
                            };
                            let _ = seen_tx.send(seen.clone());
                            Ok::<_, Infallible>(reply(seen).await)
                        }
                    },
                );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (url, seen_rx)
}

fn status(code: u16, body: &'static str) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::from(body)).boxed());
    *r.status_mut() = hyper::StatusCode::from_u16(code).expect("status");
    r
}

/// An event stream of `events`, then whatever `rest` gives (to hold it open).
fn sse(
    events: &[&str],
    rest: impl futures_util::Stream<Item = Bytes> + Send + Sync + 'static,
) -> Response<Body> {
    let first: Vec<Bytes> = events.iter().map(|e| Bytes::from(e.to_string())).collect();
    let stream = futures_util::stream::iter(first)
        .chain(rest)
        .map(|b| Ok::<_, Infallible>(hyper::body::Frame::data(b)));
    let mut r = Response::new(BodyExt::boxed(StreamBody::new(stream)));
    r.headers_mut().insert(
        "content-type",
        hyper::header::HeaderValue::from_static("text/event-stream"),
    );
    r
}

fn done(r: Response<Body>) -> Reply {
    Box::pin(async move { r })
}

const REQUEST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
const ANSWER: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#;
const PROGRESS: &str =
    r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

fn msg(text: &str) -> Message {
    Message::new(Bytes::from(text.to_owned()))
}

fn link(url: &str) -> HttpLink {
    HttpLink::new(Remote::new(url, vec![]).expect("client"))
}

/// The next thing from the link, within a deadline.
async fn next(link: &mut HttpLink) -> Option<Incoming> {
    tokio::time::timeout(Duration::from_secs(10), link.next())
        .await
        .expect("the link answered within the deadline")
}

/// The server messages the link gives until (and with) the answer to request 1.
async fn until_answer(link: &mut HttpLink) -> (Vec<String>, Vec<Event>) {
    let (mut messages, mut facts) = (Vec::new(), Vec::new());
    loop {
        match next(link).await.expect("more") {
            Incoming::Message(m) => {
                messages.push(m.text().to_owned());
                if m.id() == Some("1") {
                    return (messages, facts);
                }
            }
            Incoming::Event(e) => facts.push(e),
            Incoming::Refused { error, .. } => panic!("refused: {error}"),
        }
    }
}

async fn seen(rx: &mut mpsc::UnboundedReceiver<Seen>) -> Seen {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("the server saw a request within the deadline")
        .expect("server running")
}

#[tokio::test]
async fn a_requests_sse_answer_comes_after_the_notification_before_it() {
    let events = [
        format!("data: {PROGRESS}\n\n"),
        format!("event: message\ndata: {ANSWER}\n\n"),
    ];
    let (url, _seen) = server(move |_| {
        let e: Vec<&str> = events.iter().map(String::as_str).collect();
        done(sse(&e, futures_util::stream::empty()))
    })
    .await;
    let mut link = link(&url);
    assert_eq!(
        link.started(),
        Some((LifecycleKind::Start, json!({"url": url})))
    );
    link.send(msg(REQUEST)).await.expect("sent");
    let (messages, facts) = until_answer(&mut link).await;
    assert_eq!(messages, [PROGRESS, ANSWER]);
    assert_eq!(
        facts,
        [(LifecycleKind::HttpStream, json!({"state": "open"}))]
    );
}

#[tokio::test]
async fn a_notification_is_accepted_with_202_and_nothing_comes_back() {
    let (url, mut seen_rx) = server(|s| {
        done(match s.body.contains("\"id\"") {
            true => status(200, ANSWER),
            false => status(202, ""),
        })
    })
    .await;
    let mut link = link(&url);
    link.send(msg(INITIALIZED)).await.expect("sent");
    link.send(msg(REQUEST)).await.expect("sent");
    // The 202 brings nothing: the first thing back is the request's answer.
    match next(&mut link).await {
        Some(Incoming::Message(m)) => assert_eq!(m.text(), ANSWER),
        other => panic!("{other:?}"),
    }
    assert_eq!(seen(&mut seen_rx).await.body, INITIALIZED);
    assert_eq!(seen(&mut seen_rx).await.body, REQUEST);
}

#[tokio::test]
async fn a_404_on_a_request_is_refused_with_its_status() {
    let (url, _seen) = server(|_| done(status(404, "no such session"))).await;
    let mut link = link(&url);
    link.send(msg(REQUEST)).await.expect("sent");
    let mut facts = Vec::new();
    loop {
        match next(&mut link).await.expect("more") {
            Incoming::Event(e) => facts.push(e),
            Incoming::Refused { request, error } => {
                assert_eq!(request.id(), Some("1"));
                assert!(
                    matches!(&error, HttpError::Status { status: 404, body, .. } if body == "no such session"),
                    "{error:?}"
                );
                break;
            }
            Incoming::Message(m) => panic!("{}", m.text()),
        }
    }
    assert_eq!(facts[0].0, LifecycleKind::HttpStatus);
    assert_eq!(facts[0].1["status"], 404);
}

#[tokio::test]
async fn a_stream_closed_before_its_answer_is_resumed_with_last_event_id() {
    let first = format!("id: 7\ndata: {PROGRESS}\n\n");
    let resumed = format!("id: 8\ndata: {ANSWER}\n\n");
    let (url, mut seen_rx) = server(move |s| {
        let events = match s.method {
            Method::GET if s.last_event_id.as_deref() == Some("7") => [resumed.as_str()],
            Method::GET => return done(status(405, "")),
            _ => [first.as_str()],
        };
        done(sse(&events, futures_util::stream::empty()))
    })
    .await;
    let mut link = link(&url);
    link.send(msg(REQUEST)).await.expect("sent");
    let (messages, facts) = until_answer(&mut link).await;
    assert_eq!(messages, [PROGRESS, ANSWER]);
    assert!(
        facts.contains(&(LifecycleKind::HttpResume, json!({"lastEventId": "7"}))),
        "{facts:?}"
    );
    assert_eq!(seen(&mut seen_rx).await.method, Method::POST);
    let get = seen(&mut seen_rx).await;
    assert_eq!(
        (get.method, get.last_event_id.as_deref()),
        (Method::GET, Some("7"))
    );
}

#[tokio::test]
async fn an_unanswered_request_is_refused_once_its_stream_ends() {
    let (url, _seen) =
        server(move |_| done(sse(&["data: \n\n"], futures_util::stream::empty()))).await;
    let mut link = link(&url);
    link.send(msg(REQUEST)).await.expect("sent");
    loop {
        match next(&mut link).await.expect("more") {
            Incoming::Refused { error, .. } => {
                assert!(matches!(error, HttpError::Unanswered { .. }), "{error:?}");
                break;
            }
            Incoming::Event(_) => {}
            Incoming::Message(m) => panic!("{}", m.text()),
        }
    }
}

#[tokio::test]
async fn a_request_goes_only_after_the_notification_before_it_was_taken() {
    let (release_tx, release_rx) = oneshot::channel::<()>();
    let release = Arc::new(std::sync::Mutex::new(Some(release_rx)));
    let (url, mut seen_rx) = server(move |s| {
        if s.body.contains("\"id\"") {
            return done(status(200, ANSWER));
        }
        let held = release.lock().expect("lock").take();
        Box::pin(async move {
            if let Some(held) = held {
                let _ = held.await;
            }
            status(202, "")
        })
    })
    .await;
    let mut link = link(&url);
    // Neither send waits for a POST: the notification is still held by the server.
    link.send(msg(INITIALIZED)).await.expect("sent");
    link.send(msg(REQUEST)).await.expect("sent");
    assert_eq!(seen(&mut seen_rx).await.body, INITIALIZED);
    // While the notification is not taken, the request is not sent.
    for _ in 0..50 {
        tokio::task::yield_now().await;
    }
    assert!(seen_rx.try_recv().is_err(), "the request overtook");
    release_tx.send(()).expect("release");
    assert_eq!(seen(&mut seen_rx).await.body, REQUEST);
    match next(&mut link).await {
        Some(Incoming::Message(m)) => assert_eq!(m.text(), ANSWER),
        other => panic!("{other:?}"),
    }
}

/// Tells when the stream it is in is dropped (the client went away).
struct Gone(Option<oneshot::Sender<()>>);

impl Drop for Gone {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

/// A server that holds each request's event stream open until the client goes (a
/// keep-alive comment now and then shows it that the connection is closed) and answers
/// anything else 202; and the news that the request's stream was dropped.
async fn holding() -> (String, mpsc::UnboundedReceiver<Seen>, oneshot::Receiver<()>) {
    let (gone_tx, gone_rx) = oneshot::channel::<()>();
    let gone = Arc::new(std::sync::Mutex::new(Some(gone_tx)));
    let (url, seen_rx) = server(move |s| {
        if !s.body.contains("\"id\"") {
            return done(status(202, ""));
        }
        let guard = Gone(gone.lock().expect("lock").take());
        let held = futures_util::stream::unfold(guard, |guard| async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            Some((Bytes::from_static(b": alive\n\n"), guard))
        });
        done(sse(&[], held))
    })
    .await;
    (url, seen_rx, gone_rx)
}

/// Waits for the request's stream to be dropped, then drains the link: nothing is
/// refused for the request.
async fn dropped_and_not_refused(link: &mut HttpLink, gone: oneshot::Receiver<()>) {
    tokio::time::timeout(Duration::from_secs(10), gone)
        .await
        .expect("the request's stream was closed within the deadline")
        .expect("guard dropped");
    link.end_input().await;
    while let Some(incoming) = next(link).await {
        assert!(
            !matches!(incoming, Incoming::Refused { .. }),
            "{incoming:?}"
        );
    }
}

#[tokio::test]
async fn a_cancellation_aborts_the_requests_post() {
    let (url, mut seen_rx, gone) = holding().await;
    let mut link = link(&url);
    link.send(msg(REQUEST)).await.expect("sent");
    assert_eq!(seen(&mut seen_rx).await.body, REQUEST);
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;
    link.send(msg(cancel)).await.expect("sent");
    // The cancellation is forwarded too.
    assert_eq!(seen(&mut seen_rx).await.body, cancel);
    dropped_and_not_refused(&mut link, gone).await;
}

#[tokio::test]
async fn a_request_given_up_without_a_word_closes_its_stream_and_nothing_is_sent() {
    let (url, mut seen_rx, gone) = holding().await;
    let mut link = link(&url);
    link.send(msg(REQUEST)).await.expect("sent");
    assert_eq!(seen(&mut seen_rx).await.body, REQUEST);
    // How the HTTP front says its client closed the request's stream.
    link.cancel("1").await;
    dropped_and_not_refused(&mut link, gone).await;
    // Nothing but the request reached the server: a stream closed is no message.
    assert!(seen_rx.try_recv().is_err());
}

#[tokio::test]
async fn after_end_input_what_is_under_way_still_comes_then_none() {
    let (release_tx, release_rx) = oneshot::channel::<()>();
    let release = Arc::new(std::sync::Mutex::new(Some(release_rx)));
    let (url, mut seen_rx) = server(move |_| {
        let held = release.lock().expect("lock").take();
        Box::pin(async move {
            if let Some(held) = held {
                let _ = held.await;
            }
            status(200, ANSWER)
        })
    })
    .await;
    let mut link = link(&url);
    link.send(msg(REQUEST)).await.expect("sent");
    assert_eq!(seen(&mut seen_rx).await.body, REQUEST);
    link.end_input().await;
    assert!(matches!(
        link.send(msg(INITIALIZED)).await,
        Err(LinkError::Gone)
    ));
    release_tx.send(()).expect("release");
    match next(&mut link).await {
        Some(Incoming::Message(m)) => assert_eq!(m.text(), ANSWER),
        other => panic!("{other:?}"),
    }
    assert!(next(&mut link).await.is_none());
    assert!(matches!(
        link.close(CloseReason::ClientClosedStdin).await,
        Ok(Closed::Remote)
    ));
}

/// A layer that keeps the server messages it is shown.
struct Watch(Arc<std::sync::Mutex<Vec<String>>>);

impl crate::layer::Layer for Watch {
    fn server(&mut self, msg: Message) -> crate::layer::Step {
        self.0.lock().expect("lock").push(msg.text().to_owned());
        crate::layer::Step::Pass(msg)
    }
}

#[tokio::test]
async fn on_stdio_a_refused_request_reaches_the_layers_as_the_clients_error() {
    let (url, _seen) = server(|_| done(status(404, "gone"))).await;
    let shown = Arc::new(std::sync::Mutex::new(Vec::new()));
    let layers = crate::layer::Layers::new().push(Watch(Arc::clone(&shown)));
    let mut link =
        crate::layer::Layered::new(crate::upstream::refusals::Refusals(link(&url)), layers);
    link.send(msg(REQUEST)).await.expect("sent");
    let got = tokio::time::timeout(Duration::from_secs(10), link.next())
        .await
        .expect("within the deadline");
    let Some(Incoming::Message(error)) = got else {
        panic!("{got:?}");
    };
    let v = error.value();
    assert_eq!(
        (v["id"].as_i64(), v["error"]["code"].as_i64()),
        (Some(1), Some(-32000))
    );
    assert!(
        v["error"]["message"]
            .as_str()
            .expect("text")
            .contains("HTTP 404"),
        "{v}"
    );
    assert_eq!(*shown.lock().expect("lock"), [error.text().to_owned()]);
}

mod budget;
mod headers;
