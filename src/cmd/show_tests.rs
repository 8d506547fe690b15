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
