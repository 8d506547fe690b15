//! `show` of an imported tape: the connection heading and the made-up or partial entries
//! are marked, escaped as everything show prints.

use serde_json::json;

use super::*;
use crate::import::{Answer, ImportedCall, ImportedSession};

#[test]
fn imported_connections_and_synthesized_and_incomplete_entries_are_marked() {
    let session = ImportedSession {
        id: "s\u{1b}[31m1".into(),
        source: "s.jsonl".into(),
        started: None,
        cwd: None,
        calls: vec![ImportedCall {
            server: "a".into(),
            tool: "echo".into(),
            arguments: json!({"message": "hi"}),
            answer: Some(Answer::Result(json!({"content": []}))),
            called_at: None,
            answered_at: None,
            incomplete: Some("kept 3 of 9\u{1b}[2J characters".into()),
        }],
        skipped_tools: 0,
    };
    let (bytes, _) =
        crate::import::tape::render(&session, "claude-code", &crate::Redactor::default())
            .expect("render");
    let tape = Tape::parse(std::path::Path::new("t.ndjson"), &bytes).expect("tape");
    let text = trace(&tape, &tape.connections(), None);
    assert!(!text.contains('\u{1b}'), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    let heading = lines
        .iter()
        .find(|l| l.starts_with("── a"))
        .expect("heading");
    assert!(
        heading.contains("imported from claude-code session s"),
        "{text}"
    );
    let init = lines
        .iter()
        .find(|l| l.contains("initialize #0"))
        .expect("init");
    assert!(init.ends_with("[synthesized]"), "{text}");
    let call = lines
        .iter()
        .find(|l| l.contains("tools/call"))
        .expect("call");
    assert!(
        !call.contains('['),
        "a transcript's call is not marked: {text}"
    );
    let answer = lines.iter().find(|l| l.contains("#1 ok")).expect("answer");
    assert!(answer.contains("[incomplete: kept 3 of 9"), "{text}");
}

#[test]
fn policy_decisions_read_as_lines_of_their_own_escaped() {
    let meta = |dir: &str| {
        format!(
            r#""_meta":{{"dir":"{dir}","server":"fs","ts":"2026-12-01T00:00:00.000Z","conn":"c1"}}"#
        )
    };
    let lines = [
        format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"delete_file","arguments":{{}}}},{}}}"#,
            meta("send")
        ),
        format!(
            r#"{{"jsonrpc":"2.0","method":"$policy/decision","params":{{"method":"tools/call","id":7,"tool":"delete_file","decision":"deny","rules":["no-delete"],"resolution":"refused"}},{}}}"#,
            meta("lifecycle")
        ),
        format!(
            r#"{{"jsonrpc":"2.0","method":"$policy/decision","params":{{"method":"tools/call","id":8,"tool":"publish\u001b[2J","decision":"ask","rules":[],"resolution":"allowed","by":"ann@host","waitedMs":2500,"approval":"k3f9"}},{}}}"#,
            meta("lifecycle")
        ),
    ];
    let bytes = lines.join("\n") + "\n";
    let tape = Tape::parse(std::path::Path::new("t.ndjson"), bytes.as_bytes()).expect("tape");
    let text = trace(&tape, &tape.connections(), None);
    assert!(!text.contains('\u{1b}'), "{text}");
    assert!(
        text.contains("· POLICY deny → refused #7 tools/call delete_file (rule no-delete)"),
        "{text}"
    );
    assert!(
        text.contains("POLICY ask → allowed #8 tools/call publish")
            && text.contains("(default; by ann@host; waited 2.5 s; approval k3f9)"),
        "{text}"
    );
}
