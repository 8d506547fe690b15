//! Unit tests of [`super`]: the stdio pump driving the replay engine in memory, with a
//! shutdown future the test controls.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::*;
use crate::upstream::pick::Picker;
use crate::upstream::replay::{Options, ReplayLink};

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#;

/// A replay link over a tape of server `s` written from (dir, ts, message) triples.
fn link(lines: &[(&str, &str, &str)], pace: bool) -> (ReplayLink, tempfile::TempDir) {
    let text: String = lines
        .iter()
        .map(|(d, ts, msg)| crate::tape::testing::line(msg, d, "c-1", Some(ts)))
        .collect();
    let (tape, dir) = crate::tape::testing::load(&text);
    let picker = Picker::new(Arc::new(tape), "s", None, &Options::default());
    (ReplayLink::new(picker, pace), dir)
}

fn handshake() -> Vec<(&'static str, &'static str, &'static str)> {
    vec![
        ("send", "2026-01-01T00:00:00.000Z", INIT),
        (
            "recv",
            "2026-01-01T00:00:02.000Z",
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25"}}"#,
        ),
    ]
}

#[tokio::test]
async fn a_client_that_hangs_up_ends_the_pump_with_its_reason_and_a_clean_verdict() {
    let (link, _dir) = link(&handshake(), false);
    let (mut client, ours) = tokio::io::duplex(1 << 16);
    let (ours_r, ours_w) = tokio::io::split(ours);
    let pump = tokio::spawn(serve(link, ours_r, ours_w, 1 << 20, std::future::pending()));
    client
        .write_all(format!("{INIT}\n").as_bytes())
        .await
        .expect("write");
    let mut reader = BufReader::new(&mut client);
    let mut answer = String::new();
    reader.read_line(&mut answer).await.expect("read");
    assert!(
        answer.starts_with(r#"{"jsonrpc":"2.0","id":0,"result""#),
        "{answer}"
    );
    assert!(answer.ends_with("}\n"), "one line: {answer:?}");
    drop(reader);
    client.shutdown().await.expect("shutdown");
    drop(client);
    let pumped = pump.await.expect("join").expect("pump");
    assert_eq!(pumped.reason, CloseReason::ClientClosedStdin);
    match pumped.closed {
        Closed::Replayed { verdict, .. } => assert!(verdict.ok(), "{}", verdict.describe()),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn the_shutdown_future_ends_the_pump_and_names_the_signal() {
    let (link, _dir) = link(&handshake(), false);
    let (_client, ours) = tokio::io::duplex(1 << 16);
    let (r, w) = tokio::io::split(ours);
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let shutdown = async move {
        let _ = rx.await;
        CloseReason::Signal(nix::sys::signal::Signal::SIGTERM)
    };
    let pump = tokio::spawn(serve(link, r, w, 1 << 20, shutdown));
    tx.send(()).expect("send");
    let pumped = pump.await.expect("join").expect("pump");
    assert_eq!(
        pumped.reason,
        CloseReason::Signal(nix::sys::signal::Signal::SIGTERM)
    );
}

#[tokio::test(start_paused = true)]
async fn with_pace_an_answer_waits_its_recorded_delay_in_virtual_time() {
    let (link, _dir) = link(&handshake(), true);
    let (mut client, ours) = tokio::io::duplex(1 << 16);
    let (r, w) = tokio::io::split(ours);
    let pump = tokio::spawn(serve(link, r, w, 1 << 20, std::future::pending()));
    let start = tokio::time::Instant::now();
    client
        .write_all(format!("{INIT}\n").as_bytes())
        .await
        .expect("write");
    let mut answer = String::new();
    BufReader::new(&mut client)
        .read_line(&mut answer)
        .await
        .expect("read");
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_secs(2) && waited < Duration::from_secs(3),
        "{waited:?}"
    );
    drop(client);
    let _ = pump.await.expect("join");
}

#[tokio::test]
async fn a_line_too_long_to_hold_reaches_the_engine_as_a_divergence() {
    let (link, _dir) = link(&handshake(), false);
    let (mut client, ours) = tokio::io::duplex(1 << 16);
    let (r, w) = tokio::io::split(ours);
    let pump = tokio::spawn(serve(link, r, w, 64, std::future::pending()));
    let long = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"{}\"}}\n",
        "x".repeat(200)
    );
    client.write_all(long.as_bytes()).await.expect("write");
    let mut answer = String::new();
    BufReader::new(&mut client)
        .read_line(&mut answer)
        .await
        .expect("read");
    assert!(answer.contains("-32700"), "{answer}");
    drop(client);
    let pumped = pump.await.expect("join").expect("pump");
    match pumped.closed {
        Closed::Replayed { verdict, .. } => assert!(!verdict.ok()),
        other => panic!("{other:?}"),
    }
}

/// An upstream that owes one last message once interrupted (as a child writes before it
/// exits), and takes no client message until the end (as a `send` waiting for the
/// layers' room behind a stuck disk would).
struct Owing {
    interrupted: bool,
    last: Option<Message>,
}

impl Link for Owing {
    async fn send(&mut self, _msg: Message) -> Result<(), crate::error::LinkError> {
        std::future::pending().await
    }

    async fn next(&mut self) -> Option<Incoming> {
        if !self.interrupted {
            std::future::pending::<()>().await;
        }
        self.last.take().map(Incoming::Message)
    }

    async fn interrupt(&mut self, _reason: &CloseReason) -> bool {
        self.interrupted = true;
        true
    }

    async fn close(self, _reason: CloseReason) -> Result<Closed> {
        Ok(Closed::Remote)
    }
}

#[tokio::test]
async fn a_shutdown_ends_a_held_message_and_what_the_link_still_owes_reaches_the_client() {
    let link = Owing {
        interrupted: false,
        last: Some(Message::new(r#"{"jsonrpc":"2.0","method":"bye"}"#)),
    };
    let (mut client, ours) = tokio::io::duplex(1 << 16);
    let (r, w) = tokio::io::split(ours);
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let shutdown = async move {
        let _ = rx.await;
        CloseReason::Signal(nix::sys::signal::Signal::SIGTERM)
    };
    let pump = tokio::spawn(serve(link, r, w, 1 << 20, shutdown));
    client
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}\n")
        .await
        .expect("write");
    // The send that waits cannot be told apart from a slow one from outside; the
    // shutdown must end it either way.
    tokio::task::yield_now().await;
    tx.send(()).expect("send");
    let mut last = String::new();
    BufReader::new(&mut client)
        .read_line(&mut last)
        .await
        .expect("read");
    assert_eq!(last, "{\"jsonrpc\":\"2.0\",\"method\":\"bye\"}\n");
    let pumped = pump.await.expect("join").expect("pump");
    assert_eq!(
        pumped.reason,
        CloseReason::Signal(nix::sys::signal::Signal::SIGTERM)
    );
}

#[tokio::test]
async fn a_client_that_writes_everything_and_hangs_up_still_gets_every_answer_it_is_owed() {
    let mut lines = handshake();
    lines.push((
        "send",
        "2026-01-01T00:00:03.000Z",
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    ));
    lines.push((
        "recv",
        "2026-01-01T00:00:04.000Z",
        r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#,
    ));
    let (link, _dir) = link(&lines, false);
    let (mut client, ours) = tokio::io::duplex(1 << 16);
    let (r, w) = tokio::io::split(ours);
    // All of it at once, then the client's side closes (as `printf … | proxy` does).
    client
        .write_all(
            format!("{INIT}\n{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}}\n")
                .as_bytes(),
        )
        .await
        .expect("write");
    client.shutdown().await.expect("shutdown");
    let pumped = serve(link, r, w, 1 << 20, std::future::pending())
        .await
        .expect("pump");
    let mut answers = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut client, &mut answers)
        .await
        .expect("read");
    assert_eq!(answers.lines().count(), 2, "{answers}");
    assert!(answers.contains(r#""tools":[]"#), "{answers}");
    match pumped.closed {
        Closed::Replayed { verdict, .. } => assert!(verdict.ok(), "{}", verdict.describe()),
        other => panic!("{other:?}"),
    }
}

/// Marks every server message slow (the `slow-stream` fault's shape), or ends the
/// connection on a client's `tools/call` (the `disconnect` fault's).
struct Faulty {
    disconnect: Option<Option<u16>>,
}

impl crate::layer::Layer for Faulty {
    fn reads_first(&self) -> bool {
        true
    }
    fn client(&mut self, msg: Message) -> crate::layer::Step {
        match self.disconnect {
            Some(status) if msg.method() == Some("tools/call") => {
                crate::layer::Step::Disconnect(status)
            }
            _ => crate::layer::Step::Pass(msg),
        }
    }
    fn server(&mut self, msg: Message) -> crate::layer::Step {
        match self.disconnect {
            None => crate::layer::Step::Pass(msg.slowly()),
            Some(_) => crate::layer::Step::Pass(msg),
        }
    }
}

fn faulty(
    disconnect: Option<Option<u16>>,
) -> (crate::layer::Layered<ReplayLink>, tempfile::TempDir) {
    let (link, dir) = link(&handshake(), false);
    let layers = crate::layer::Layers::new().push(Faulty { disconnect });
    (crate::layer::Layered::new(link, layers), dir)
}

#[tokio::test(start_paused = true)]
async fn a_slow_answer_reaches_the_client_whole_in_many_small_writes() {
    use tokio::io::AsyncReadExt;
    let (link, _dir) = faulty(None);
    let (mut client, ours) = tokio::io::duplex(1 << 16);
    let (r, w) = tokio::io::split(ours);
    let pump = tokio::spawn(serve(link, r, w, 1 << 20, std::future::pending()));
    client
        .write_all(format!("{INIT}\n").as_bytes())
        .await
        .expect("write");
    let (mut got, mut reads) = (Vec::new(), 0);
    let mut buf = [0u8; 4096];
    while !got.ends_with(b"\n") {
        let n = client.read(&mut buf).await.expect("read");
        assert!(n > 0, "the answer ended early: {got:?}");
        assert!(
            n <= crate::downstream::slow::SLOW_PIECE_BYTES,
            "one piece per read: {n}"
        );
        got.extend_from_slice(&buf[..n]);
        reads += 1;
    }
    let line = String::from_utf8(got).expect("utf-8");
    assert!(
        line.starts_with(r#"{"jsonrpc":"2.0","id":0,"result""#),
        "{line}"
    );
    assert_eq!(
        reads,
        line.len()
            .div_ceil(crate::downstream::slow::SLOW_PIECE_BYTES)
    );
    client.shutdown().await.expect("shutdown");
    drop(client);
    let pumped = pump.await.expect("join").expect("pump");
    assert_eq!(pumped.disconnect, None);
}

#[tokio::test]
async fn an_injected_disconnect_ends_the_pump_and_gives_its_exit_status() {
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#;
    for (status, exit) in [(Some(7), 7), (None, 1), (Some(404), 1)] {
        let (link, _dir) = faulty(Some(status));
        let (mut client, ours) = tokio::io::duplex(1 << 16);
        let (r, w) = tokio::io::split(ours);
        let pump = tokio::spawn(serve(link, r, w, 1 << 20, std::future::pending()));
        client
            .write_all(format!("{INIT}\n{call}\n").as_bytes())
            .await
            .expect("write");
        // The client's side stays open: only the disconnect ends the pump.
        let pumped = pump.await.expect("join").expect("pump");
        assert_eq!(pumped.reason, CloseReason::ServerExited);
        assert_eq!(
            pumped.disconnect.as_ref().map(|d| d.id.as_deref()),
            Some(Some("1"))
        );
        assert_eq!(pumped.disconnect_exit(), Some(exit), "{status:?}");
        drop(client);
    }
}

/// Holds every `tools/call` until the test decides, then refuses it (a policy's `ask`
/// denied): the decision comes through `decide`.
struct Ask {
    decide: Option<tokio::sync::oneshot::Receiver<()>>,
}

impl crate::layer::Layer for Ask {
    fn reads_first(&self) -> bool {
        true
    }
    fn client(&mut self, msg: Message) -> crate::layer::Step {
        if msg.method() != Some("tools/call") {
            return crate::layer::Step::Pass(msg);
        }
        let Some(decide) = self.decide.take() else {
            return crate::layer::Step::Pass(msg);
        };
        crate::layer::Step::Later(Box::pin(async move {
            let _ = decide.await;
            let id = msg.id().unwrap_or("null").to_owned();
            crate::layer::Step::Answer(vec![Message::new(format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"isError":true}}}}"#
            ))])
        }))
    }
}

