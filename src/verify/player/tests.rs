//! Unit tests of [`super`]: the player against in-memory upstreams — the replay engine
//! standing in for a live server (a tape of its own), and a link that refuses requests
//! the way a failing HTTP server does. No processes; time is paused, so a call the live
//! side never answers ends at its timeout at once instead of hanging the test.

use std::collections::{HashSet, VecDeque};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::error::{HttpError, LinkError};
use crate::tape::ServerTape;
use crate::upstream::pick::Picker;
use crate::upstream::replay::{self, ReplayLink};

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"sampling":{}},"clientInfo":{"name":"t","version":"1"}}}"#;
const INIT_OK: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const GREET: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"tape"}}}"#;
const HELLO: &str =
    r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Hello, tape!"}]}}"#;
const ASK: &str =
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask","arguments":{}}}"#;
const SAMPLING: &str = r#"{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":10}}"#;
const SAMPLED: &str = r#"{"jsonrpc":"2.0","id":7,"result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}"#;
const ASKED: &str =
    r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"the model said hi"}]}}"#;

/// A recorded connection of server `s`: the handshake, a call, and a call during which the
/// server asks for sampling (answered by the client).
fn conversation() -> Vec<(&'static str, String)> {
    [
        ("send", INIT),
        ("recv", INIT_OK),
        ("send", INITIALIZED),
        ("send", GREET),
        ("recv", HELLO),
        ("send", ASK),
        ("recv", SAMPLING),
        ("send", SAMPLED),
        ("recv", ASKED),
    ]
    .into_iter()
    .map(|(dir, msg)| (dir, msg.to_owned()))
    .collect()
}

