//! Unit tests of [`super`]: `http`.

use super::*;

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

#[test]
fn headers() {
    assert_eq!(
        parse_header("Authorization: Bearer x").expect("ok"),
        ("Authorization".into(), "Bearer x".into())
    );
    assert!(parse_header("nocolon").is_err());
}