#[tokio::test]
async fn a_held_call_holds_up_nothing_and_a_client_that_hangs_up_after_it_still_gets_its_answer() {
    let mut lines = handshake();
    lines.push((
        "send",
        "2026-01-01T00:00:03.000Z",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    ));
    lines.push((
        "recv",
        "2026-01-01T00:00:04.000Z",
        r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#,
    ));
    let (link, _dir) = link(&lines, false);
    let (decide, decided) = tokio::sync::oneshot::channel();
    let layers = crate::layer::Layers::new().push(Ask {
        decide: Some(decided),
    });
    let link = crate::layer::Layered::new(link, layers);
    let (client, ours) = tokio::io::duplex(1 << 16);
    let (r, w) = tokio::io::split(ours);
    let (client_r, mut client_w) = tokio::io::split(client);
    let pump = tokio::spawn(serve(link, r, w, 1 << 20, std::future::pending()));
    // Everything at once, then the client's side closes (as `printf … | proxy` does),
    // the call still held.
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#;
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    client_w
        .write_all(format!("{INIT}\n{call}\n{list}\n").as_bytes())
        .await
        .expect("write");
    client_w.shutdown().await.expect("shutdown");
    let mut reader = BufReader::new(client_r);
    let mut answers = Vec::new();
    for _ in 0..2 {
        let mut answer = String::new();
        reader.read_line(&mut answer).await.expect("read");
        answers.push(answer);
    }
    assert!(answers[0].contains(r#""id":0"#), "{answers:?}");
    assert!(
        answers[1].contains(r#""tools":[]"#),
        "the request after the held call was answered: {answers:?}"
    );
    assert!(!pump.is_finished(), "the held call is still owed");
    decide.send(()).expect("decide");
    let mut refusal = String::new();
    reader.read_line(&mut refusal).await.expect("read");
    assert_eq!(
        refusal,
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"isError\":true}}\n"
    );
    let pumped = pump.await.expect("join").expect("pump");
    assert_eq!(pumped.reason, CloseReason::ClientClosedStdin);
    match pumped.closed {
        Closed::Replayed { verdict, .. } => assert!(verdict.ok(), "{}", verdict.describe()),
        other => panic!("{other:?}"),
    }
}
