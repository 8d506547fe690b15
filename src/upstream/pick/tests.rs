//! Unit tests of [`super`]: which recorded connection a client's messages choose.

use std::sync::Arc;

use super::*;
use crate::tape::testing;

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#;
const INIT_ANSWER: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#;
const CALL: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"m":"hi"}}}"#;
const STATELESS_ANSWER: &str =
    r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"stateless"}]}}"#;
const SESSION_ANSWER: &str =
    r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"session"}]}}"#;

/// A tape of server `s` from (conn, dir, message) triples.
fn picker(lines: &[(&str, &str, &str)]) -> (Picker, tempfile::TempDir) {
    let text: String = lines
        .iter()
        .map(|(conn, d, msg)| testing::line(msg, d, conn, Some("2026-01-01T00:00:00.000Z")))
        .collect();
    let (tape, dir) = testing::load(&text);
    (
        Picker::new(Arc::new(tape), "s", None, &Options::default()),
        dir,
    )
}

fn texts(out: Vec<Out>) -> Vec<String> {
    out.into_iter()
        .map(|o| {
            String::from_utf8(o.line)
                .expect("utf8")
                .trim_end()
                .to_owned()
        })
        .collect()
}

/// A stateless connection (no `initialize`), then one recorded with the handshake.
const MIXED_ERAS: [(&str, &str, &str); 6] = [
    ("a-1", "send", CALL),
    ("a-1", "recv", STATELESS_ANSWER),
    ("b-1", "send", INIT),
    ("b-1", "recv", INIT_ANSWER),
    ("b-1", "send", CALL),
    ("b-1", "recv", SESSION_ANSWER),
];

/// Issue 13 (k): a reconnecting client whose recorded connections mix eras must not get
/// the stateless one for its `initialize` when another recorded connection starts so.
#[test]
fn an_initialize_goes_to_a_connection_recorded_with_one_not_to_a_stateless_one() {
    let (mut picker, _dir) = picker(&MIXED_ERAS);
    picker.start();
    assert_eq!(texts(picker.on_client(INIT.as_bytes())), [INIT_ANSWER]);
    assert_eq!(texts(picker.on_client(CALL.as_bytes())), [SESSION_ANSWER]);
    let verdict = picker.finish();
    assert!(verdict.ok(), "{}", verdict.describe());
    assert_eq!(verdict.conn.as_deref(), Some("b-1"));
}

/// And the stateless client still gets the stateless connection, first in tape order.
#[test]
fn a_stateless_call_still_goes_to_the_stateless_connection() {
    let (mut picker, _dir) = picker(&MIXED_ERAS);
    picker.start();
    assert_eq!(texts(picker.on_client(CALL.as_bytes())), [STATELESS_ANSWER]);
    let verdict = picker.finish();
    assert!(verdict.ok(), "{}", verdict.describe());
    assert_eq!(verdict.conn.as_deref(), Some("a-1"));
}

const START: &str = r#"{"jsonrpc":"2.0","method":"$transport/start","params":{"url":"http://h/mcp","front":"http"}}"#;
const DONE: &str =
    r#"{"jsonrpc":"2.0","method":"$transport/close","params":{"reason":"exchange done"}}"#;
const MODERN_CALL: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"m":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
const MODERN_LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
const LISTED: &str = r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#;

/// Review of issue 13, item 3: the HTTP front's one-exchange connections serve one live
/// stateless client request by request, its verdict naming every connection used.
#[test]
fn a_stateless_client_is_served_by_the_front_exchanges_for_its_whole_connection() {
    let (mut picker, _dir) = picker(&[
        ("x-1", "lifecycle", START),
        ("x-1", "send", MODERN_CALL),
        ("x-1", "recv", STATELESS_ANSWER),
        ("x-1", "lifecycle", DONE),
        ("x-2", "lifecycle", START),
        ("x-2", "send", MODERN_LIST),
        ("x-2", "recv", LISTED),
        ("x-2", "lifecycle", DONE),
    ]);
    picker.start();
    let list = MODERN_LIST.replace(r#""id":2"#, r#""id":7"#);
    assert_eq!(
        texts(picker.on_client(list.as_bytes())),
        [LISTED.replace(r#""id":2"#, r#""id":7"#)]
    );
    assert_eq!(
        texts(picker.on_client(MODERN_CALL.as_bytes())),
        [STATELESS_ANSWER]
    );
    // Picker::accepts asks the exchanges.
    assert!(picker.accepts(&Message::new(MODERN_CALL.as_bytes().to_vec())));
    let other = MODERN_CALL.replace(r#""name":"echo""#, r#""name":"nope""#);
    assert_ne!(other, MODERN_CALL);
    assert!(!picker.accepts(&Message::new(other.into_bytes())));
    let verdict = picker.finish();
    assert!(verdict.ok(), "{}", verdict.describe());
    assert_eq!(verdict.matched, 2);
    let mut used: Vec<String> = verdict.conn.into_iter().chain(verdict.also).collect();
    used.sort();
    assert_eq!(used, ["x-1", "x-2"]);
}

/// A session of the other era ahead of the exchanges in the tape is passed over.
#[test]
fn a_session_ahead_of_the_front_exchanges_does_not_keep_a_stateless_client_from_them() {
    let (mut picker, _dir) = picker(&[
        ("b-1", "send", INIT),
        ("b-1", "recv", INIT_ANSWER),
        ("b-1", "send", CALL),
        ("b-1", "recv", SESSION_ANSWER),
        ("x-1", "lifecycle", START),
        ("x-1", "send", MODERN_CALL),
        ("x-1", "recv", STATELESS_ANSWER),
        ("x-1", "lifecycle", DONE),
        ("x-2", "lifecycle", START),
        ("x-2", "send", MODERN_LIST),
        ("x-2", "recv", LISTED),
        ("x-2", "lifecycle", DONE),
    ]);
    picker.start();
    assert_eq!(
        texts(picker.on_client(MODERN_CALL.as_bytes())),
        [STATELESS_ANSWER]
    );
    assert_eq!(texts(picker.on_client(MODERN_LIST.as_bytes())), [LISTED]);
    let verdict = picker.finish();
    assert!(verdict.ok(), "{}", verdict.describe());
    assert_eq!(verdict.matched, 2);
}

/// Through stdio, a recorded refusal is the JSON-RPC error a live proxy gives.
#[test]
fn a_refused_exchange_reaches_a_stdio_client_as_the_error_a_live_proxy_gives() {
    let refused =
        r#"{"jsonrpc":"2.0","method":"$http/status","params":{"status":400,"body":"bad call"}}"#;
    let (mut picker, _dir) = picker(&[
        ("x-1", "lifecycle", START),
        ("x-1", "send", MODERN_CALL),
        ("x-1", "lifecycle", refused),
        ("x-1", "lifecycle", DONE),
        ("x-2", "lifecycle", START),
        ("x-2", "send", MODERN_LIST),
        ("x-2", "recv", LISTED),
        ("x-2", "lifecycle", DONE),
    ]);
    picker.start();
    let out = texts(picker.on_client(MODERN_CALL.as_bytes()));
    assert_eq!(out.len(), 1, "{out:?}");
    let err: serde_json::Value = serde_json::from_str(&out[0]).expect("json");
    assert_eq!(err["id"], 1);
    let text = err["error"]["message"].as_str().expect("text");
    assert!(
        text.contains("HTTP 400") && text.contains("bad call"),
        "{text}"
    );
    let verdict = picker.finish();
    assert!(verdict.ok(), "{}", verdict.describe());
}
