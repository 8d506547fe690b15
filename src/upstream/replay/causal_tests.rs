//! Unit tests of the causal order ([`super::causes`]) over tapes shaped like the real
//! recordings of issue 13 (f, g, i, j).

use std::path::Path;

use super::*;

/// A whole recording (closed) of one connection of server `s`: (dir, message, ms after
/// the start).
fn whole(lines: &[(&str, &str, u64)]) -> Tape {
    let ts = |ms: u64| {
        let at = std::time::UNIX_EPOCH + Duration::from_millis(1_800_000_000_000 + ms);
        humantime::format_rfc3339_millis(at).to_string()
    };
    let mut text: String = lines
        .iter()
        .map(|(dir, msg, ms)| crate::tape::testing::line(msg, dir, "c-1", Some(&ts(*ms))))
        .collect();
    let end = lines.last().map_or(0, |l| l.2);
    text.push_str(&format!(
        r#"{{"jsonrpc":"2.0","method":"$transport/close","params":{{"reason":"client closed"}},"_meta":{{"dir":"lifecycle","server":"s","conn":"c-1","ts":"{}"}}}}"#,
        ts(end)
    ));
    text.push('\n');
    Tape::parse(Path::new("t.ndjson"), text.as_bytes()).expect("tape")
}

fn replay(t: &Tape, skip_unanswered: bool) -> Replay {
    let conns = t.connections();
    let facts = ServerFacts::of(t, &conns);
    let opts = Options {
        matcher: Matcher::default(),
        matching: crate::cli::MatchMode::Strict,
        fail_on_unused: false,
        skip_unanswered,
    };
    Replay::new(t, &conns[0], &facts, opts)
}

fn lines(out: &[Out]) -> Vec<String> {
    out.iter()
        .map(|o| String::from_utf8_lossy(&o.line).trim_end().to_owned())
        .collect()
}

const INIT: &str =
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}"#;
const INIT_OK: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","serverInfo":{"name":"x"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const ROOTS: &str = r#"{"jsonrpc":"2.0","id":0,"method":"roots/list"}"#;
const ROOTS_OK: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"roots":[]}}"#;

fn call(id: u32) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo"}}}}"#)
}

fn ok(id: u32) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[]}}}}"#)
}

#[test]
fn an_unsolicited_server_request_answered_late_is_not_demanded_before_the_next_request() {
    // f: the server's roots/list was recorded just before an unrelated answer, and the
    // client's reply to it after; live, the client sends its next call first.
    let t = whole(&[
        ("send", INIT, 0),
        ("recv", INIT_OK, 5),
        ("send", INITIALIZED, 6),
        ("send", &call(1), 10),
        ("recv", ROOTS, 11),
        ("recv", &ok(1), 12),
        ("send", ROOTS_OK, 13),
        ("send", &call(2), 14),
        ("recv", &ok(2), 15),
    ]);
    let mut r = replay(&t, false);
    assert!(r.start().is_empty());
    assert_eq!(lines(&r.on_client(INIT.as_bytes())), vec![INIT_OK]);
    assert!(r.on_client(INITIALIZED.as_bytes()).is_empty());
    assert_eq!(lines(&r.on_client(call(1).as_bytes())), vec![ROOTS, &ok(1)]);
    assert_eq!(lines(&r.on_client(call(2).as_bytes())), vec![ok(2)]);
    assert!(r.on_client(ROOTS_OK.as_bytes()).is_empty());
    let v = r.finish();
    assert!(v.ok(), "{}", v.describe());
}

#[test]
fn an_answer_recorded_after_the_cancel_waits_for_the_cancel() {
    // i: FastMCP answered the cancelled call with -32800 after the client's cancel.
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}}"#;
    let cancelled =
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32800,"message":"Request cancelled"}}"#;
    let t = whole(&[
        ("send", INIT, 0),
        ("recv", INIT_OK, 5),
        ("send", INITIALIZED, 6),
        ("send", &call(1), 10),
        ("send", cancel, 400),
        ("recv", cancelled, 401),
    ]);
    let mut r = replay(&t, false);
    r.on_client(INIT.as_bytes());
    r.on_client(INITIALIZED.as_bytes());
    assert!(
        r.on_client(call(1).replace(":1,", ":7,").as_bytes())
            .is_empty(),
        "the -32800 must not come before the client cancels"
    );
    let live_cancel = cancel.replace("\"requestId\":1", "\"requestId\":7");
    assert_eq!(
        lines(&r.on_client(live_cancel.as_bytes())),
        vec![cancelled.replace("\"id\":1", "\"id\":7")]
    );
    let v = r.finish();
    assert!(v.ok(), "{}", v.describe());
}

