//! Unit tests of [`super`]: each sessionless request matched on its own, over a tape
//! shaped as the Python SDK 2.3 client and server record it (discover, a call with
//! progress, an `input_required` round and its retry).

use super::*;
use crate::tape::testing;

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#;
const INIT_ANSWER: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#;
const DISCOVER: &str = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
const DISCOVERED: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{},"resultType":"complete"}}"#;
const SLOW: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
const PROGRESS: &str = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}"#;
const SLOW_DONE: &str =
    r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"slow"}]}}"#;
const ASK: &str = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"confirm","arguments":{"name":"tape"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
const ASKED: &str = r#"{"jsonrpc":"2.0","id":3,"result":{"inputRequests":{"ok":{"method":"elicitation/create","params":{"message":"confirm tape?"}}},"requestState":"v1.sealed","resultType":"input_required"}}"#;
const RETRY: &str = r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"inputResponses":{"ok":{"action":"accept"}},"requestState":"v1.sealed","name":"confirm","arguments":{"name":"tape"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
const CONFIRMED: &str = r#"{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"confirmed tape"}],"resultType":"complete"}}"#;

/// A tape of server `s` from (conn, dir, message) triples, kept in `dir`.
fn exchanges(lines: &[(&str, &str, &str)]) -> (Exchanges, tempfile::TempDir) {
    let text: String = lines
        .iter()
        .map(|(conn, d, msg)| testing::line(msg, d, conn, Some("2026-01-01T00:00:00.000Z")))
        .collect();
    let (tape, dir) = testing::load(&text);
    (Exchanges::of(&tape, &Options::default()), dir)
}

fn live(text: &str) -> Message {
    Message::new(text.as_bytes().to_vec())
}

fn texts(out: Vec<Reply>) -> Vec<String> {
    out.into_iter()
        .map(|r| match r {
            Reply::Line(l) => String::from_utf8(l).expect("utf8"),
            Reply::Refused { status, body } => format!("HTTP {status} {body}"),
        })
        .collect()
}

/// As the HTTP front records it: one connection per exchange, and a session of the
/// other era that stateless requests never reach.
fn front_tape() -> (Exchanges, tempfile::TempDir) {
    exchanges(&[
        ("legacy", "send", INIT),
        ("legacy", "recv", INIT_ANSWER),
        ("a", "send", DISCOVER),
        ("a", "recv", DISCOVERED),
        ("b", "send", SLOW),
        ("b", "recv", PROGRESS),
        ("b", "recv", SLOW_DONE),
        ("c", "send", ASK),
        ("c", "recv", ASKED),
        ("d", "send", RETRY),
        ("d", "recv", CONFIRMED),
    ])
}

#[test]
fn each_request_gets_its_recorded_answer_with_the_live_id_and_token() {
    let (mut all, _dir) = front_tape();
    // Out of the recorded order, with other ids and another token: each on its own.
    let slow = SLOW
        .replace(r#""id":2"#, r#""id":"x""#)
        .replace(":7,", ":\"t\",");
    assert_eq!(
        texts(all.answer(&live(&slow))),
        [
            PROGRESS.replace(":7,", ":\"t\","),
            SLOW_DONE.replace(r#""id":2"#, r#""id":"x""#)
        ]
    );
    let discover = DISCOVER.replace(r#""id":1"#, r#""id":40"#);
    assert_eq!(
        texts(all.answer(&live(&discover))),
        [DISCOVERED.replace(r#""id":1"#, r#""id":40"#)]
    );
    // The retry echoes the state the replay gave: it matches as recorded.
    assert_eq!(texts(all.answer(&live(ASK))), [ASKED]);
    assert_eq!(texts(all.answer(&live(RETRY))), [CONFIRMED]);
    // A second client's discover reuses the last one used.
    assert_eq!(texts(all.answer(&live(DISCOVER))), [DISCOVERED]);
    let verdicts = all.verdicts();
    assert_eq!(verdicts.len(), 4, "{verdicts:?}");
    assert!(verdicts.iter().all(Verdict::ok), "{verdicts:?}");
    assert!(
        verdicts.iter().all(|v| v.conn.as_deref() != Some("legacy")),
        "an initialize session is no stateless exchange"
    );
}

#[test]
fn a_request_nothing_matches_diverges_naming_the_closest() {
    let (mut all, _dir) = front_tape();
    let other = ASK.replace(r#""name":"tape""#, r#""name":"other""#);
    let out = texts(all.answer(&live(&other)));
    assert_eq!(out.len(), 1);
    let err: serde_json::Value = serde_json::from_str(&out[0]).expect("json");
    assert_eq!(err["id"], 3);
    assert_eq!(err["error"]["code"], DIVERGED_CODE);
    let text = err["error"]["message"].as_str().expect("text");
    assert!(text.contains("tape line 8"), "{text}");
    let again = other.replace(r#""id":3"#, r#""id":9"#);
    assert_eq!(all.answer(&live(&again)).len(), 1);
    let verdicts = all.verdicts();
    assert_eq!(verdicts.len(), 1, "one verdict for every divergence");
    assert!(!verdicts[0].ok());
    assert_eq!(verdicts[0].mismatch.as_ref().and_then(|m| m.line), Some(8));
    assert_eq!(verdicts[0].problems.len(), 1, "{:?}", verdicts[0].problems);
    // A notification asks nothing.
    let note = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#;
    assert!(all.answer(&live(note)).is_empty());
}

#[test]
fn a_stdio_recorded_connection_is_a_sequence_of_exchanges_and_unused_ones_are_left_over() {
    let (mut all, _dir) = exchanges(&[
        ("s", "send", DISCOVER),
        ("s", "recv", DISCOVERED),
        ("s", "send", SLOW),
        ("s", "recv", PROGRESS),
        ("s", "recv", SLOW_DONE),
        ("s", "send", ASK),
        ("s", "recv", ASKED),
    ]);
    assert_eq!(texts(all.answer(&live(SLOW))), [PROGRESS, SLOW_DONE]);
    let verdicts = all.verdicts();
    assert_eq!(verdicts.len(), 1);
    assert_eq!(verdicts[0].matched, 1);
    let left: Vec<usize> = verdicts[0].leftovers.iter().map(|l| l.line).collect();
    assert_eq!(left, [1, 6]);
}

const REFUSED: &str =
    r#"{"jsonrpc":"2.0","method":"$http/status","params":{"status":400,"body":"no session"}}"#;
const DONE: &str =
    r#"{"jsonrpc":"2.0","method":"$transport/close","params":{"reason":"exchange done"}}"#;

/// A recorded refusal (a 2025-era server's `400` to a sessionless probe) is the answer.
#[test]
fn a_refused_exchange_is_answered_with_its_recorded_refusal() {
    let (mut all, _dir) = exchanges(&[
        ("a", "send", DISCOVER),
        ("a", "lifecycle", REFUSED),
        ("a", "lifecycle", DONE),
    ]);
    assert_eq!(texts(all.answer(&live(DISCOVER))), ["HTTP 400 no session"]);
    let verdicts = all.verdicts();
    assert!(verdicts.iter().all(Verdict::ok), "{verdicts:?}");
    assert_eq!(verdicts[0].matched, 1);
}

/// An exchange its client cancelled owes nothing; one a cut recording lost gets the
/// tape-end error and fails its connection's verdict.
#[test]
fn a_cancelled_exchange_gets_nothing_and_a_cut_one_the_tape_end_error() {
    let cancelled = r#"{"jsonrpc":"2.0","method":"$http/cancelled","params":{"reason":"the client closed its stream","requestId":2}}"#;
    let (mut all, _dir) = exchanges(&[
        ("b", "send", SLOW),
        ("b", "recv", PROGRESS),
        ("b", "lifecycle", cancelled),
        ("b", "lifecycle", DONE),
        ("c", "send", ASK),
    ]);
    assert_eq!(texts(all.answer(&live(SLOW))), [PROGRESS]);
    let verdicts = all.verdicts();
    assert!(verdicts.iter().all(Verdict::ok), "{verdicts:?}");
    let out = texts(all.answer(&live(ASK)));
    assert_eq!(out.len(), 1);
    let err: serde_json::Value = serde_json::from_str(&out[0]).expect("json");
    assert_eq!(err["id"], 3);
    assert_eq!(err["error"]["code"], DIVERGED_CODE);
    let text = err["error"]["message"].as_str().expect("text");
    assert!(text.contains("the tape ends here"), "{text}");
    let verdicts = all.verdicts();
    let cut = verdicts
        .iter()
        .find(|v| v.conn.as_deref() == Some("c"))
        .expect("c's verdict");
    assert!(!cut.ok() && cut.tape_end.is_some(), "{cut:?}");
}

/// A probe no exchange matches gets the server's discover answer from a session, or
/// its recorded refusal of one, else method-not-found: a note, no divergence.
#[test]
fn a_probe_the_tape_lacks_is_answered_from_elsewhere_with_a_note() {
    let (mut all, _dir) = exchanges(&[
        ("legacy", "send", DISCOVER),
        ("legacy", "recv", DISCOVERED),
        ("legacy", "send", INIT),
        ("legacy", "recv", INIT_ANSWER),
    ]);
    let probe = DISCOVER.replace(r#""id":1"#, r#""id":8"#);
    assert_eq!(
        texts(all.answer(&live(&probe))),
        [DISCOVERED.replace(r#""id":1"#, r#""id":8"#)]
    );
    let verdicts = all.verdicts();
    assert!(verdicts.iter().all(Verdict::ok), "{verdicts:?}");
    assert_eq!(verdicts.len(), 1, "{verdicts:?}");
    assert!(verdicts[0].notes[0].contains("elsewhere"), "{verdicts:?}");

    let (mut all, _dir) = exchanges(&[
        ("legacy", "send", INIT),
        ("legacy", "recv", INIT_ANSWER),
        ("legacy", "send", DISCOVER),
        ("legacy", "lifecycle", REFUSED),
    ]);
    assert_eq!(texts(all.answer(&live(&probe))), ["HTTP 400 no session"]);

    let (mut all, _dir) = exchanges(&[("legacy", "send", INIT), ("legacy", "recv", INIT_ANSWER)]);
    let out = texts(all.answer(&live(&probe)));
    let err: serde_json::Value = serde_json::from_str(&out[0]).expect("json");
    assert_eq!(err["error"]["code"], -32601);
    assert!(all.verdicts().iter().all(Verdict::ok));
}
