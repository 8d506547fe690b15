use std::path::Path;

use serde_json::json;

use super::*;

const EXAMPLE: &[u8] = include_bytes!(
    "../../tests/fixtures/codex/rollout-2025-11-20T10-15-30-0199a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b.jsonl"
);
const DOCS: &[u8] = include_bytes!(
    "../../tests/fixtures/codex/rollout-2025-11-21T08-00-00-0199a1c4-1111-7222-8333-944455566677.jsonl"
);

fn parse_text(text: &str) -> Result<ImportedSession, ImportError> {
    parse(Path::new("r.jsonl"), text.as_bytes()).map(|r| r.session)
}

const META: &str = r#"{"timestamp":"2025-01-01T00:00:00.000Z","type":"session_meta","payload":{"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w","originator":"x","cli_version":"0"}}"#;

#[test]
fn the_example_fixture_gives_its_three_mcp_calls_in_order_and_counts_the_shell_call() {
    let s = parse(Path::new("a.jsonl"), EXAMPLE).expect("parse").session;
    assert_eq!(s.id, "0199a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b");
    assert_eq!(s.cwd.as_deref(), Some("/home/dev/shop"));
    assert_eq!(s.started.as_deref(), Some("2025-11-20T10:15:30.101Z"));
    assert_eq!(s.skipped_tools, 1, "the shell call");
    let tools: Vec<_> = s
        .calls
        .iter()
        .map(|c| (c.server.as_str(), c.tool.as_str()))
        .collect();
    assert_eq!(
        tools,
        [
            ("example", "echo"),
            ("example", "greet"),
            ("example", "write_note")
        ]
    );
    let echo = &s.calls[0];
    assert_eq!(echo.arguments, json!({"message": "hello from codex"}));
    assert_eq!(
        echo.answer,
        Some(Answer::Result(
            json!({"content": [{"type": "text", "text": "Echo: hello from codex"}]})
        ))
    );
    // The begin event gives the start; the end event the answer's time.
    assert_eq!(echo.called_at.as_deref(), Some("2025-11-20T10:15:33.402Z"));
    assert_eq!(
        echo.answered_at.as_deref(),
        Some("2025-11-20T10:15:33.451Z")
    );
    // Without a begin event, the start is the end less the duration (29.213 ms).
    assert_eq!(
        s.calls[1].called_at.as_deref(),
        Some("2025-11-20T10:15:35.201Z")
    );
    assert!(s.calls.iter().all(|c| c.incomplete.is_none()));
}

#[test]
fn err_results_become_json_rpc_errors_and_a_begin_without_end_has_no_answer() {
    let s = parse(Path::new("b.jsonl"), DOCS).expect("parse").session;
    assert_eq!(s.cwd.as_deref(), Some("/home/dev/docs site"));
    assert_eq!(s.calls.len(), 5);
    assert_eq!(
        s.calls[0].answer,
        Some(Answer::Result(
            json!({"content": [{"type": "text", "text": "3 pages"}],
            "structuredContent": {"hits": ["a", "b", "c"]}, "isError": false})
        ))
    );
    assert_eq!(
        s.calls[1].answer,
        Some(Answer::Error(json!({"code": -32603,
            "message": "tool call failed for `docs/fetch_page`: request timed out"})))
    );
    let Some(Answer::Result(big)) = &s.calls[2].answer else {
        panic!("big answer")
    };
    assert_eq!(
        big["content"][0]["text"].as_str().map(str::len),
        Some(120_000)
    );
    assert_eq!(big["_meta"], json!({"page": "big"}));
    // `arguments: null` is no arguments.
    assert_eq!(s.calls[3].arguments, json!({}));
    assert_eq!(s.calls[4].answer, None);
    assert_eq!(
        s.calls[4].called_at.as_deref(),
        Some("2025-11-21T08:00:09.000Z")
    );
}

#[test]
fn bad_lines_are_errors_naming_file_and_line() {
    for (text, want) in [
        (
            format!("{META}\n{{oops\n"),
            "transcript `r.jsonl` line 2 is not valid JSON: key must be a string at line 1 column 2",
        ),
        (
            format!("{META}\n[1,2]\n"),
            "transcript `r.jsonl` line 2 is not a JSON object",
        ),
        (
            format!("{META}\n{{\"type\":\"event_msg\"}}\n"),
            "transcript `r.jsonl` line 2: a `event_msg` line without its `payload`",
        ),
        (
            format!(
                "{META}\n{{\"type\":\"event_msg\",\"payload\":{{\"type\":\"mcp_tool_call_end\",\"call_id\":\"c\"}}}}\n"
            ),
            "line 2: mcp_tool_call_end: missing field `invocation`",
        ),
        (
            format!(
                "{META}\n{{\"type\":\"event_msg\",\"payload\":{{\"type\":\"mcp_tool_call_end\",\"call_id\":\"c\",\"invocation\":{{\"server\":\"s\",\"tool\":\"t\"}},\"result\":{{\"Ok\":5}}}}}}\n"
            ),
            "line 2: mcp_tool_call_end: `result.Ok` is not an object",
        ),
        (
            "{\"timestamp\":\"t\",\"type\":\"session_meta\",\"payload\":5}\n".to_owned(),
            "line 1: session_meta: invalid type: integer `5`",
        ),
        (
            "".to_owned(),
            "`r.jsonl` is not a Codex transcript: it has no rollout line",
        ),
        (
            "{\"type\":\"event_msg\",\"payload\":{\"type\":\"x\"}}\n".to_owned(),
            "is not a Codex transcript: it has no `session_meta` line",
        ),
    ] {
        let err = parse_text(&text).expect_err(&text);
        assert!(err.to_string().contains(want), "{err} / wanted {want}");
    }
}

