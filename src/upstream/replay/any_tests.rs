//! Unit tests of [`super`]: `--match any` over two recorded connections of server `s`.

use std::sync::Arc;

use super::*;
use crate::cli::MatchMode;
use crate::tape::testing;
use crate::upstream::pick::Picker;

const INIT: &str =
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}"#;
const INIT_ANSWER: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const ECHO: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"m":"hi"},"_meta":{"progressToken":5}}}"#;
const LOG: &str = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"echoing"}}"#;
const PROGRESS: &str = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":5,"progress":1}}"#;
const ECHOED: &str =
    r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}"#;
const ADD: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}"#;
const ADDED: &str = r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"3"}]}}"#;
const ADD_AGAIN: &str = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}"#;
const ADDED_AGAIN: &str =
    r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"3 again"}]}}"#;

/// Connection `a`: handshake, echo (with logging and progress), add; `b`: add.
fn tape(ts: &[&str]) -> (ServerTape, tempfile::TempDir) {
    let lines = [
        ("a", "send", INIT),
        ("a", "recv", INIT_ANSWER),
        ("a", "send", INITIALIZED),
        ("a", "send", ECHO),
        ("a", "recv", LOG),
        ("a", "recv", PROGRESS),
        ("a", "recv", ECHOED),
        ("a", "send", ADD),
        ("a", "recv", ADDED),
        ("b", "send", ADD_AGAIN),
        ("b", "recv", ADDED_AGAIN),
    ];
    let text: String = lines
        .iter()
        .enumerate()
        .map(|(i, (c, d, m))| testing::line(m, d, c, ts.get(i).copied()))
        .collect();
    testing::load(&text)
}

fn opts(fail_on_unused: bool) -> Options {
    Options {
        matching: MatchMode::Any,
        fail_on_unused,
        ..Options::default()
    }
}