/// g: server-everything asked for roots 350 ms after the client's `initialized`, as a
/// short-lived client was leaving: the tape holds no answer.
fn unanswered_roots() -> Tape {
    whole(&[
        ("send", INIT, 0),
        ("recv", INIT_OK, 5),
        ("send", INITIALIZED, 10),
        (
            "send",
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            11,
        ),
        (
            "recv",
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#,
            12,
        ),
        ("recv", ROOTS, 360),
    ])
}

#[test]
fn a_server_request_the_tape_holds_no_answer_to_is_held_and_its_answer_noted() {
    let t = unanswered_roots();
    let mut r = replay(&t, false);
    r.on_client(INIT.as_bytes());
    assert!(r.on_client(INITIALIZED.as_bytes()).is_empty());
    let out = r.on_client(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    assert_eq!(lines(&out)[1], ROOTS, "caused by the latest client message");
    assert_eq!(out[0].hold, None);
    assert_eq!(
        out[1].hold,
        Some(Duration::from_millis(349)),
        "held for its recorded delay after its cause"
    );
    assert!(r.on_client(ROOTS_OK.as_bytes()).is_empty());
    assert!(!r.diverged());
    let v = r.finish();
    assert!(v.ok(), "{}", v.describe());
    assert!(
        v.notes.iter().any(|n| n.contains("holds no answer")),
        "{:?}",
        v.notes
    );
}

#[test]
fn skip_unanswered_never_gives_such_a_request() {
    let t = unanswered_roots();
    let mut r = replay(&t, true);
    r.on_client(INIT.as_bytes());
    assert!(r.on_client(INITIALIZED.as_bytes()).is_empty());
    let out = r.on_client(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    assert_eq!(out.len(), 1, "the listing's answer, not the roots request");
    let v = r.finish();
    assert!(v.ok(), "{}", v.describe());
    assert!(
        v.notes.iter().any(|n| n.contains("not given")),
        "{:?}",
        v.notes
    );
}

/// j: two concurrent calls; the Python SDK listed tools once per answer that missed its
/// output-schema cache (twice here).
fn listed_twice() -> Tape {
    let list = |id: u32| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#);
    let listed = |id: u32| format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[]}}}}"#);
    whole(&[
        ("send", INIT, 0),
        ("recv", INIT_OK, 5),
        ("send", INITIALIZED, 6),
        ("send", &call(1), 10),
        ("send", &call(2), 10),
        ("recv", &ok(1), 11),
        ("send", &list(3), 12),
        ("recv", &ok(2), 12),
        ("send", &list(4), 13),
        ("recv", &listed(3), 14),
        ("recv", &listed(4), 14),
    ])
}

#[test]
fn a_client_may_list_as_often_as_its_timing_makes_it() {
    let list = |id: u32| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#);
    let listed = |id: u32| format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[]}}}}"#);
    for times in [1, 2, 3] {
        let t = listed_twice();
        let mut r = replay(&t, false);
        r.on_client(INIT.as_bytes());
        r.on_client(INITIALIZED.as_bytes());
        assert_eq!(lines(&r.on_client(call(1).as_bytes())), vec![ok(1)]);
        assert_eq!(lines(&r.on_client(call(2).as_bytes())), vec![ok(2)]);
        for k in 0..times {
            let id = 10 + k;
            assert_eq!(
                lines(&r.on_client(list(id).as_bytes())),
                vec![listed(id)],
                "listing {k} of {times}"
            );
        }
        let v = r.finish();
        assert!(v.ok(), "{times} listings: {}", v.describe());
    }
    // A listing before a call recorded ahead of it is matched out of order.
    let t = listed_twice();
    let mut r = replay(&t, false);
    r.on_client(INIT.as_bytes());
    r.on_client(INITIALIZED.as_bytes());
    r.on_client(call(1).as_bytes());
    assert_eq!(lines(&r.on_client(list(5).as_bytes())), vec![listed(5)]);
    assert_eq!(lines(&r.on_client(call(2).as_bytes())), vec![ok(2)]);
    let v = r.finish();
    assert!(v.ok(), "{}", v.describe());
}
