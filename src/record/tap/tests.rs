use super::*;
use crate::commit::layer::RESULT_PARAM;
use crate::tape::commit::CommitEntry;

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
    render(ev, &entries, &mut State::default())
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
    let out = render(ev, &entries, &mut State::default());
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
    let mut state = State::default();
    events
        .into_iter()
        .flat_map(|ev| render(ev, &entries, &mut state))
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

fn send(text: &str) -> Event {
    Event::Line {
        dir: Direction::Send,
        ts: SystemTime::UNIX_EPOCH,
        bytes: Bytes::from(format!("{text}\n")),
        budget: 0,
        stream: None,
    }
}

fn event(kind: LifecycleKind, params: serde_json::Value) -> Event {
    Event::Lifecycle {
        ts: SystemTime::UNIX_EPOCH,
        kind,
        params,
    }
}

/// A `$commit` event as the commit layer tells it: with the result's text.
fn told_commit(id: u32, result: &str, body: crate::tape::commit::Body) -> Event {
    let Event::Lifecycle { mut params, .. } = commit_event(id, result, body) else {
        unreachable!()
    };
    params[RESULT_PARAM] = serde_json::json!(result);
    event(LifecycleKind::Commit, params)
}

fn json(line: &str) -> serde_json::Value {
    serde_json::from_str(line).expect("json")
}