/// The tape text of (dir, message) pairs, one connection of server `s`.
fn text(lines: &[(&str, String)]) -> String {
    lines
        .iter()
        .map(|(dir, msg)| {
            let meta = format!(r#""_meta":{{"dir":"{dir}","server":"s","conn":"c-1"}}}}"#);
            format!("{},{meta}\n", msg.strip_suffix('}').expect("object"))
        })
        .collect()
}

/// The replay engine over a tape of `lines`: the live server.
fn live(lines: &[(&str, String)]) -> (ReplayLink, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("live.ndjson");
    std::fs::write(&path, text(lines)).expect("write");
    let tape = Arc::new(ServerTape::load(&path, "s").expect("load"));
    let picker = Picker::new(tape, "s", None, &replay::Options::default());
    (ReplayLink::new(picker, false), dir)
}

fn options() -> Options {
    Options {
        ignore: Vec::new(),
        allow_writes: true,
        timeout: Duration::from_secs(30),
        max_line: 1 << 20,
        match_meta: false,
        chains: Default::default(),
        progress: Default::default(),
        redactor: crate::redact::Redactor::new(&[]),
    }
}

/// Plays the recorded `lines` through `link`.
async fn play_tape<L: Link>(lines: &[(&str, String)], link: L) -> (Run, Result<Closed>) {
    let tape = Tape::parse(Path::new("t.ndjson"), text(lines).as_bytes()).expect("tape");
    let conn = tape.connections().remove(0);
    play(link, &tape, &conn, &options(), &HashSet::new(), &mut []).await
}

fn classes(run: &Run) -> Vec<(&str, Class)> {
    run.outcomes
        .iter()
        .map(|p| (p.tool.as_deref().unwrap_or(&p.method), p.class))
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_tape_played_against_itself_is_same_everywhere_and_consumes_the_recording() {
    let (link, _dir) = live(&conversation());
    let (run, closed) = play_tape(&conversation(), link).await;
    assert_eq!(
        classes(&run),
        [("greet", Class::Same), ("ask", Class::Same)],
        "{run:?}"
    );
    assert!(run.problems.is_empty(), "{:?}", run.problems);
    assert!(!run.broken);
    assert_eq!(run.outcomes[1].live.as_deref(), Some(ASKED));
    // The replayed server saw every client message it recorded, the sampling answer
    // given from the tape included, and nothing else.
    match closed.expect("closed") {
        Closed::Replayed { verdict, .. } => assert!(verdict.ok(), "{}", verdict.describe()),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_changed_answer_is_changed_with_its_path_and_the_rest_stays_same() {
    let mut drifted = conversation();
    drifted[4].1 = HELLO.replace("Hello, tape!", "Hi, tape!");
    let (link, _dir) = live(&drifted);
    let (run, _) = play_tape(&conversation(), link).await;
    assert_eq!(
        classes(&run),
        [("greet", Class::Changed), ("ask", Class::Same)],
        "{run:?}"
    );
    let diffs = &run.outcomes[0].differences;
    assert_eq!(diffs.len(), 1, "{diffs:?}");
    assert_eq!(diffs[0].path, "result.content.0.text");
    assert_eq!(run.outcomes[0].answer_line, Some(5));
    assert!(run.problems.is_empty(), "{:?}", run.problems);
}

#[tokio::test(start_paused = true)]
async fn a_server_that_ends_mid_call_fails_it_and_nothing_after_is_played() {
    let mut ended = conversation()[..4].to_vec();
    ended.push((
        "lifecycle",
        r#"{"jsonrpc":"2.0","method":"$transport/close","params":{"reason":"server exited","exitCode":1}}"#.to_owned(),
    ));
    let (link, _dir) = live(&ended);
    let (run, _) = play_tape(&conversation(), link).await;
    assert_eq!(
        classes(&run),
        [("greet", Class::NewError), ("ask", Class::NotPlayed)],
        "{run:?}"
    );
    assert_eq!(
        run.outcomes[0].reason.as_deref(),
        Some("the server exited instead of answering")
    );
    assert!(run.broken);
    assert_eq!(
        run.problems,
        ["not played: the server closed its output at tape line 4"]
    );
}

#[tokio::test(start_paused = true)]
async fn a_call_the_server_never_answers_ends_at_the_timeout_and_play_goes_on() {
    // A whole recording (closed by its client) that lacks the answer: the engine owes
    // nothing, it does not say the tape ends.
    let mut silent = conversation();
    silent.remove(4);
    silent.push((
        "lifecycle",
        r#"{"jsonrpc":"2.0","method":"$transport/close","params":{"reason":"client closed stdin"}}"#
            .to_owned(),
    ));
    let (link, _dir) = live(&silent);
    let (run, _) = play_tape(&conversation(), link).await;
    assert_eq!(
        classes(&run),
        [("greet", Class::NewError), ("ask", Class::Same)],
        "{run:?}"
    );
    assert_eq!(
        run.outcomes[0].reason.as_deref(),
        Some("no answer within 30s (--timeout)")
    );
    assert!(!run.broken);
}

/// An upstream that answers `initialize` and refuses every other request with an HTTP
/// status, as [`crate::upstream::http::HttpLink`] reports a failing POST.
#[derive(Default)]
struct Refusing {
    queue: VecDeque<Incoming>,
    ended: bool,
}

/// What [`Refusing`] refuses requests with.
fn busy() -> HttpError {
    HttpError::Status {
        url: "http://127.0.0.1:1/mcp".into(),
        status: 503,
        body: "busy".into(),
    }
}

impl Link for Refusing {
    async fn send(&mut self, msg: Message) -> Result<(), LinkError> {
        match (msg.kind(), msg.method()) {
            (Kind::Request, Some("initialize")) => {
                let id = msg.id().unwrap_or("null");
                let answer = INIT_OK.replace("\"id\":0", &format!("\"id\":{id}"));
                self.queue
                    .push_back(Incoming::Message(Message::new(answer)));
            }
            (Kind::Request, _) => self.queue.push_back(Incoming::Refused {
                request: msg,
                error: busy(),
            }),
            _ => {}
        }
        Ok(())
    }

    async fn next(&mut self) -> Option<Incoming> {
        if let Some(incoming) = self.queue.pop_front() {
            return Some(incoming);
        }
        if self.ended {
            return None;
        }
        std::future::pending().await
    }

    async fn end_input(&mut self) {
        self.ended = true;
    }

    async fn close(self, _reason: CloseReason) -> Result<Closed> {
        Ok(Closed::Remote)
    }
}

#[tokio::test(start_paused = true)]
async fn a_refused_request_is_a_new_error_with_the_http_errors_text() {
    let (run, closed) = play_tape(&conversation(), Refusing::default()).await;
    assert_eq!(
        classes(&run),
        [("greet", Class::NewError), ("ask", Class::NewError)],
        "{run:?}"
    );
    let live: Value =
        serde_json::from_str(run.outcomes[0].live.as_deref().expect("live")).expect("json");
    assert_eq!(live["id"], 1);
    assert_eq!(live["error"]["message"], busy().to_string());
    assert!(busy().to_string().contains("HTTP 503"));
    assert!(run.problems.is_empty(), "{:?}", run.problems);
    assert!(!run.broken);
    assert!(matches!(closed, Ok(Closed::Remote)));
}
