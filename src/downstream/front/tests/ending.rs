//! How sessions end: a recording ends whole (its close written, its error kept) however
//! the upstream's `DELETE` goes — here a real port-0 upstream that reads the `DELETE` and
//! never answers it — and a replayed session whose recorded server ended the connection
//! still answers every later POST.

use std::path::Path;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

use super::*;

/// The live answer of the upstream below to `initialize`.
const UP_INIT_ANSWER: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"up","version":"0"}}}"#;

/// A Streamable HTTP upstream on a port-0 listener: it answers `initialize` with a
/// session id and anything else POSTed with `202`; a `DELETE` it reads, says so on the
/// returned channel, and never answers. Its URL and that channel.
async fn upstream_that_never_answers_delete() -> (String, mpsc::UnboundedReceiver<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let (deleted, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve_upstream(stream, deleted.clone()));
        }
    });
    (url, rx)
}

/// One connection of that upstream: its requests, one after another.
async fn serve_upstream(stream: TcpStream, deleted: mpsc::UnboundedSender<()>) {
    let mut stream = BufReader::new(stream);
    loop {
        let mut head = Vec::new();
        let mut length = 0;
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
            head.push(line);
        }
        let mut body = vec![0; length];
        stream.read_exact(&mut body).await.expect("the body");
        if head[0].starts_with("DELETE") {
            let _ = deleted.send(());
            // Holds the connection, and never answers.
            std::future::pending::<()>().await;
        }
        let answer = if String::from_utf8_lossy(&body).contains(r#""initialize""#) {
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: up-1\r\nContent-Length: {}\r\n\r\n{UP_INIT_ANSWER}",
                UP_INIT_ANSWER.len()
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
}

/// A front forwarding to `url`, recording into `tape` (at most `max_bytes` of it).
fn recording_front(url: String, tape: &Path, max_bytes: Option<u64>) -> Front {
    let how = crate::mode::Recording {
        redactor: crate::redact::Redactor::new(&[]),
        max_bytes,
    };
    front_of(Source::Forward {
        url,
        headers: Vec::new(),
        record: Some((tape.to_owned(), how)),
        stack: crate::layer::Stack::default(),
    })
}

/// Opens a session of `front` and has its `initialize` answered by the upstream.
async fn initialized(front: &Front) {
    let (_id, session) = front.open().expect("a session");
    let (tx, mut rx) = mpsc::unbounded_channel();
    assert!(session.post(msg(INIT), Some(tx)));
    assert_eq!(data(next(&mut rx).await), UP_INIT_ANSWER);
}

/// The methods of a tape's entries, in order.
fn methods(tape: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(tape).expect("tape");
    text.lines()
        .map(|l| {
            let entry: serde_json::Value = serde_json::from_str(l).expect("an entry");
            entry["method"].as_str().unwrap_or("(answer)").to_owned()
        })
        .collect()
}

#[tokio::test]
async fn a_recording_ends_whole_when_the_upstream_never_answers_the_delete() {
    let (url, mut deleted) = upstream_that_never_answers_delete().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.ndjson");
    let front = recording_front(url, &path, None);
    initialized(&front).await;

    // The second signal comes once the upstream holds the DELETE: the front gives up
    // waiting for it there.
    let rest = async move {
        deleted.recv().await.expect("the upstream got the DELETE");
    };
    let served = front.finish(END_GRACE, rest).await;
    assert!(served.tape_errors.is_empty(), "{:?}", served.tape_errors);
    assert_eq!(
        methods(&path),
        [
            "$transport/start",
            "initialize",
            "$http/session",
            "(answer)",
            "$transport/close"
        ],
        "the recording has its close (once)"
    );
}

#[tokio::test]
async fn a_recording_that_failed_is_reported_when_the_upstream_never_answers_the_delete() {
    let (url, mut deleted) = upstream_that_never_answers_delete().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.ndjson");
    // Room for the start entry only: the recording cannot be whole.
    let front = recording_front(url, &path, Some(200));
    initialized(&front).await;

    let rest = async move {
        deleted.recv().await.expect("the upstream got the DELETE");
    };
    let served = front.finish(END_GRACE, rest).await;
    assert_eq!(served.tape_errors.len(), 1, "{:?}", served.tape_errors);
    assert!(
        served.tape_errors[0].contains("t.ndjson"),
        "{:?}",
        served.tape_errors
    );
}

/// A link whose close never finishes, over a real recording's layers.
#[tokio::test(start_paused = true)]
async fn a_session_given_up_on_after_the_grace_has_its_recording_ended() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.ndjson");
    let how = crate::mode::Recording {
        redactor: crate::redact::Redactor::new(&[]),
        max_bytes: None,
    };
    let recording = RecordSession::open(&path, "s", &how).expect("open");
    let (tape, _tape_dir) = tape();
    let front = front(tape);
    let layers = Layers::new().push(recording.layer());
    let give_up = front.give_up.subscribe();
    let (session, task) = session::spawn(Layered::new(Stuck, layers), Some(recording), give_up);
    assert!(session.post(msg(CALL_1), None));
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
    let served = front.finish(END_GRACE, std::future::pending()).await;
    assert_eq!(started.elapsed(), END_GRACE, "waited the whole grace");
    assert!(served.tape_errors.is_empty(), "{:?}", served.tape_errors);
    assert_eq!(methods(&path), ["tools/call", "$transport/close"]);
}

/// A tape of server `s` whose one connection is the handshake, then the server's exit.
fn tape_the_server_ended() -> (Arc<ServerTape>, tempfile::TempDir) {
    let line =
        |m: &str, d| crate::tape::testing::line(m, d, "c-1", Some("2026-01-01T00:00:00.000Z"));
    let close = r#"{"jsonrpc":"2.0","method":"$transport/close","params":{"exitCode":0,"reason":"server exited"}}"#;
    let text = line(INIT, "send") + &line(INIT_ANSWER, "recv") + &line(close, "lifecycle");
    let (tape, dir) = crate::tape::testing::load(&text);
    (Arc::new(tape), dir)
}

#[tokio::test]
async fn a_replayed_session_past_its_recorded_servers_end_answers_every_later_post() {
    let (tape, _dir) = tape_the_server_ended();
    let front = front(tape);
    let (_id, session) = front.open().expect("a session");
    let (tx, mut rx) = mpsc::unbounded_channel();
    session.post(msg(INIT), Some(tx));
    assert_eq!(data(next(&mut rx).await), INIT_ANSWER);
    assert!(next(&mut rx).await.is_none(), "the answer ended its stream");

    // The replay has nothing more (its recorded server ended here); it still answers a
    // ping, and a request the tape does not have with the divergence.
    let (tx, mut rx) = mpsc::unbounded_channel();
    session.post(msg(r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#), Some(tx));
    assert_eq!(
        data(next(&mut rx).await),
        r#"{"jsonrpc":"2.0","id":5,"result":{}}"#
    );
    let (tx, mut rx) = mpsc::unbounded_channel();
    session.post(
        msg(r#"{"jsonrpc":"2.0","id":6,"method":"tools/list"}"#),
        Some(tx),
    );
    let answer = data(next(&mut rx).await);
    assert!(
        answer.contains(r#""id":6"#) && answer.contains(r#""error""#),
        "{answer}"
    );
    let served = front.finish(END_GRACE, std::future::pending()).await;
    assert_eq!(served.verdicts.len(), 1);
    assert!(
        !served.verdicts[0].ok(),
        "the request past the end diverged"
    );
}
