//! Unit tests of [`super`]: a [`Session`] over the replay engine, from tapes written here,
//! with no process; and one over a remote that cannot be reached.

use std::sync::{Arc, Mutex};

use super::*;
use crate::layer::{Layer, Step};
use crate::upstream::replay::Options;

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#;
const INIT_ANSWER: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const ECHO: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"m":"hi"}}}"#;
const ECHOED: &str =
    r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}"#;

/// A session of server `s` replaying a tape of one connection: the handshake, then
/// `rest` as (dir, message) pairs.
fn session(rest: &[(&str, &str)]) -> (Session, tempfile::TempDir) {
    session_behind(rest, crate::layer::Layers::new())
}

/// [`session`], behind `layers`.
fn session_behind(rest: &[(&str, &str)], layers: Layers) -> (Session, tempfile::TempDir) {
    let handshake = [("send", INIT), ("recv", INIT_ANSWER), ("send", INITIALIZED)];
    let text: String = handshake
        .iter()
        .chain(rest)
        .map(|(d, msg)| crate::tape::testing::line(msg, d, "c-1", Some("2026-01-01T00:00:00.000Z")))
        .collect();
    let (tape, dir) = crate::tape::testing::load(&text);
    let picker = Picker::new(Arc::new(tape), "s", None, &Options::default());
    assert_eq!(picker.problem(), None);
    let mut session = Session::replay("s", picker, layers);
    session.notices = Notices::Kept(Vec::new());
    (session, dir)
}

fn echo_params() -> Value {
    json!({"name": "echo", "arguments": {"m": "hi"}})
}

/// Closes the session and says whether the replay found the client's messages as
/// recorded, with nothing left over.
async fn verdict_ok(session: Session) -> bool {
    match session.close(CloseReason::ClientDone).await.expect("close") {
        Closed::Replayed { verdict, .. } => verdict.ok(),
        other => panic!("{other:?}"),
    }
}

fn kept(session: &Session) -> Vec<String> {
    match &session.notices {
        Notices::Kept(kept) => kept.clone(),
        Notices::Stderr => panic!("notices went to stderr"),
    }
}

#[tokio::test]
async fn a_request_gets_its_recorded_answer_and_the_replay_passes() {
    let (mut session, _dir) = session(&[("send", ECHO), ("recv", ECHOED)]);
    let init = session.initialize().await.expect("initialize");
    assert_eq!(init.error(), None);
    assert_eq!(init.value["result"]["serverInfo"]["name"], "s");
    let reply = session
        .request("tools/call", echo_params())
        .await
        .expect("answer");
    assert_eq!(reply.raw, ECHOED);
    assert_eq!(reply.value["result"]["content"][0]["text"], "hi");
    assert!(verdict_ok(session).await);
}

