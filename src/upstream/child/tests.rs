//! Unit tests of [`super`]: the child link against real small processes (`cat`, `sh`).
//!
//! The graces of [`crate::process`] are real here: paused time cannot drive a real child
//! (tokio would jump past a grace while the child is still on its way to exit), so the
//! tests that need a grace take its real two seconds, and assert which signal ended the
//! child, which tells the graces apart.

use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use nix::sys::signal::Signal;

use super::*;
use crate::layer::{Layered, Layers};
use crate::message::Message;
use crate::tape::close::CloseStatus;
use crate::tape::lifecycle::LifecycleKind;
use crate::upstream::{Closed, Incoming, Link};

/// Longer than any grace the tests meet: a test that hangs fails instead.
const DEADLINE: Duration = Duration::from_secs(20);

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_owned()).collect()
}

fn sh(script: &str) -> Vec<String> {
    argv(&["sh", "-c", script])
}

async fn next(link: &mut ChildLink) -> Option<Incoming> {
    tokio::time::timeout(DEADLINE, link.next())
        .await
        .expect("the link answered within the deadline")
}

async fn message(link: &mut ChildLink) -> String {
    match next(link).await {
        Some(Incoming::Message(msg)) => msg.text().to_owned(),
        other => panic!("expected a message, got {other:?}"),
    }
}

async fn exited(link: ChildLink, reason: CloseReason) -> std::process::ExitStatus {
    match tokio::time::timeout(DEADLINE, link.close(reason)).await {
        Ok(Ok(Closed::Exited(status))) => status,
        other => panic!("expected an exit, got {other:?}"),
    }
}

/// Closes the link of a server that will not exit when asked: the signal mcptape stopped
/// it with, and how it exited.
async fn stopped(link: ChildLink, reason: CloseReason) -> (Signal, std::process::ExitStatus) {
    match tokio::time::timeout(DEADLINE, link.close(reason)).await {
        Ok(Ok(Closed::Stopped { status, by })) => (by, status),
        other => panic!("expected a stop by mcptape, got {other:?}"),
    }
}