#[test]
fn a_commitment_to_an_answer_with_a_secret_keeps_no_hash() {
    use crate::tape::commit::Body;
    let secret =
        r#"{"content":[{"type":"text","text":"x"}],"structuredContent":{"password":"hunter2"}}"#;
    for (drop, body) in [(false, "redacted"), (true, "dropped")] {
        let mut events = Vec::new();
        if drop {
            events.push(Event::DropResults);
        }
        let asked = if drop { Body::Dropped } else { Body::Kept };
        events.push(send(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"pw"}}"#,
        ));
        events.push(told_commit(1, secret, asked));
        events.push(recv(&format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{secret}}}"#
        )));
        // Withheld by a fault: the tape never sees the answer, yet its secret is known.
        events.push(event(
            LifecycleKind::Fault,
            serde_json::json!({"rule": "tools/call: timeout", "index": 1, "effect": "timeout", "id": 2}),
        ));
        events.push(told_commit(2, secret, asked));
        let out = rendered(events, Redactor::default());
        assert!(out.iter().all(|l| !l.contains("hunter2")), "{out:#?}");
        let commits: Vec<serde_json::Value> = out
            .iter()
            .map(|l| json(l))
            .filter(|v| v["method"] == "$commit")
            .collect();
        assert_eq!(commits.len(), 2, "{out:#?}");
        for c in &commits {
            assert!(c["params"].get("sha256").is_none(), "{c}");
            assert_eq!(c["params"]["reason"], commits::SECRET_REASON, "{c}");
        }
        assert_eq!(commits[0]["params"]["body"], body);
        assert_eq!(commits[1]["params"]["body"], "replaced");
        let answer = json(
            out.iter()
                .find(|l| l.contains(r#""id":1,"result""#))
                .expect("answer"),
        );
        if drop {
            let marker = &answer["result"]["_meta"]["mcptape/commit"];
            assert!(marker.get("sha256").is_none(), "{answer}");
            assert_eq!(marker["reason"], commits::SECRET_REASON);
        }
    }
    // An answer without a secret keeps its hash, and the layer's copy of the result is
    // never written.
    let plain = r#"{"content":[{"type":"text","text":"hi"}]}"#;
    let out = rendered(
        vec![
            told_commit(3, plain, Body::Kept),
            recv(&format!(r#"{{"jsonrpc":"2.0","id":3,"result":{plain}}}"#)),
        ],
        Redactor::default(),
    );
    assert!(json(&out[0])["params"]["sha256"].is_string(), "{out:#?}");
    assert!(!out[0].contains(RESULT_PARAM), "{}", out[0]);
}

#[test]
fn under_redact_results_only_answers_known_to_be_kept_keep_their_bodies() {
    let body = r#"{"content":[{"type":"text","text":"private"}]}"#;
    let tools = r#"{"tools":[{"name":"visible-tool"}]}"#;
    let ans = |id: &str, result: &str| {
        recv(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#
        ))
    };
    let req = |id: &str, method: &str| {
        send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}"}}"#
        ))
    };
    let out = rendered(
        vec![
            Event::DropResults,
            req("1", "tools/list"),
            ans(r#""1""#, body), // another spelling of the id: not attributed
            req("2", "tools/list"),
            ans("2", tools), // kept
            req("3", "tools/list"),
            recv(&format!(
                r#"{{"jsonrpc":"2.0","id":3,"result":{tools},"result":{body}}}"#
            )),
            req("4", "tools/list"),
            send(
                r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}"#,
            ),
            ans("4", body), // a cancelled request's late answer
            req("9007199254740993", "tools/list"),
            ans("9007199254740992", body), // a colliding id
            req("5", "tasks/result"),
            ans("5", body),
            req("6", "tools/list"),
            recv(&format!(r#"[{{"jsonrpc":"2.0","id":6,"result":{body}}}]"#)),
            recv(r#"{"jsonrpc":"2.0","id":7,"error":{"code":-1,"message":"m","data":"kept"}}"#),
            recv(
                r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"log kept"}}"#,
            ),
            recv("{\"private\": not json"),
            event(
                LifecycleKind::Oversize,
                serde_json::json!({"dir": "recv", "bytes": 5000, "prefix": "{\"private"}),
            ),
            event(
                LifecycleKind::Fault,
                serde_json::json!({"rule": "tools/call: tool-error boom", "index": 1, "effect": "tool-error", "id": 8,
                    "replaced": {"jsonrpc": "2.0", "id": 8, "result": json(body)}}),
            ),
            req("8", "tools/call"),
            ans(
                "8",
                r#"{"content":[{"type":"text","text":"boom"}],"isError":true}"#,
            ),
        ],
        Redactor::default(),
    );
    let text = out.join("");
    assert!(!text.contains("private"), "{out:#?}");
    assert_eq!(
        text.matches("visible-tool").count(),
        1,
        "only id 2's: {out:#?}"
    );
    assert!(
        text.contains(r#""data":"kept""#) && text.contains("log kept"),
        "{out:#?}"
    );
    assert!(
        text.contains("boom"),
        "the fault's own answer is kept: {out:#?}"
    );
    let answers: Vec<serde_json::Value> = out
        .iter()
        .map(|l| json(l))
        .filter(|v| v.get("result").is_some())
        .collect();
    let reason = |v: &serde_json::Value| v["result"]["_meta"]["mcptape/commit"]["reason"].clone();
    assert_eq!(reason(&answers[0]), results::UNATTRIBUTED);
    assert_eq!(answers[1]["result"], json(tools));
    assert_eq!(reason(&answers[2]), results::UNREADABLE);
    assert_eq!(answers[2]["id"], 3, "a bare answer to the same id");
    assert_eq!(reason(&answers[3]), results::UNATTRIBUTED);
    assert_eq!(reason(&answers[4]), results::UNATTRIBUTED);
    assert_eq!(reason(&answers[5]), results::NOT_KEPT);
    assert_eq!(reason(&answers[6]), results::IN_BATCH);
    let invalid = json(
        out.iter()
            .find(|l| l.contains("$transport/invalid"))
            .expect("invalid"),
    );
    assert_eq!(invalid["params"]["text"], "");
    let oversize = json(
        out.iter()
            .find(|l| l.contains("$transport/oversize"))
            .expect("oversize"),
    );
    assert!(oversize["params"].get("prefix").is_none(), "{oversize}");
    assert_eq!(oversize["params"]["bytes"], 5000);
}

#[test]
fn a_commitment_is_written_once_with_what_became_of_its_answer() {
    use crate::tape::commit::Body;
    let result = r#"{"content":[{"type":"text","text":"real"}]}"#;
    let fault = |effect: &str, id: u32, replaced: bool| {
        let mut p = serde_json::json!({"rule": "r", "index": 1, "effect": effect, "id": id});
        if replaced {
            p["replaced"] = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": json(result)});
        }
        event(LifecycleKind::Fault, p)
    };
    let call = |id: u32| {
        send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo"}}}}"#
        ))
    };
    for drop in [false, true] {
        let asked = if drop { Body::Dropped } else { Body::Kept };
        let mut events = if drop {
            vec![Event::DropResults]
        } else {
            vec![]
        };
        events.extend([
            // A fault replaces the answer: the $commit comes before the $fault.
            call(1),
            told_commit(1, result, asked),
            fault("tool-error", 1, true),
            recv(r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}"#),
            // A timeout told before the answer came: the $commit is written when told.
            call(2),
            fault("timeout", 2, false),
            told_commit(2, result, asked),
            // A call whose answer never came, and a new request reusing its id.
            call(5),
            told_commit(5, result, asked),
            send(r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#),
            recv(r#"{"jsonrpc":"2.0","id":5,"result":{"tools":[{"name":"t"}]}}"#),
            // A cancelled call.
            call(6),
            told_commit(6, result, asked),
            send(
                r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":6}}"#,
            ),
            send(r#"{"jsonrpc":"2.0","id":6,"method":"tools/list"}"#),
            recv(r#"{"jsonrpc":"2.0","id":6,"result":{"tools":[{"name":"six"}]}}"#),
            call(7),
            told_commit(7, result, asked),
            Event::Finish,
        ]);
        let out = rendered(events, Redactor::default());
        let methods: Vec<String> = out
            .iter()
            .map(|l| {
                let v = json(l);
                match v["method"].as_str() {
                    Some("$commit") => format!(
                        "$commit {} {}",
                        v["params"]["id"],
                        v["params"]["body"].as_str().unwrap_or("")
                    ),
                    Some(m) => m.to_owned(),
                    None => format!("answer {}", v["id"]),
                }
            })
            .collect();
        assert_eq!(
            methods,
            [
                "tools/call",
                "$commit 1 replaced",
                "$fault",
                "answer 1",
                "tools/call",
                "$fault",
                "$commit 2 replaced",
                "tools/call",
                "$commit 5 missing",
                "tools/list",
                "answer 5",
                "tools/call",
                "$commit 6 missing",
                "notifications/cancelled",
                "tools/list",
                "answer 6",
                "tools/call",
                "$commit 7 missing",
            ],
            "drop {drop}: {out:#?}"
        );
        // The tools/list answer reusing a cancelled call's id keeps its body even under
        // --redact-results; one reusing the id of a call still pending (as far as the tap
        // knows) keeps it only when bodies are kept.
        assert!(
            out.iter().any(|l| l.contains(r#""name":"six""#)),
            "{out:#?}"
        );
        assert_eq!(
            out.iter().any(|l| l.contains(r#""name":"t""#)),
            !drop,
            "{out:#?}"
        );
        assert!(out[1].contains(r#""sha256""#), "{}", out[1]);
    }
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
