//! Every typed lifecycle event written as a tape line, then read back; the params keep
//! the spelling the writers used before they were typed.

use std::path::Path;

use super::*;
use crate::tape::close::{CloseReason, CloseStatus};
use crate::tape::{Entry, Tape};

fn meta() -> Meta {
    Meta {
        dir: Direction::Lifecycle,
        server: "s".into(),
        ts: Some("2026-11-30T04:35:01.266Z".into()),
        conn: Some("c-1".into()),
        batch: None,
        stream: None,
        source: None,
    }
}

/// The entry of one line, as the tape reader reads it.
fn entry_of(line: &[u8]) -> Entry {
    let mut tape = Tape::parse(Path::new("t.ndjson"), line).expect("a valid line");
    assert_eq!(tape.entries.len(), 1);
    tape.entries.remove(0)
}

/// Each known event, with every member and with the optional ones left out.
fn events() -> Vec<Lifecycle> {
    vec![
        Lifecycle::Start(Start {
            command: Some(vec!["srv".into(), "--port".into(), "1".into()]),
            pid: Some(4242),
            ..Start::default()
        }),
        Lifecycle::Start(Start {
            url: Some("http://127.0.0.1:9/mcp".into()),
            front: true,
            redaction_off: true,
            ..Start::default()
        }),
        Lifecycle::Start(Start::default()),
        Lifecycle::Close(Close::new(
            CloseReason::parse("server exited"),
            CloseStatus::Exited(3),
        )),
        Lifecycle::Invalid(Invalid {
            dir: Some(Direction::Recv),
            text: "not json \u{1b}[31m".into(),
        }),
        Lifecycle::Invalid(Invalid {
            dir: None,
            text: String::new(),
        }),
        Lifecycle::Truncated(Truncated {
            max_bytes: Some(1 << 40),
        }),
        Lifecycle::Truncated(Truncated { max_bytes: None }),
        Lifecycle::Oversize(Oversize {
            dir: Some(Direction::Send),
            bytes: Some(5012),
            prefix: Some(r#"{"jsonrpc":"2.0","id":1"#.into()),
        }),
        Lifecycle::Oversize(Oversize {
            dir: None,
            bytes: None,
            prefix: None,
        }),
        Lifecycle::HttpSession {
            session_id: "0123456789abcdef0123456789abcdef".into(),
        },
        Lifecycle::HttpStatus {
            status: 404,
            body: "no such session".into(),
        },
        Lifecycle::HttpError {
            url: "http://127.0.0.1:9/mcp".into(),
            error: "the event stream was cut".into(),
        },
        Lifecycle::HttpStream(StreamState::Open),
        Lifecycle::HttpStream(StreamState::Closed),
        Lifecycle::HttpResume {
            last_event_id: "7".into(),
        },
        Lifecycle::HttpCancelled {
            reason: "the client closed its stream".into(),
            request_id: None,
        },
        Lifecycle::HttpCancelled {
            reason: "the client closed its stream".into(),
            request_id: Some("\"a-1\"".into()),
        },
        Lifecycle::Note(crate::tape::lifecycle::Note {
            text: "step 2: <b>search</b> \u{1b}[31m".into(),
        }),
        Lifecycle::Other(LifecycleKind::Other("$newer/event".into())),
    ]
}

#[test]
fn every_typed_event_is_written_then_read_back() {
    for event in events() {
        let line = encode_event(&event, &meta());
        let entry = entry_of(&line);
        assert_eq!(LifecycleKind::of(&entry), Some(event.kind()), "{event:?}");
        assert_eq!(
            LifecycleKind::of_line(&line[..line.len() - 1]),
            Some(event.kind())
        );
        assert_eq!(Lifecycle::of(&entry), Some(event.clone()), "{line:?}");
        assert_eq!(event.event(), (event.kind(), event.params()));
    }
}

#[test]
fn params_keep_the_spelling_of_the_untyped_writers() {
    let spelled = |event: Lifecycle| event.params().to_string();
    let cases = [
        (
            Lifecycle::Oversize(Oversize {
                dir: Some(Direction::Send),
                bytes: Some(9),
                prefix: Some("{\"a".into()),
            }),
            r#"{"dir":"send","bytes":9,"prefix":"{\"a"}"#,
        ),
        (
            Lifecycle::Invalid(Invalid {
                dir: Some(Direction::Recv),
                text: "hello".into(),
            }),
            r#"{"dir":"recv","text":"hello"}"#,
        ),
        (
            Lifecycle::Truncated(Truncated {
                max_bytes: Some(100),
            }),
            r#"{"maxBytes":100}"#,
        ),
        (
            Lifecycle::Start(Start {
                command: Some(vec!["srv".into()]),
                pid: Some(7),
                ..Start::default()
            }),
            r#"{"command":["srv"],"pid":7}"#,
        ),
        (
            Lifecycle::Start(Start {
                url: Some("u".into()),
                front: true,
                ..Start::default()
            }),
            r#"{"url":"u","front":"http"}"#,
        ),
        (
            Lifecycle::HttpStatus {
                status: 500,
                body: "x".into(),
            },
            r#"{"status":500,"body":"x"}"#,
        ),
        (
            Lifecycle::HttpError {
                url: "u".into(),
                error: "e".into(),
            },
            r#"{"url":"u","error":"e"}"#,
        ),
        (
            Lifecycle::HttpSession {
                session_id: "s".into(),
            },
            r#"{"sessionId":"s"}"#,
        ),
        (
            Lifecycle::HttpStream(StreamState::Closed),
            r#"{"state":"closed"}"#,
        ),
        (
            Lifecycle::HttpResume {
                last_event_id: "3".into(),
            },
            r#"{"lastEventId":"3"}"#,
        ),
        (
            Lifecycle::HttpCancelled {
                reason: "r".into(),
                request_id: None,
            },
            r#"{"reason":"r"}"#,
        ),
        (
            Lifecycle::HttpCancelled {
                reason: "r".into(),
                request_id: Some("7".into()),
            },
            r#"{"reason":"r","requestId":7}"#,
        ),
    ];
    for (event, want) in cases {
        assert_eq!(spelled(event), want);
    }
    let line = encode_event(
        &Lifecycle::Truncated(Truncated { max_bytes: Some(1) }),
        &meta(),
    );
    assert_eq!(
        String::from_utf8(line).expect("utf-8"),
        concat!(
            r#"{"jsonrpc":"2.0","method":"$tape/truncated","params":{"maxBytes":1},"#,
            r#""_meta":{"dir":"lifecycle","server":"s","ts":"2026-11-30T04:35:01.266Z","conn":"c-1"}}"#,
            "\n"
        )
    );
}

#[test]
fn a_known_event_of_another_shape_is_kept_as_other() {
    for (kind, params) in [
        (LifecycleKind::HttpStatus, json!({"status": "404"})),
        (
            LifecycleKind::HttpStatus,
            json!({"status": 70000, "body": ""}),
        ),
        (LifecycleKind::HttpStream, json!({"state": "half-open"})),
        (LifecycleKind::HttpSession, json!({})),
        (LifecycleKind::HttpError, json!({"error": "no url"})),
        (LifecycleKind::Invalid, json!({"dir": "send"})),
    ] {
        assert_eq!(
            Lifecycle::read(kind.clone(), &params),
            Lifecycle::Other(kind.clone()),
            "{params}"
        );
    }
    // Oversize and start members are each optional; a lifecycle `dir` names no side.
    assert_eq!(
        Lifecycle::read(
            LifecycleKind::Oversize,
            &json!({"dir": "lifecycle", "bytes": -1})
        ),
        Lifecycle::Oversize(Oversize {
            dir: None,
            bytes: None,
            prefix: None,
        })
    );
    assert_eq!(
        Lifecycle::read(LifecycleKind::Start, &Value::Null),
        Lifecycle::Start(Start::default())
    );
}