fn any(t: &ServerTape, fail_on_unused: bool) -> AnyReplay {
    let (facts_tape, conns) = t.facts_tape();
    AnyReplay::new(
        t,
        None,
        &opts(fail_on_unused),
        &ServerFacts::of(&facts_tape, &conns),
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

const LIVE_INIT: &str = r#"{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"x"}}}"#;
const LIVE_ADD: &str = r#"{"jsonrpc":"2.0","id":40,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}"#;
const LIVE_ECHO: &str = r#"{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"echo","arguments":{"m":"hi"},"_meta":{"progressToken":"p"}}}"#;

#[test]
fn requests_get_their_exchange_in_any_order_with_what_came_before_the_answer() {
    let (t, _dir) = tape(&[]);
    let mut r = any(&t, false);
    let init = texts(r.on_client(LIVE_INIT.as_bytes()));
    assert_eq!(init.len(), 1);
    assert!(init[0].contains(r#""id":"i""#), "{init:?}");
    assert!(r.on_client(INITIALIZED.as_bytes()).is_empty());
    // add before echo, as the tape does not have it.
    let add = texts(r.on_client(LIVE_ADD.as_bytes()));
    assert_eq!(
        add,
        vec![r#"{"jsonrpc":"2.0","id":40,"result":{"content":[{"type":"text","text":"3"}]}}"#]
    );
    let echo = texts(r.on_client(LIVE_ECHO.as_bytes()));
    assert_eq!(echo.len(), 3, "{echo:?}");
    assert_eq!(echo[0], LOG);
    assert!(echo[1].contains(r#""progressToken":"p""#), "{echo:?}");
    assert!(
        echo[2].starts_with(r#"{"jsonrpc":"2.0","id":41,"#),
        "{echo:?}"
    );
    let ping = texts(r.on_client(br#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#));
    assert_eq!(ping, vec![r#"{"jsonrpc":"2.0","id":9,"result":{}}"#]);
    let v = r.finish();
    assert!(v.ok(), "{}", v.describe());
    assert_eq!(v.conn.as_deref(), Some("a"));
    assert!(v.unused.is_empty(), "{}", v.describe());
}

#[test]
fn the_last_used_exchange_answers_again_once_all_matches_are_used() {
    let (t, _dir) = tape(&[]);
    let mut r = any(&t, false);
    let first = texts(r.on_client(LIVE_ADD.as_bytes()));
    let second = texts(r.on_client(LIVE_ADD.as_bytes()));
    let third = texts(r.on_client(LIVE_ADD.as_bytes()));
    assert!(first[0].contains(r#""text":"3"}"#), "{first:?}");
    assert!(second[0].contains("3 again"), "{second:?}");
    assert!(third[0].contains("3 again"), "{third:?}");
    let v = r.finish();
    assert_eq!(v.conn.as_deref(), Some("a"));
    assert_eq!(v.also, vec!["b".to_owned()]);
    // `a`'s echo and handshake were never sent: listed, no failure.
    assert!(v.ok(), "{}", v.describe());
    let unused: Vec<usize> = v.unused.iter().map(|l| l.line).collect();
    assert_eq!(unused, vec![1, 4], "{}", v.describe());
    assert!(
        v.describe()
            .contains("unused (tape line 4): tools/call #1 echo"),
        "{}",
        v.describe()
    );
}

#[test]
fn with_fail_on_unused_the_unused_requests_are_leftovers() {
    let (t, _dir) = tape(&[]);
    let mut r = any(&t, true);
    r.on_client(LIVE_ADD.as_bytes());
    let v = r.finish();
    assert!(!v.ok());
    assert_eq!(v.label(), "INCOMPLETE");
    assert_eq!(v.leftovers.len(), 2, "{}", v.describe());
}

#[test]
fn a_request_that_matches_nothing_names_the_closest_and_the_replay_goes_on() {
    let (t, _dir) = tape(&[]);
    let mut r = any(&t, false);
    let bad = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add","arguments":{"a":5,"b":2}}}"#;
    let out = texts(r.on_client(bad));
    assert_eq!(out.len(), 1);
    assert!(out[0].contains("-32090"), "{out:?}");
    assert!(
        out[0].contains("the closest is tools/call #2 add"),
        "{out:?}"
    );
    assert!(out[0].contains("tape line 8"), "{out:?}");
    // Later requests are still answered from the tape.
    let add = texts(r.on_client(LIVE_ADD.as_bytes()));
    assert!(add[0].contains(r#""result""#), "{add:?}");
    let v = r.finish();
    assert_eq!(v.label(), "DIVERGED");
    let m = v.mismatch.as_ref().expect("a mismatch");
    assert_eq!(m.line, Some(8));
    assert!(m.diff.contains("-") && m.diff.contains("5"), "{}", m.diff);
}

#[test]
fn pace_delays_run_from_the_request_to_each_message() {
    let ts = [
        "2026-01-01T00:00:00.000Z",
        "2026-01-01T00:00:00.100Z",
        "2026-01-01T00:00:00.200Z",
        "2026-01-01T00:00:01.000Z",
        "2026-01-01T00:00:01.300Z",
        "2026-01-01T00:00:01.500Z",
        "2026-01-01T00:00:02.000Z",
    ];
    let (t, _dir) = tape(&ts);
    let mut r = any(&t, false);
    let delays: Vec<u128> = r
        .on_client(LIVE_ECHO.as_bytes())
        .iter()
        .map(|o| o.delay.as_millis())
        .collect();
    assert_eq!(delays, vec![300, 200, 500]);
}

#[test]
fn the_client_answer_to_a_server_request_and_its_notifications_are_taken() {
    let (t, _dir) = tape(&[]);
    let mut r = any(&t, false);
    assert!(
        r.on_client(br#"{"jsonrpc":"2.0","id":"s1","result":{}}"#)
            .is_empty()
    );
    assert!(
        r.on_client(
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#
        )
        .is_empty()
    );
    let garbage = texts(r.on_client(b"not json"));
    assert!(garbage[0].contains("-32700"), "{garbage:?}");
    assert!(!r.finish().ok());
}

#[test]
fn accepts_says_what_the_tape_would_answer_in_every_mode() {
    let (t, _dir) = tape(&[]);
    let t = Arc::new(t);
    let add = Message::new(LIVE_ADD.as_bytes().to_vec());
    let other = Message::new(
        br#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"nope"}}"#.to_vec(),
    );
    let note = Message::new(INITIALIZED.as_bytes().to_vec());
    let p = Picker::new(Arc::clone(&t), "s", None, &opts(false));
    assert!(p.accepts(&add));
    assert!(!p.accepts(&other));
    assert!(p.accepts(&note));
    // Strict: only what comes next in the script.
    let mut strict = Picker::new(Arc::clone(&t), "s", None, &Options::default());
    let init = Message::new(LIVE_INIT.as_bytes().to_vec());
    assert!(strict.accepts(&init));
    // `b` starts with the add; no connection starts with the echo.
    assert!(strict.accepts(&add));
    let echo = Message::new(LIVE_ECHO.as_bytes().to_vec());
    assert!(!strict.accepts(&echo));
    strict.on_client(LIVE_INIT.as_bytes());
    strict.on_client(INITIALIZED.as_bytes());
    assert!(strict.accepts(&echo));
    assert!(!strict.accepts(&other));
    strict.on_client(LIVE_ECHO.as_bytes());
    assert!(strict.accepts(&add));
}

#[test]
fn a_connection_only_the_handshake_came_from_is_not_counted_as_used() {
    let init_b = INIT.replace(r#""id":0"#, r#""id":10"#);
    let answer_b = INIT_ANSWER.replace(r#""id":0"#, r#""id":10"#);
    let lines = [
        ("a", "send", INIT),
        ("a", "recv", INIT_ANSWER),
        ("a", "send", ECHO),
        ("a", "recv", ECHOED),
        ("b", "send", init_b.as_str()),
        ("b", "recv", answer_b.as_str()),
        ("b", "send", ADD),
        ("b", "recv", ADDED),
    ];
    let text: String = lines
        .iter()
        .map(|(c, d, m)| testing::line(m, d, c, None))
        .collect();
    let (t, _dir) = testing::load(&text);
    let mut r = any(&t, true);
    r.on_client(LIVE_INIT.as_bytes());
    r.on_client(LIVE_ADD.as_bytes());
    let v = r.finish();
    assert_eq!(v.conn.as_deref(), Some("b"));
    assert!(
        v.also.is_empty(),
        "`a` gave only the handshake: {:?}",
        v.also
    );
    // `b`'s own handshake has a twin the client got: not unused.
    assert!(v.ok(), "{}", v.describe());
}

const LIVE_PROBE: &str = r#"{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;

#[test]
fn an_unrecorded_discover_probe_gets_method_not_found_and_a_note() {
    let (t, _dir) = tape(&[]);
    let mut r = any(&t, false);
    let out = texts(r.on_client(LIVE_PROBE.as_bytes()));
    assert_eq!(out.len(), 1, "{out:?}");
    assert!(out[0].contains("-32601"), "{out:?}");
    assert!(out[0].contains(r#""id":"d""#), "{out:?}");
    r.on_client(LIVE_INIT.as_bytes());
    r.on_client(LIVE_ADD.as_bytes());
    let v = r.finish();
    assert!(v.ok(), "{}", v.describe());
    assert!(
        v.notes.iter().any(|n| n.contains("server/discover")),
        "{:?}",
        v.notes
    );
}

#[test]
fn an_unrecorded_discover_probe_gets_the_answer_recorded_for_another() {
    const PROBE: &str = r#"{"jsonrpc":"2.0","id":9,"method":"server/discover","params":{}}"#;
    const PROBED: &str =
        r#"{"jsonrpc":"2.0","id":9,"result":{"supportedVersions":["2026-07-28"]}}"#;
    let text: String = [
        ("a", "send", PROBE),
        ("a", "recv", PROBED),
        ("b", "send", ADD),
        ("b", "recv", ADDED),
    ]
    .iter()
    .map(|(c, d, m)| testing::line(m, d, c, None))
    .collect();
    let (t, _dir) = testing::load(&text);
    let mut r = any(&t, false);
    // The recorded probe answers the first live one; its last use answers again.
    let first = texts(r.on_client(LIVE_PROBE.as_bytes()));
    assert!(first[0].contains("supportedVersions"), "{first:?}");
    // A connection with no probe of its own: the facts' answer.
    let only_b: String = [("b", "send", ADD), ("b", "recv", ADDED)]
        .iter()
        .map(|(c, d, m)| testing::line(m, d, c, None))
        .collect();
    let (tb, _db) = testing::load(&only_b);
    let (facts_tape, conns) = t.facts_tape();
    let facts = ServerFacts::of(&facts_tape, &conns);
    let mut rb = AnyReplay::new(&tb, None, &opts(false), &facts);
    let out = texts(rb.on_client(LIVE_PROBE.as_bytes()));
    assert!(out[0].contains("supportedVersions"), "{out:?}");
    assert!(out[0].contains(r#""id":"d""#), "{out:?}");
    assert!(rb.finish().ok());
}

#[test]
fn a_listing_with_empty_params_matches_one_without_and_back() {
    const LIST: &str = r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#;
    const LISTED: &str = r#"{"jsonrpc":"2.0","id":4,"result":{"tools":[]}}"#;
    const LIST_EMPTY: &str = r#"{"jsonrpc":"2.0","id":5,"method":"prompts/list","params":{}}"#;
    const PROMPTS: &str = r#"{"jsonrpc":"2.0","id":5,"result":{"prompts":[]}}"#;
    let text: String = [
        ("a", "send", LIST),
        ("a", "recv", LISTED),
        ("a", "send", LIST_EMPTY),
        ("a", "recv", PROMPTS),
    ]
    .iter()
    .map(|(c, d, m)| testing::line(m, d, c, None))
    .collect();
    let (t, _dir) = testing::load(&text);
    let mut r = any(&t, false);
    let out = texts(r.on_client(br#"{"jsonrpc":"2.0","id":30,"method":"tools/list","params":{}}"#));
    assert!(out[0].contains(r#""tools""#), "{out:?}");
    let out = texts(r.on_client(br#"{"jsonrpc":"2.0","id":31,"method":"prompts/list"}"#));
    assert!(out[0].contains(r#""prompts""#), "{out:?}");
    let out = texts(r.on_client(
        br#"{"jsonrpc":"2.0","id":32,"method":"tools/list","params":{"_meta":{"progressToken":1}}}"#,
    ));
    assert!(out[0].contains(r#""tools""#), "{out:?}");
    assert!(r.finish().ok());
}

#[test]
fn a_miss_of_a_method_the_tape_never_recorded_says_so() {
    let (t, _dir) = tape(&[]);
    let mut r = any(&t, false);
    let out = texts(r.on_client(br#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#));
    assert!(out[0].contains("-32090"), "{out:?}");
    assert!(!out[0].contains("closest"), "{out:?}");
    assert!(
        out[0].contains(
            "no recorded request matches tools/list #3; the tape holds no tools/list request of server `s`"
        ),
        "{out:?}"
    );
    let v = r.finish();
    assert_eq!(v.label(), "DIVERGED");
    let m = v.mismatch.as_ref().expect("a mismatch");
    assert_eq!(m.line, None);
    assert!(m.diff.is_empty(), "{}", m.diff);
    assert_eq!(m.expected, "a recorded tools/list request");
}
