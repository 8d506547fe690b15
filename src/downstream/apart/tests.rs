//! Unit tests of [`super`]: the backlog of real pipes and sockets, and the stdio pump
//! over the replay engine writing to a real socket (Node's stdio pipes are socketpairs).
//! The runtime has one thread: while the test task reads, the pump cannot write, so
//! what one read returns shows what the pump wrote before it waited.

use std::io::{Read, Write};
use std::sync::Arc;

use tokio::io::AsyncWriteExt;
use tokio::net::UnixStream;

use super::*;
use crate::downstream::pump::serve_spaced;
use crate::tape::ServerTape;
use crate::tape::close::CloseReason;
use crate::upstream::pick::Picker;
use crate::upstream::replay::{Options, ReplayLink};

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#;
const CALL: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":1}}}"#;
const PROGRESS: &str = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":3,"total":3}}"#;
const ANSWER: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#;

#[test]
fn a_pipe_and_a_socket_tell_what_the_client_has_not_read_and_a_file_has_none() {
    let (mut theirs, mut ours) = std::io::pipe().expect("pipe");
    let pipe = Backlog::of(&ours).expect("a pipe has a backlog");
    assert_eq!(pipe.unread(), Some(0));
    ours.write_all(b"{}\n").expect("write");
    assert_eq!(pipe.unread(), Some(3));
    theirs.read_exact(&mut [0; 3]).expect("read");
    assert_eq!(pipe.unread(), Some(0));

    let (mut ours, mut theirs) = std::os::unix::net::UnixStream::pair().expect("socketpair");
    let socket = Backlog::of(&ours).expect("a socket has a backlog");
    assert_eq!(socket.unread(), Some(0));
    ours.write_all(b"{}\n").expect("write");
    assert!(socket.unread().is_some_and(|n| n > 0));
    theirs.read_exact(&mut [0; 3]).expect("read");
    assert_eq!(socket.unread(), Some(0));

    let file = tempfile::tempfile().expect("tempfile");
    assert!(Backlog::of(&file).is_none());
}

#[test]
fn only_an_answer_right_after_a_notification_waits_and_only_with_a_backlog() {
    let (_theirs, ours) = std::io::pipe().expect("pipe");
    let mut spacing = Spacing::new(Backlog::of(&ours));
    let kinds = [
        (Kind::Response, false),
        (Kind::Notification, false),
        (Kind::Notification, false),
        (Kind::Response, true),
        (Kind::Response, false),
        (Kind::Notification, false),
        (Kind::Error, true),
        (Kind::Notification, false),
        (Kind::Request, false),
        (Kind::Response, false),
    ];
    for (kind, waits) in kinds {
        assert_eq!(spacing.must_wait(kind), waits, "{kind:?}");
        spacing.wrote(kind);
    }
    let mut none = Spacing::new(None);
    none.wrote(Kind::Notification);
    assert!(!none.must_wait(Kind::Response));
}

#[test]
fn a_raw_line_is_read_only_as_far_as_spacing_needs() {
    let (_theirs, ours) = std::io::pipe().expect("pipe");
    let mut spacing = Spacing::new(Backlog::of(&ours));
    assert_eq!(spacing.kind_of(PROGRESS.as_bytes()), Kind::Notification);
    // An answer is not parsed unless it follows a notification.
    assert_eq!(spacing.kind_of(ANSWER.as_bytes()), Kind::Other);
    spacing.wrote(Kind::Notification);
    assert_eq!(spacing.kind_of(ANSWER.as_bytes()), Kind::Response);
}

/// A replay link over a tape of server `s`: the handshake, then a call answered by a
/// progress notification and the answer, recorded in the same millisecond.
fn link(dir: &tempfile::TempDir) -> ReplayLink {
    let lines = [
        ("send", "00.000", INIT),
        (
            "recv",
            "00.001",
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25"}}"#,
        ),
        ("send", "00.002", CALL),
        ("recv", "00.103", PROGRESS),
        ("recv", "00.103", ANSWER),
    ];
    let text: String = lines
        .iter()
        .map(|(d, ts, msg)| {
            let ts = format!("2026-01-01T00:00:{ts}Z");
            crate::tape::testing::line(msg, d, "c-1", Some(&ts))
        })
        .collect();
    let path = dir.path().join("t.ndjson");
    std::fs::write(&path, text).expect("write");
    let tape = Arc::new(ServerTape::load(&path, "s").expect("load"));
    ReplayLink::new(Picker::new(tape, "s", None, &Options::default()), false)
}

/// Reads from `client` until a whole line is there; returns what was read.
async fn read_line(client: &UnixStream) -> String {
    let mut got = Vec::new();
    while !got.ends_with(b"\n") {
        client.readable().await.expect("readable");
        let mut buf = [0; 4096];
        match client.try_read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("read: {e}"),
        }
    }
    String::from_utf8(got).expect("utf-8")
}

#[tokio::test]
async fn the_pump_writes_an_answer_after_a_notification_once_the_client_has_read_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut client, ours) = UnixStream::pair().expect("socketpair");
    let spacing = Spacing::new(Backlog::of(&ours));
    let (r, w) = ours.into_split();
    let pump = tokio::spawn(serve_spaced(
        link(&dir),
        r,
        w,
        spacing,
        1 << 20,
        std::future::pending::<CloseReason>(),
    ));
    client
        .write_all(format!("{INIT}\n").as_bytes())
        .await
        .expect("write");
    assert!(read_line(&client).await.contains(r#""id":0"#));
    client
        .write_all(format!("{CALL}\n").as_bytes())
        .await
        .expect("write");
    // The first read after the call holds the notification alone: the answer, which
    // the replay had ready at the same time, waits until it is read.
    let first = read_line(&client).await;
    assert_eq!(first, format!("{PROGRESS}\n"));
    assert_eq!(read_line(&client).await, format!("{ANSWER}\n"));
    client.shutdown().await.expect("shutdown");
    drop(client);
    let pumped = pump.await.expect("join").expect("pump");
    assert_eq!(pumped.reason, CloseReason::ClientClosedStdin);
}

#[tokio::test(flavor = "current_thread")]
async fn a_client_that_stops_reading_costs_one_wait_not_one_per_answer() {
    const NOTE: &[u8] = b"{\"method\":\"n\"}\n";
    let (mut theirs, mut ours) = std::io::pipe().expect("pipe");
    let mut spacing = Spacing::new(Backlog::of(&ours));
    // What the pump does for each line: ask, write, note what it was.
    let mut notify = |spacing: &mut Spacing| {
        assert!(!spacing.must_wait(Kind::Notification));
        ours.write_all(NOTE).expect("write");
        spacing.wrote(Kind::Notification);
    };
    notify(&mut spacing);
    assert!(spacing.must_wait(Kind::Response));
    let started = std::time::Instant::now();
    spacing.wait().await;
    assert!(
        started.elapsed() >= SEPARATE_READ_WAIT,
        "the client read nothing"
    );
    // Stalled: later answers after notifications do not wait while it has not caught up.
    for _ in 0..3 {
        notify(&mut spacing);
        assert!(!spacing.must_wait(Kind::Response));
    }
    // Once it has read everything, the next answer after a notification waits again.
    theirs.read_exact(&mut [0; 4 * NOTE.len()]).expect("read");
    for _ in 0..3 {
        notify(&mut spacing);
        assert!(
            spacing.must_wait(Kind::Response),
            "caught up: it waits again"
        );
        spacing.wait().await;
        theirs.read_exact(&mut [0; NOTE.len()]).expect("read");
    }
}
