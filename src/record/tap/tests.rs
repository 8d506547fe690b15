use super::*;

fn lines(bytes: &'static [u8]) -> Vec<String> {
    let ev = Event::Line {
        dir: Direction::Recv,
        ts: SystemTime::UNIX_EPOCH,
        bytes: Bytes::from_static(bytes),
        budget: 0,
        stream: None,
    };
    let entries = Entries {
        server: "s".into(),
        conn: "c-1".into(),
        redactor: Redactor::default(),
        budget: Arc::new(Semaphore::new(0)),
    };
    render(ev, &entries, &mut 0, &mut Held::default())
        .into_iter()
        .map(|l| String::from_utf8(l).expect("utf8"))
        .collect()
}

#[test]
fn a_panicking_writer_thread_is_an_error_not_a_clean_recording() {
    let (tx, _rx) = mpsc::channel();
    let thread = std::thread::Builder::new()
        .name("mcptape-tap-test".into())
        .spawn(|| -> TapOutcome { panic!("redactor blew up") })
        .expect("thread");
    let tap = Tap {
        handle: TapHandle {
            tx,
            budget: Arc::new(Semaphore::new(0)),
        },
        thread,
        path: "/t/x.ndjson".into(),
    };
    let outcome = tap.finish();
    let err = outcome.error.expect("the panic is an error");
    assert!(matches!(err, TapeError::WriterPanicked { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("/t/x.ndjson") && text.contains("redactor blew up"),
        "{text}"
    );
    assert_eq!(
        crate::error::Error::from(err).exit_code(),
        crate::error::EXIT_TAPE
    );
}

#[test]
fn object_line_keeps_bytes() {
    let out = lines(b"{\"id\":1,\"result\":{\"x\":1.0}}\r\n");
    assert_eq!(
        out,
        vec![concat!(
            r#"{"id":1,"result":{"x":1.0},"_meta":{"dir":"recv","server":"s","#,
            r#""ts":"1970-01-01T00:00:00.000Z","conn":"c-1"}}"#,
            "\n"
        )]
    );
}

#[test]
fn a_million_levels_become_one_entry_with_their_bytes() {
    let levels = 1_000_000;
    let line = format!(
        "{{\"id\":1,\"result\":{{\"x\":{}{}}}}}\n",
        "[".repeat(levels),
        "]".repeat(levels)
    );
    let ev = Event::Line {
        dir: Direction::Recv,
        ts: SystemTime::UNIX_EPOCH,
        bytes: Bytes::from(line.clone()),
        budget: 0,
        stream: None,
    };
    let entries = Entries {
        server: "s".into(),
        conn: "c-1".into(),
        redactor: Redactor::default(),
        budget: Arc::new(Semaphore::new(0)),
    };
    let out = render(ev, &entries, &mut 0, &mut Held::default());
    assert_eq!(out.len(), 1);
    let body = line.trim_end().strip_suffix('}').expect("an object");
    assert!(
        out[0].starts_with(body.as_bytes()),
        "the message's bytes, whole"
    );
}

#[test]
fn batch_elements_share_a_batch_number() {
    let out = lines(b"[{\"id\":1,\"result\":{}}, {\"id\":2,\"result\":{}}]\n");
    assert_eq!(out.len(), 2);
    assert!(out.iter().all(|l| l.contains("\"batch\":1")));
    assert!(out[1].starts_with("{\"id\":2,\"result\":{}"));
}

#[test]
fn garbage_becomes_an_invalid_entry_with_its_text() {
    let out = lines(b"this is not json\n");
    assert!(
        out[0].contains(r#""method":"$transport/invalid""#),
        "{}",
        out[0]
    );
    assert!(
        out[0].contains(r#""text":"this is not json""#),
        "{}",
        out[0]
    );
    assert!(lines(b"\n").is_empty());
}

#[test]
fn long_line_keeps_length_and_prefix() {
    use crate::framing::{LongLine, OVERSIZE_PREFIX_BYTES};
    let mut long = LongLine::default();
    let big = vec![b'x'; OVERSIZE_PREFIX_BYTES + 10];
    assert!(long.push(&big, false).is_none());
    let (len, prefix) = long.push(b"yy\n", true).expect("last");
    assert_eq!(len, OVERSIZE_PREFIX_BYTES + 12);
    assert_eq!(prefix.len(), OVERSIZE_PREFIX_BYTES);
}

/// What the writer makes of `events`, one string per line, with this redactor.
fn rendered(events: Vec<Event>, redactor: Redactor) -> Vec<String> {
    let entries = Entries {
        server: "s".into(),
        conn: "c-1".into(),
        redactor,
        budget: Arc::new(Semaphore::new(0)),
    };
    let mut held = Held::default();
    events
        .into_iter()
        .flat_map(|ev| render(ev, &entries, &mut 0, &mut held))
        .map(|l| String::from_utf8(l).expect("utf8"))
        .collect()
}

fn recv(text: &str) -> Event {
    Event::Line {
        dir: Direction::Recv,
        ts: SystemTime::UNIX_EPOCH,
        bytes: Bytes::from(format!("{text}\n")),
        budget: 0,
        stream: None,
    }
}

fn commit_event(id: u32, result: &str, body: crate::tape::commit::Body) -> Event {
    let entry = CommitEntry {
        id: Some(id.to_string()),
        tool: Some("echo".into()),
        alg: crate::tape::commit::ALG.into(),
        digest: crate::tape::commit::Digest::Sha256(
            crate::commit::jcs::commitment(result).expect("hash"),
        ),
        body,
    };
    Event::Lifecycle {
        ts: SystemTime::UNIX_EPOCH,
        kind: LifecycleKind::Commit,
        params: entry.params(),
    }
}

fn body_of(line: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(line).expect("json");
    v["params"]["body"].as_str().expect("a body").to_owned()
}

#[test]
fn a_commit_is_written_just_before_its_answer_with_the_body_the_tape_kept() {
    use crate::tape::commit::Body;
    let plain = r#"{"content":[{"type":"text","text":"hi"}]}"#;
    let key = "correct-horse-battery-staple";
    let secret = format!(r#"{{"content":[],"structuredContent":{{"password":"{key}"}}}}"#);
    let out = rendered(
        vec![
            commit_event(1, plain, Body::Kept),
            commit_event(2, &secret, Body::Kept),
            recv(r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#),
            recv(&format!(r#"{{"jsonrpc":"2.0","id":2,"result":{secret}}}"#)),
            recv(&format!(r#"{{"jsonrpc":"2.0","id":1,"result":{plain}}}"#)),
        ],
        Redactor::default(),
    );
    assert_eq!(out.len(), 5, "{out:#?}");
    assert!(
        out[0].contains("notifications/message"),
        "held until the answer"
    );
    assert!(out[1].contains(r#""method":"$commit""#) && out[1].contains(r#""id":2"#));
    assert_eq!(body_of(&out[1]), "redacted");
    assert!(!out[2].contains(key), "the answer is redacted: {}", out[2]);
    assert!(out[3].contains(r#""id":1"#) && out[3].contains("$commit"));
    assert_eq!(body_of(&out[3]), "kept");
    assert!(out[4].starts_with(&format!(r#"{{"jsonrpc":"2.0","id":1,"result":{plain}"#)));
}

#[test]
fn a_dropped_body_leaves_the_answer_and_its_fault_without_it() {
    use crate::tape::commit::Body;
    let result = r#"{"content":[{"type":"text","text":"private"}],"isError":false}"#;
    let fault = Event::Lifecycle {
        ts: SystemTime::UNIX_EPOCH,
        kind: LifecycleKind::Fault,
        params: serde_json::json!({
            "rule": "tools/call: tool-error boom", "index": 1, "effect": "tool-error", "id": 1,
            "replaced": {"jsonrpc": "2.0", "id": 1, "result": serde_json::from_str::<serde_json::Value>(result).expect("json")},
        }),
    };
    let out = rendered(
        vec![
            commit_event(1, result, Body::Dropped),
            fault,
            recv(&format!(r#"{{"jsonrpc":"2.0","id":1,"result":{result}}}"#)),
            commit_event(2, result, Body::Dropped),
            Event::Finish,
        ],
        Redactor::default(),
    );
    assert_eq!(out.len(), 4, "{out:#?}");
    assert!(out.iter().all(|l| !l.contains("private")), "{out:#?}");
    assert!(out[0].contains("$fault") && out[0].contains("mcptape/commit"));
    assert_eq!(body_of(&out[1]), "dropped");
    let answer: serde_json::Value = serde_json::from_str(&out[2]).expect("json");
    assert_eq!(answer["result"]["content"], serde_json::json!([]));
    assert!(answer["result"]["_meta"]["mcptape/commit"]["sha256"].is_string());
    // A commitment whose answer never came is written at the end.
    assert!(out[3].contains("$commit") && out[3].contains(r#""id":2"#));
}

#[test]
fn an_unanswered_commit_is_written_before_the_close() {
    let out = rendered(
        vec![
            commit_event(9, "{}", crate::tape::commit::Body::Kept),
            Event::Lifecycle {
                ts: SystemTime::UNIX_EPOCH,
                kind: LifecycleKind::Close,
                params: serde_json::json!({"reason": "client-eof"}),
            },
        ],
        Redactor::default(),
    );
    assert_eq!(out.len(), 2);
    assert!(out[0].contains("$commit"));
    assert!(out[1].contains("$transport/close"));
}
