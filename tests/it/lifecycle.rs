//! Close entries through the one writer: every recorder writes the same words for the
//! same event, and the library reads them back as the same typed value.

use mcptape::{Close, CloseReason, CloseStatus, Lifecycle, Tape};

use crate::http::HttpServer;
use crate::support::*;

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

/// The typed close of the tape's only connection.
fn the_close(tape: &std::path::Path) -> Close {
    let loaded = Tape::load(tape).expect("the tape loads");
    let closes: Vec<Close> = loaded
        .entries
        .iter()
        .filter_map(|e| match Lifecycle::of(e) {
            Some(Lifecycle::Close(close)) => Some(close),
            _ => None,
        })
        .collect();
    assert_eq!(closes.len(), 1, "{closes:?}");
    closes.into_iter().next().expect("one close")
}

/// A stdio proxy in front of a remote server names the signal that stopped it, as the
/// proxy of a child server does (it wrote `"signal"` before).
#[test]
fn sigterm_to_a_remote_proxy_closes_its_tape_with_the_signal_name() {
    let env = Env::new();
    let server = HttpServer::start();
    let tape = env.path("t.ndjson");
    let mut p = Proc::spawn(
        env.mcptape(["proxy", "--server", "everything", "--record"])
            .arg(&tape)
            .args(["--url", &server.url]),
    );
    p.send(INIT);
    let answer = p.recv();
    assert!(answer["result"]["serverInfo"].is_object(), "{answer}");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(p.child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("SIGTERM the proxy");
    p.wait();
    let entries = tape_entries(&tape);
    let close = lifecycle(&entries, "$transport/close");
    assert_eq!(close.len(), 1);
    assert_eq!(close[0]["params"], serde_json::json!({"reason": "SIGTERM"}));
    assert_eq!(
        the_close(&tape),
        Close::new(
            CloseReason::Signal(nix::sys::signal::Signal::SIGTERM),
            CloseStatus::Unknown
        )
    );
}

/// The proxy of a child server, stopped the same way: the same reason, with the status.
#[test]
fn sigterm_to_a_child_proxy_reads_back_as_the_same_typed_reason() {
    let env = Env::new();
    let tape = env.path("t.ndjson");
    let mut p = Proc::spawn(
        env.mcptape(["proxy", "--server", "ex", "--record"])
            .arg(&tape)
            .args(["--", &example_server()]),
    );
    p.send(INIT);
    p.recv();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(p.child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("SIGTERM the proxy");
    p.wait();
    let close = the_close(&tape);
    assert_eq!(
        close.reason,
        Some(CloseReason::Signal(nix::sys::signal::Signal::SIGTERM))
    );
    assert!(
        matches!(
            close.status,
            CloseStatus::Signaled(15) | CloseStatus::Exited(_)
        ),
        "{close:?}"
    );
}