#[tokio::test]
async fn a_line_goes_to_stdin_and_comes_back_without_its_newline() {
    let mut link = ChildLink::spawn(&argv(&["cat"]), &[], None, 1 << 20).expect("spawn cat");
    let (kind, params) = link.started().expect("a child has a start");
    assert_eq!(kind, LifecycleKind::Start);
    assert_eq!(params["command"], serde_json::json!(["cat"]));
    assert_eq!(params["pid"], serde_json::json!(link.pid()));
    link.send(Message::new(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#))
        .await
        .expect("cat takes it");
    assert_eq!(
        message(&mut link).await,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#
    );
    link.end_input().await;
    assert!(
        next(&mut link).await.is_none(),
        "cat exits when its stdin closes"
    );
    let status = exited(link, CloseReason::ClientClosedStdin).await;
    assert_eq!(status.code(), Some(0));
}

#[tokio::test]
async fn the_exit_status_passes_through() {
    let mut link = ChildLink::spawn(&sh("echo '{}'; exit 7"), &[], None, 1 << 20).expect("spawn");
    assert_eq!(message(&mut link).await, "{}");
    assert!(next(&mut link).await.is_none());
    let status = exited(link, CloseReason::ServerExited).await;
    assert_eq!(status.code(), Some(7));
}

#[tokio::test]
async fn a_stdout_line_too_long_is_an_oversize_event_and_what_follows_still_comes() {
    let script = "head -c 3000 /dev/zero | tr '\\0' a; echo; echo '{\"id\":1}'";
    let mut link = ChildLink::spawn(&sh(script), &[], None, 100).expect("spawn");
    match next(&mut link).await {
        Some(Incoming::Event((LifecycleKind::Oversize, params))) => {
            assert_eq!(params["dir"], "recv");
            assert_eq!(params["bytes"], 3000);
            assert_eq!(params["prefix"].as_str().map(str::len), Some(1024));
        }
        other => panic!("expected an oversize event, got {other:?}"),
    }
    assert_eq!(message(&mut link).await, r#"{"id":1}"#);
    assert!(next(&mut link).await.is_none());
}

#[tokio::test]
async fn a_server_that_does_not_read_takes_sends_and_is_stopped_by_sigterm() {
    // `sleep` never reads its stdin, so closing it does not end it: the grace then SIGTERM.
    let mut link = ChildLink::spawn(&sh("exec sleep 100"), &[], None, 1 << 20).expect("spawn");
    let big = format!(r#"{{"pad":"{}"}}"#, "x".repeat(100_000));
    for _ in 0..4 {
        // More than a pipe holds: the writer task waits, the caller does not.
        tokio::time::timeout(Duration::from_secs(1), link.send(Message::new(big.clone())))
            .await
            .expect("send returns while the child does not read")
            .expect("taken");
    }
    link.end_input().await;
    assert!(
        next(&mut link).await.is_none(),
        "stdout ends once SIGTERM ends it"
    );
    let (by, status) = stopped(link, CloseReason::ClientClosedStdin).await;
    assert_eq!(by, Signal::SIGTERM);
    assert_eq!(status.signal(), Some(Signal::SIGTERM as i32));
}

#[tokio::test]
async fn a_server_that_ignores_sigterm_gets_sigkill() {
    let script = "trap '' TERM; while :; do sleep 1; done";
    let mut link = ChildLink::spawn(&sh(script), &[], None, 1 << 20).expect("spawn");
    link.end_input().await;
    assert!(next(&mut link).await.is_none());
    let (by, status) = stopped(link, CloseReason::ClientClosedStdin).await;
    assert_eq!(by, Signal::SIGKILL);
    assert_eq!(status.signal(), Some(9));
}

#[tokio::test]
async fn a_signal_is_passed_on_when_the_link_is_closed_for_it() {
    let link = ChildLink::spawn(&argv(&["cat"]), &[], None, 1 << 20).expect("spawn cat");
    let status = exited(link, CloseReason::Signal(Signal::SIGHUP)).await;
    assert_eq!(status.signal(), Some(1));
}

#[tokio::test]
async fn a_command_that_cannot_start_is_an_error_naming_it() {
    let Err(e) = ChildLink::spawn(&argv(&["/nonexistent/server"]), &[], None, 1024) else {
        panic!("spawned a command that does not exist");
    };
    assert!(e.to_string().contains("/nonexistent/server"), "{e}");
}

/// A layer that keeps what it is told, in order.
#[derive(Clone, Default)]
struct Seen(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl crate::layer::Layer for Seen {
    fn client(&mut self, msg: Message) -> crate::layer::Step {
        self.push(format!("send {}", msg.text()));
        crate::layer::Step::Pass(msg)
    }
    fn server(&mut self, msg: Message) -> crate::layer::Step {
        self.push(format!("recv {}", msg.text()));
        crate::layer::Step::Pass(msg)
    }
    fn event(&mut self, (kind, _): &crate::upstream::Event) {
        self.push(format!("event {}", kind.as_str()));
    }
    fn close(&mut self, close: &Close) {
        self.push(format!("close {:?} {:?}", close.reason, close.status));
    }
}

impl Seen {
    fn push(&self, what: String) {
        self.0.lock().expect("lock").push(what);
    }
}

#[tokio::test]
async fn behind_layers_the_start_every_message_and_the_close_are_seen_in_order() {
    let seen = Seen::default();
    let link = ChildLink::spawn(&argv(&["cat"]), &[], None, 1 << 20).expect("spawn cat");
    let mut layered = Layered::new(link, Layers::new().push(seen.clone()));
    layered
        .send(Message::new("{\"id\":1}"))
        .await
        .expect("sent");
    match tokio::time::timeout(DEADLINE, layered.next()).await {
        Ok(Some(Incoming::Message(msg))) => assert_eq!(msg.text(), "{\"id\":1}"),
        other => panic!("expected the echo, got {other:?}"),
    }
    layered.end_input().await;
    assert!(
        tokio::time::timeout(DEADLINE, layered.next())
            .await
            .expect("in time")
            .is_none()
    );
    layered
        .close(CloseReason::ClientClosedStdin)
        .await
        .expect("closed");
    let seen = seen.0.lock().expect("lock").clone();
    assert_eq!(
        seen,
        [
            "event $transport/start".to_owned(),
            "send {\"id\":1}".to_owned(),
            "recv {\"id\":1}".to_owned(),
            format!(
                "close {:?} {:?}",
                Some(CloseReason::ClientClosedStdin),
                CloseStatus::Exited(0)
            ),
        ]
    );
}

#[test]
fn a_failed_start_is_told_as_a_start_without_pid_and_a_close_that_says_why() {
    let seen = Seen::default();
    let mut layers = Layers::new().push(seen.clone());
    let error = ProcessError::Spawn {
        command: "nope".into(),
        source: std::io::Error::from(std::io::ErrorKind::NotFound),
    };
    layers.failed_start(start_failure(&argv(&["nope"]), &error));
    let seen = seen.0.lock().expect("lock").clone();
    assert_eq!(seen[0], "event $transport/start");
    assert!(seen[1].starts_with("close Some(StartFailed("), "{seen:?}");
}

#[tokio::test]
async fn the_start_and_an_oversize_line_are_written_as_they_always_were() {
    // `sh -c SCRIPT --token hunter2`: `--token` is `$0`, and a credential flag the tap
    // redacts in the command it records.
    let mut command = sh("head -c 1100 /dev/zero | tr '\\0' a; echo");
    command.extend(argv(&["--token", "hunter2"]));
    let mut link = ChildLink::spawn(&command, &[], None, 100).expect("spawn");
    let start = link.started().expect("a child has a start");
    let pid = link.pid();
    let oversize = match next(&mut link).await {
        Some(Incoming::Event(event)) => event,
        other => panic!("expected an oversize event, got {other:?}"),
    };
    assert!(next(&mut link).await.is_none());
    exited(link, CloseReason::ServerExited).await;
    let lines = crate::upstream::http::tests::as_the_tap_writes(&[start, oversize]);
    let conn = lines[0]
        .split("\"conn\":\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("a conn id")
        .to_owned();
    let meta = format!(r#""_meta":{{"dir":"lifecycle","server":"s","ts":"TS","conn":"{conn}"}}}}"#);
    let start = concat!(
        r#"{"jsonrpc":"2.0","method":"$transport/start","params":{"command":["sh","-c","#,
        r#""head -c 1100 /dev/zero | tr '\\0' a; echo","--token","[REDACTED]"],"pid":"#,
    );
    let prefix = "a".repeat(1024);
    assert_eq!(
        lines,
        [
            format!(r#"{start}{pid}}},{meta}"#),
            format!(
                r#"{{"jsonrpc":"2.0","method":"$transport/oversize","params":{{"dir":"recv","bytes":1100,"prefix":"{prefix}"}},{meta}"#
            ),
        ]
    );
}
