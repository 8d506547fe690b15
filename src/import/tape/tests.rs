use std::path::Path;

use serde_json::json;

use super::*;
use crate::tape::{Direction, Tape};

fn call(server: &str, tool: &str, answer: Option<Answer>) -> ImportedCall {
    ImportedCall {
        server: server.into(),
        tool: tool.into(),
        arguments: json!({"message": "hi"}),
        answer,
        called_at: Some("2026-12-01T10:00:00.123Z".into()),
        answered_at: Some("2026-12-01T10:00:01Z".into()),
        incomplete: None,
    }
}

fn session() -> ImportedSession {
    let ok = |t: &str| {
        Some(Answer::Result(
            json!({"content": [{"type": "text", "text": t}]}),
        ))
    };
    let mut secret = call("example", "login", ok("in"));
    secret.arguments = json!({"apiKey": "sk-live-abcdefghijklmnopqrstuvwx", "user": "ann"});
    let mut cut = call("everything", "big", ok("partial"));
    cut.incomplete = Some("the transcript kept 100 of 9000 characters".into());
    ImportedSession {
        id: "0f1e2d3c-aaaa-bbbb".into(),
        source: "s.jsonl".into(),
        started: None,
        cwd: None,
        calls: vec![
            call("example", "echo", ok("hi")),
            call(
                "everything",
                "fail",
                Some(Answer::Error(json!({"code": -32603, "message": "no"}))),
            ),
            secret,
            cut,
            call("example", "never", None),
        ],
        skipped_tools: 2,
    }
}

fn rendered() -> (Tape, Vec<ServerCalls>) {
    let (bytes, counts) = render(&session(), "claude-code", &Redactor::default()).expect("render");
    (Tape::parse(Path::new("t"), &bytes).expect("a tape"), counts)
}

#[test]
fn one_connection_per_server_in_order_of_first_call() {
    let (tape, counts) = rendered();
    let conns = tape.connections();
    assert_eq!(conns.len(), 2);
    assert_eq!(
        (conns[0].server.as_str(), conns[1].server.as_str()),
        ("example", "everything")
    );
    assert_ne!(conns[0].id, conns[1].id);
    assert_eq!(
        counts[0],
        ServerCalls {
            server: "example".into(),
            calls: 3,
            unanswered: 1,
            incomplete: 0
        }
    );
    assert_eq!(counts[1].incomplete, 1);
    let methods: Vec<String> = conns[0]
        .entries
        .iter()
        .map(|&i| {
            let e = &tape.entries[i];
            format!(
                "{} {} {}",
                e.meta.dir,
                e.message.method().unwrap_or("-"),
                e.message.id().unwrap_or("-")
            )
        })
        .collect();
    assert_eq!(
        methods,
        [
            "lifecycle $transport/start -",
            "send initialize 0",
            "recv - 0",
            "send notifications/initialized -",
            "send tools/call 1",
            "recv - 1",
            "send tools/call 2",
            "recv - 2",
            "send tools/call 3",
            "lifecycle $transport/close -",
        ]
    );
}

#[test]
fn every_entry_is_marked_imported_and_the_handshake_synthesized() {
    let (tape, _) = rendered();
    for e in &tape.entries {
        let source = e.meta.source.as_ref().expect("every entry has a source");
        assert_eq!(source.imported, "claude-code");
        assert_eq!(source.session.as_deref(), Some("0f1e2d3c-aaaa-bbbb"));
        let made_up = e.meta.dir == Direction::Lifecycle
            || e.message.method() == Some("initialize")
            || e.message.method() == Some("notifications/initialized")
            || e.message.id() == Some("0");
        assert_eq!(source.synthesized, made_up, "line {}", e.line);
    }
    let cut = tape
        .entries
        .iter()
        .find(|e| {
            e.meta
                .source
                .as_ref()
                .is_some_and(|s| s.incomplete.is_some())
        })
        .expect("the cut answer is marked");
    assert_eq!(cut.meta.dir, Direction::Recv);
    assert!(cut.message.text().contains("partial"));
}

#[test]
fn calls_answers_and_times_are_the_transcripts() {
    let (tape, _) = rendered();
    let e = &tape.entries[4];
    assert_eq!(
        e.message.value()["params"],
        json!({"name": "echo", "arguments": {"message": "hi"}})
    );
    assert_eq!(e.meta.ts.as_deref(), Some("2026-12-01T10:00:00.123Z"));
    assert_eq!(
        tape.entries[5].meta.ts.as_deref(),
        Some("2026-12-01T10:00:01.000Z")
    );
    assert_eq!(
        tape.entries[0].meta.ts.as_deref(),
        Some("2026-12-01T10:00:00.123Z")
    );
    let error = tape
        .entries
        .iter()
        .find(|e| e.message.value().get("error").is_some())
        .expect("the error answer");
    assert_eq!(error.message.value()["error"]["code"], json!(-32603));
}

#[test]
fn secrets_in_arguments_are_redacted() {
    let (bytes, _) = render(&session(), "claude-code", &Redactor::default()).expect("render");
    let text = String::from_utf8(bytes).expect("utf-8");
    assert!(!text.contains("sk-live-abcdefghijklmnopqrstuvwx"), "{text}");
    assert!(text.contains("[REDACTED]"));
    assert!(text.contains("\"user\":\"ann\""));
    let (bytes, _) = render(&session(), "claude-code", &Redactor::off()).expect("render");
    let text = String::from_utf8(bytes).expect("utf-8");
    assert!(text.contains("sk-live-abcdefghijklmnopqrstuvwx"));
    assert!(text.contains("\"redaction\":\"off\""));
}

#[test]
fn names_keep_a_safe_prefix_of_the_session_id() {
    let name = |agent: &str, s: &ImportedSession| Names::default().next(agent, s);
    let mut s = session();
    assert_eq!(name("claude-code", &s), "claude-code-0f1e2d3c");
    s.id = "../\u{1b}[31mx".into();
    let n = name("claude-code", &s);
    assert_eq!(n, "claude-code-____31mx");
    crate::tape::store::check_name(&n).expect("a valid session name");
    s.id = String::new();
    assert_eq!(name("codex", &s), "codex");
}

#[test]
fn writing_keeps_the_previous_tape_and_refuses_a_symlink() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("recordings/claude-code-0f1e2d3c.ndjson");
    let first = write(&session(), "claude-code", &path, &Redactor::default()).expect("write");
    assert_eq!(first.kept, None);
    assert_eq!(first.servers.len(), 2);
    let before = std::fs::read(&path).expect("read");
    // The same session again: the same bytes (conn ids are derived, not drawn), so the
    // tape is left alone.
    let same = write(&session(), "claude-code", &path, &Redactor::default()).expect("again");
    assert!(same.unchanged);
    assert_eq!(same.kept, None);
    assert_eq!(std::fs::read(&path).expect("read"), before);
    // A changed session: the first tape is kept.
    let mut changed = session();
    changed.calls.pop();
    let second = write(&changed, "claude-code", &path, &Redactor::default()).expect("again");
    assert!(!second.unchanged);
    let prev = second.kept.expect("the first tape is kept");
    assert_eq!(std::fs::read(prev).expect("prev"), before);
    let target = dir.path().join("victim");
    std::fs::write(&target, "mine").expect("write");
    let link = dir.path().join("link.ndjson");
    std::os::unix::fs::symlink(&target, &link).expect("symlink");
    write(&session(), "claude-code", &link, &Redactor::default()).expect_err("refused");
    assert_eq!(std::fs::read(&target).expect("victim"), b"mine");
}
