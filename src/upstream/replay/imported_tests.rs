//! Replay of an imported connection: its synthesized handshake is relaxed.

use std::path::Path;

use serde_json::json;

use super::*;
use crate::import::{Answer, ImportedCall, ImportedSession};

/// An imported tape of one `echo` call, as `mcptape import` writes it; with `made_up`
/// false, the same entries without `_meta.source` (as if recorded).
fn imported(made_up: bool) -> Tape {
    let session = ImportedSession {
        id: "s".into(),
        source: "s.jsonl".into(),
        started: None,
        cwd: None,
        calls: vec![ImportedCall {
            server: "a".into(),
            tool: "echo".into(),
            arguments: json!({"message": "hi"}),
            answer: Some(Answer::Result(
                json!({"content": [{"type": "text", "text": "Echo: hi"}]}),
            )),
            called_at: None,
            answered_at: None,
            incomplete: None,
        }],
        skipped_tools: 0,
    };
    let (bytes, _) =
        crate::import::tape::render(&session, "claude-code", &crate::Redactor::default())
            .expect("render");
    let mut text = String::from_utf8(bytes).expect("utf-8");
    if !made_up {
        text = text
            .lines()
            .map(|l| {
                let cut = l.find(",\"source\":").expect("a source");
                format!("{}}}}}\n", &l[..cut])
            })
            .collect();
    }
    Tape::parse(Path::new("t.ndjson"), text.as_bytes()).expect("tape")
}

fn strict(t: &Tape) -> Replay {
    let conns = t.connections();
    let facts = ServerFacts::of(t, &conns);
    let opts = Options {
        matcher: Matcher::new(Vec::new(), true),
        ..Options::default()
    };
    Replay::new(t, &conns[0], &facts, opts)
}

fn texts(out: Vec<Out>) -> Vec<serde_json::Value> {
    out.into_iter()
        .map(|o| serde_json::from_slice(&o.line).expect("json"))
        .collect()
}

const LIVE_INIT: &str = r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"other","version":"9"}}}"#;

#[test]
fn a_synthesized_initialize_matches_any_even_strict_and_speaks_the_asked_version() {
    let t = imported(true);
    let mut r = strict(&t);
    assert!(r.start().is_empty());
    let out = texts(r.on_client(LIVE_INIT.as_bytes()));
    assert_eq!(out[0]["id"], 7);
    assert_eq!(out[0]["result"]["protocolVersion"], "2025-11-25");
    assert!(
        r.on_client(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .is_empty()
    );
    let call = r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}"#;
    let out = texts(r.on_client(call.as_bytes()));
    assert_eq!(out[0]["result"]["content"][0]["text"], "Echo: hi");
    let v = r.finish();
    assert!(v.ok(), "{v:?}");
}

#[test]
fn an_unknown_version_keeps_the_synthesized_one() {
    let t = imported(true);
    let mut r = strict(&t);
    let asked = LIVE_INIT.replace("2025-11-25", "2099-01-01");
    let out = texts(r.on_client(asked.as_bytes()));
    assert_eq!(out[0]["result"]["protocolVersion"], "2025-06-18");
}

#[test]
fn a_recorded_initialize_stays_strict() {
    let t = imported(false);
    let mut r = strict(&t);
    let out = texts(r.on_client(LIVE_INIT.as_bytes()));
    assert_eq!(out[0]["error"]["code"], DIVERGED_CODE);
}