#[tokio::test]
async fn a_request_the_recorded_server_died_on_has_no_answer() {
    let close = r#"{"jsonrpc":"2.0","method":"$transport/close","params":{"exitCode":3,"reason":"server exited"}}"#;
    let (mut session, _dir) = session(&[("send", ECHO), ("lifecycle", close)]);
    session.initialize().await.expect("initialize");
    // Nothing is owed after the request: the session says so at once, as the recorded
    // client saw the server go, instead of waiting for the timeout.
    let err = session
        .request("tools/call", echo_params())
        .await
        .map(|r| r.raw)
        .expect_err("no answer");
    assert!(
        matches!(&err, ClientError::NoAnswer { server, method } if server == "s" && method == "tools/call"),
        "{err}"
    );
    match session
        .close(CloseReason::ClientFailed)
        .await
        .expect("close")
    {
        Closed::Replayed { server_exit, .. } => assert_eq!(server_exit, Some(3)),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_server_ping_is_answered_and_other_server_requests_refused() {
    let sampling = r#"{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{}}"#;
    let refusal = r#"{"jsonrpc":"2.0","id":"s1","error":{"code":-32601,"message":"mcptape's client does not support sampling/createMessage"}}"#;
    let (mut session, _dir) = session(&[
        ("send", ECHO),
        ("recv", r#"{"jsonrpc":"2.0","id":"p1","method":"ping"}"#),
        ("send", r#"{"jsonrpc":"2.0","id":"p1","result":{}}"#),
        ("recv", sampling),
        ("send", refusal),
        ("recv", ECHOED),
    ]);
    session.initialize().await.expect("initialize");
    // The engine gives the answer only after the client answered both server requests
    // as recorded.
    let reply = session
        .request("tools/call", echo_params())
        .await
        .expect("answer");
    assert_eq!(reply.value["id"], 1);
    assert!(verdict_ok(session).await);
}

#[tokio::test]
async fn progress_is_shown_unless_turned_off_and_logs_always() {
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":1}}}"#;
    let progress = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1,"total":2,"message":"half"}}"#;
    let log = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}"#;
    let done = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#;
    let tape = [
        ("send", call),
        ("recv", progress),
        ("recv", log),
        ("recv", done),
    ];
    let params = json!({"name": "slow", "arguments": {}});
    for shown in [true, false] {
        let (mut session, _dir) = session(&tape);
        session.show_progress(shown);
        session.initialize().await.expect("initialize");
        let reply = session
            .request_with_progress("tools/call", params.clone())
            .await
            .expect("answer");
        assert_eq!(reply.raw, done);
        let mut want = vec![r#"mcptape: `s` log [info] "working""#.to_owned()];
        if shown {
            want.insert(0, "mcptape: `s` progress 1/2 half".to_owned());
        }
        assert_eq!(kept(&session), want);
        assert!(verdict_ok(session).await, "the progress token was the id");
    }
}

/// A layer that keeps the server messages it sees.
struct Seen(Arc<Mutex<Vec<String>>>);

impl Layer for Seen {
    fn server(&mut self, msg: Message) -> Step {
        self.0
            .lock()
            .expect("not poisoned")
            .push(msg.text().to_owned());
        Step::Pass(msg)
    }
}

#[tokio::test]
async fn a_refused_request_is_the_error_a_stdio_client_gets_and_the_layers_see_it() {
    // A port nobody listens on (it was free a moment ago).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let entry = ServerEntry {
        command: None,
        args: Vec::new(),
        env: Vec::new(),
        cwd: None,
        url: Some(format!("http://127.0.0.1:{port}/mcp")),
        headers: Vec::new(),
    };
    let seen = Arc::new(Mutex::new(Vec::new()));
    let layers = Layers::new().push(Seen(seen.clone()));
    let mut session = Session::start("r", &entry, layers, 1 << 20).expect("start");
    let reply = session.initialize().await.expect("an answer");
    let error = reply.error().expect("an error");
    assert_eq!(error["code"], http::UPSTREAM_ERROR_CODE);
    assert_eq!(reply.value["id"], 0);
    assert_eq!(*seen.lock().expect("not poisoned"), vec![reply.raw.clone()]);
    assert!(matches!(
        session.close(CloseReason::ClientDone).await.expect("close"),
        Closed::Remote
    ));
}

/// Holds each `tools/call` for a second, then lets it through (a call approved).
struct Approve;

impl Layer for Approve {
    fn reads_first(&self) -> bool {
        true
    }
    fn client(&mut self, msg: Message) -> Step {
        if msg.method() != Some("tools/call") {
            return Step::Pass(msg);
        }
        Step::Later(Box::pin(async move {
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            Step::Pass(msg)
        }))
    }
}

#[tokio::test(start_paused = true)]
async fn a_call_a_layer_holds_is_waited_for_and_gets_its_answer_once_let_through() {
    let layers = Layers::new().push(Approve);
    let (mut session, _dir) = session_behind(&[("send", ECHO), ("recv", ECHOED)], layers);
    session.initialize().await.expect("initialize");
    let start = tokio::time::Instant::now();
    let reply = session
        .request("tools/call", echo_params())
        .await
        .expect("answer, not `no answer`: the replay is idle while the call is held");
    assert_eq!(reply.raw, ECHOED);
    assert!(start.elapsed() >= std::time::Duration::from_secs(1));
    assert!(verdict_ok(session).await);
}
