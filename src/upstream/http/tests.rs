//! Unit tests of [`super`]: `http`.

use super::*;
use crate::upstream::Link as _;

#[test]
fn sse_keeps_the_last_event_id_and_retry() {
    let mut sse = Sse::default();
    assert_eq!(sse.resumption(), None);
    sse.push(b"id: 7\nretry: 250\ndata: \n\nid: 8\ndata: {}\n\n");
    assert_eq!(
        sse.resumption(),
        Some(Resumption {
            id: "8".into(),
            retry: Some(Duration::from_millis(250))
        })
    );
    // An empty id clears it; one with NUL is ignored.
    sse.push(b"id: a\0b\n\n");
    assert_eq!(sse.resumption().map(|r| r.id), Some("8".into()));
    sse.push(b"id:\n\n");
    assert_eq!(sse.resumption(), None);
}

#[test]
fn sse_events_split_across_reads() {
    let mut sse = Sse::default();
    assert!(
        sse.push(b": comment\n\nid: 1\ndata:\n\nevent: message\ndata: {\"a\"")
            .is_empty()
    );
    let out = sse.push(b":1}\r\n\r\ndata: x\ndata: y\n\n");
    assert_eq!(out, vec![b"{\"a\":1}".to_vec(), b"x\ny".to_vec()]);
}

#[test]
fn pretty_printed_messages_become_one_line() {
    let pretty = b"{\n  \"id\": 1,\r\n  \"result\": {\"text\": \"a\\nb\"}\n}";
    assert_eq!(
        &*one_line(pretty),
        &b"{   \"id\": 1,    \"result\": {\"text\": \"a\\nb\"} }"[..]
    );
    assert!(matches!(one_line(b"{}"), std::borrow::Cow::Borrowed(_)));
}

/// The lines the tap writes for `events`, in a tape of server `s`, each with its
/// `_meta.ts` (the only part that changes from run to run) replaced by `TS`. The child's
/// tests use it too.
pub(crate) fn as_the_tap_writes(events: &[Event]) -> Vec<String> {
    use crate::layer::Layer;
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("t.ndjson");
    let recording = crate::mode::Recording {
        redactor: crate::redact::Redactor::default(),
        max_bytes: None,
    };
    let session =
        crate::record::session::RecordSession::open(&path, "s", &recording).expect("a tape opens");
    let mut tap = session.layer();
    for event in events {
        tap.event(event);
    }
    drop(tap);
    let recorded = session.finish().expect("the recording is whole");
    assert_eq!(recorded.entries, events.len());
    let text = std::fs::read_to_string(&path).expect("the tape reads");
    text.lines()
        .map(|line| {
            let decoded = crate::tape::format::decode(line).expect("a tape line");
            let ts = decoded.meta.ts.expect("the tap stamps every entry");
            line.replacen(&ts, "TS", 1)
        })
        .collect()
}

#[test]
fn a_failed_status_and_the_url_start_are_written_as_they_always_were() {
    let status = fact(&HttpError::Status {
        url: "http://127.0.0.1:1/mcp".into(),
        status: 503,
        body: bytes::Bytes::from_static(b"busy \xff\"now\""),
    })
    .expect("a status is a fact for the tape");
    let remote = Remote::new("http://127.0.0.1:1/mcp", Vec::new()).expect("a client");
    let start = HttpLink::new(remote)
        .started()
        .expect("a session has a start");
    let lines = as_the_tap_writes(&[start, status]);
    let conn = lines[0]
        .split("\"conn\":\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("a conn id")
        .to_owned();
    let meta = format!(r#""_meta":{{"dir":"lifecycle","server":"s","ts":"TS","conn":"{conn}"}}}}"#);
    assert_eq!(
        lines,
        [
            format!(
                r#"{{"jsonrpc":"2.0","method":"$transport/start","params":{{"url":"http://127.0.0.1:1/mcp"}},{meta}"#
            ),
            format!(
                r#"{{"jsonrpc":"2.0","method":"$http/status","params":{{"status":503,"body":"busy �\"now\""}},{meta}"#
            ),
        ]
    );
}

#[test]
fn an_unreachable_server_is_said_once_as_mcptapes_in_the_tape() {
    let error = HttpError::Unreachable {
        url: "http://127.0.0.1:1/mcp".into(),
        why: "connection refused".into(),
    };
    let (_, params) = fact(&error).expect("a fact");
    assert_eq!(
        params["error"],
        "mcptape: cannot reach `http://127.0.0.1:1/mcp`: connection refused"
    );
}