#[test]
fn unknown_types_and_a_torn_last_line_are_skipped() {
    let text = format!(
        "{META}\n{{\"type\":\"new_kind\",\"payload\":1}}\n{{\"type\":\"event_msg\",\"payload\":{{\"type\":\"new_event\",\"x\":[]}}}}\n{{\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"type\":\"event_msg\",\"payload\":{{\"type\":\"mcp_tool_ca"
    );
    let read = parse(Path::new("r.jsonl"), text.as_bytes()).expect("parse");
    assert_eq!(read.session.id, "s1");
    assert!(read.session.calls.is_empty());
    assert_eq!(read.warnings.len(), 1, "{:?}", read.warnings);
    assert!(
        read.warnings[0].contains("`r.jsonl` line 4: skipped"),
        "{:?}",
        read.warnings
    );
    // The same torn text with a newline after it was written whole: an error.
    assert!(parse_text(&format!("{text}\n")).is_err());
}

#[test]
fn the_old_bare_meta_first_line_names_the_session() {
    let s = parse_text("{\"id\":\"old\",\"timestamp\":\"2025-04-01T00:00:00.000Z\",\"instructions\":null}\n{\"type\":\"message\",\"role\":\"user\",\"content\":[]}\n")
        .expect("parse");
    assert_eq!(s.id, "old");
    assert_eq!(s.started.as_deref(), Some("2025-04-01T00:00:00.000Z"));
}

#[test]
fn deep_results_and_deep_unused_lines_never_panic() {
    let deep = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
    let end = format!(
        "{{\"type\":\"event_msg\",\"payload\":{{\"type\":\"mcp_tool_call_end\",\"call_id\":\"c\",\"invocation\":{{\"server\":\"s\",\"tool\":\"t\",\"arguments\":{{\"a\":{}}}}},\"result\":{{\"Ok\":{{\"content\":{}}}}}}}}}",
        deep(100_000),
        deep(100_000)
    );
    let unused = format!(
        "{{\"type\":\"event_msg\",\"payload\":{{\"type\":\"other\",\"x\":{}}}}}",
        deep(100_000)
    );
    let s = parse_text(&format!("{META}\n{unused}\n{end}\n")).expect("deep is fine");
    assert_eq!(s.calls.len(), 1);
    let note = s.calls[0].incomplete.as_deref().expect("marked");
    assert!(note.contains("deeper than 100 levels"), "{note}");
    assert_eq!(note.matches("deeper").count(), 1, "{note}");
}

#[test]
fn started_before_does_not_overflow() {
    let raw = |t: &str| serde_json::value::RawValue::from_string(t.to_owned()).expect("raw");
    let huge = raw(r#"{"secs":18446744073709551615,"nanos":4294967295}"#);
    assert_eq!(
        started_before(Some("2025-01-01T00:00:00Z"), Some(&huge)),
        None
    );
    let ok = raw(r#"{"secs":1,"nanos":500000000}"#);
    assert_eq!(
        started_before(Some("2025-01-01T00:00:00Z"), Some(&ok)).as_deref(),
        Some("2024-12-31T23:59:58.500Z")
    );
    assert_eq!(started_before(Some("yesterday"), Some(&ok)), None);
    // Longer than the time since 1970: no start rather than a panic in the formatter.
    for secs in ["99999999999", "1800000000"] {
        let long = raw(&format!(r#"{{"secs":{secs},"nanos":0}}"#));
        assert_eq!(
            started_before(Some("2025-01-01T00:00:00Z"), Some(&long)),
            None
        );
    }
}

#[test]
fn mcp_named_function_calls_without_events_are_said_not_guessed() {
    let text = format!(
        "{META}\n{{\"type\":\"response_item\",\"payload\":{{\"type\":\"function_call\",\"name\":\"mcp__example__echo\",\"arguments\":\"{{}}\",\"call_id\":\"a\"}}}}\n{{\"type\":\"response_item\",\"payload\":{{\"type\":\"function_call\",\"name\":\"shell\",\"arguments\":\"{{}}\",\"call_id\":\"b\"}}}}\n"
    );
    let read = parse(Path::new("r.jsonl"), text.as_bytes()).expect("parse");
    assert!(read.session.calls.is_empty());
    assert_eq!(read.session.skipped_tools, 2);
    assert_eq!(read.warnings.len(), 1, "{:?}", read.warnings);
    assert!(
        read.warnings[0].contains("1 function call named `mcp__…` has no mcp_tool_call_end event"),
        "{:?}",
        read.warnings
    );
    // The example fixture's mcp__ calls all have their events: no warning.
    assert!(
        parse(Path::new("a.jsonl"), EXAMPLE)
            .expect("parse")
            .warnings
            .is_empty()
    );
}

#[test]
fn a_line_longer_than_the_limit_is_an_error_naming_it_and_so_is_a_file_not_regular() {
    let mut text = format!("{META}\n").into_bytes();
    text.extend(std::iter::repeat_n(
        b' ',
        crate::import::file::MAX_LINE_BYTES + 1,
    ));
    text.push(b'\n');
    let err = parse(Path::new("r.jsonl"), &text).expect_err("too long");
    assert!(
        err.to_string()
            .contains("transcript `r.jsonl` line 2 is longer than 67108864 bytes"),
        "{err}"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let err = read(dir.path()).expect_err("a directory is no rollout");
    assert!(
        err.to_string().contains("is not a transcript file"),
        "{err}"
    );
}
