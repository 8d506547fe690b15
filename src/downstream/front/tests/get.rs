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

/// A Streamable HTTP upstream on a port-0 listener that offers no GET stream: it
/// answers `initialize` with a session id, other POSTs with `202`, a `GET` with `405`.
async fn upstream_without_get() -> String {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut stream = BufReader::new(stream);
                loop {
                    let (mut first, mut length) = (String::new(), 0);
                    loop {
                        let mut line = String::new();
                        if stream.read_line(&mut line).await.unwrap_or(0) == 0 {
                            return;
                        }
                        if line == "\r\n" {
                            break;
                        }
                        if let Some((name, value)) = line.split_once(':')
                            && name.eq_ignore_ascii_case("content-length")
                        {
                            length = value.trim().parse().expect("a length");
                        }
                        if first.is_empty() {
                            first = line;
                        }
                    }
                    let mut body = vec![0; length];
                    stream.read_exact(&mut body).await.expect("the body");
                    let answer = if first.starts_with("GET") {
                        "HTTP/1.1 405 Method Not Allowed\r\nAllow: POST\r\nContent-Length: 0\r\n\r\n"
                            .to_owned()
                    } else if String::from_utf8_lossy(&body).contains(r#""initialize""#) {
                        format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: up-1\r\nContent-Length: {}\r\n\r\n{INIT_ANSWER}",
                            INIT_ANSWER.len()
                        )
                    } else {
                        "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n".to_owned()
                    };
                    stream
                        .get_mut()
                        .write_all(answer.as_bytes())
                        .await
                        .expect("answer");
                }
            });
        }
    });
    url
}

#[tokio::test]
async fn an_upstream_that_offers_no_get_stream_makes_the_clients_get_a_405() {
    let front = front_of(Source::Forward {
        url: upstream_without_get().await,
        headers: Vec::new(),
        record: None,
        stack: crate::layer::Stack::default(),
    });
    let (id, session) = front.open().expect("a session");
    let (tx, mut rx) = mpsc::unbounded_channel();
    assert!(session.post(msg(INIT), Some(tx)));
    assert_eq!(data(next(&mut rx).await), INIT_ANSWER);
    // Once the session exists the link opens the upstream's GET stream.
    assert!(session.post(
        msg(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
        None
    ));
    let get = hyper::Request::get("/mcp")
        .header("accept", "text/event-stream")
        .body(())
        .expect("a request");
    let answer = super::super::get::serve(&front, &get, Some(id)).await;
    assert_eq!(answer.status(), hyper::StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(answer.headers()["allow"], "POST, DELETE");
    let _ = front.finish(END_GRACE, std::future::pending()).await;
}
