use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::*;
use crate::import::Answer;

fn fixture(run: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude-code")
        .join(run);
    std::fs::read_dir(&dir)
        .expect("fixture dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .expect("a session transcript")
}

fn result(call: &ImportedCall) -> &Value {
    match call.answer.as_ref().expect("answered") {
        Answer::Result(v) => v,
        Answer::Error(e) => panic!("an error: {e}"),
    }
}

fn names(t: &Transcript) -> Vec<String> {
    t.session
        .calls
        .iter()
        .map(|c| format!("{} {}", c.server, c.tool))
        .collect()
}

#[test]
fn a_real_session_gives_each_call_with_its_answer_in_order() {
    let t = read(&fixture("structured-and-stored")).expect("read");
    let s = &t.session;
    assert_eq!(s.id, "d212bf5d-9bcf-4cef-845f-9b9df0a8abab");
    assert_eq!(s.cwd.as_deref(), Some("/tmp/imp1/work"));
    assert_eq!(
        names(&t),
        [
            "ex echo",
            "ex fail",
            "ex add",
            "ex big",
            "every-thing echo",
            "every-thing get-structured-content"
        ]
    );
    assert_eq!(s.skipped_tools, 0);
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    let c = &s.calls;
    assert_eq!(c[0].arguments, json!({"message": "hello from claude"}));
    assert_eq!(
        result(&c[0]),
        &json!({"content": [{"type": "text", "text": "Echo: hello from claude"}]})
    );
    assert_eq!(
        result(&c[1]),
        &json!({"content": [{"type": "text", "text": "this tool always fails"}], "isError": true})
    );
    assert_eq!(result(&c[2])["structuredContent"], json!({"sum": 5}));
    assert_eq!(result(&c[2])["content"][0]["text"], "{\"sum\":5}");
    // Shown to the model as a 2 KB preview; the whole answer is on the entry.
    let big = result(&c[3])["content"][0]["text"].as_str().expect("text");
    assert_eq!(big.len(), 120_000);
    assert!(big.bytes().all(|b| b == b'x'));
    // Claude Code showed the model `{"sum":5}`, not the server's text `5`.
    assert!(
        c[2].incomplete
            .as_deref()
            .is_some_and(|w| w.contains("structuredContent"))
    );
    let complete = [0, 1, 3, 4];
    assert!(complete.iter().all(|&i| c[i].incomplete.is_none()));
    assert_eq!(c[0].called_at.as_deref(), Some("2026-12-01T19:34:39.667Z"));
    assert_eq!(
        c[0].answered_at.as_deref(),
        Some("2026-12-01T19:34:39.693Z")
    );
    assert_eq!(
        result(&c[5])["structuredContent"],
        json!({"temperature": 33, "conditions": "Cloudy", "humidity": 82})
    );
}

#[test]
fn subagents_real_names_and_content_blocks() {
    let t = read(&fixture("subagent-and-blocks")).expect("read");
    assert_eq!(t.subagents.len(), 1);
    // `my.srv` is `my_srv` in tool names; the subagent's echo (19:35:18.451) falls
    // between the main agent's calls (…18.436 and …18.695), in time.
    assert_eq!(
        names(&t),
        [
            "my.srv echo",
            "every-thing get-tiny-image",
            "my.srv echo",
            "every-thing get-resource-links",
            "my.srv echo",
            "my.srv big"
        ]
    );
    // The Agent and Bash tool uses are not MCP calls.
    assert_eq!(t.session.skipped_tools, 2);
    let c = &t.session.calls;
    let image = &result(&c[1])["content"][1];
    assert_eq!(image["type"], "image");
    assert_eq!(image["mimeType"], "image/png");
    assert!(
        image["data"]
            .as_str()
            .is_some_and(|d| d.starts_with("iVBOR"))
    );
    let links = &result(&c[3])["content"];
    assert_eq!(links[1]["type"], "resource_link");
    assert_eq!(links[1]["uri"], "demo://resource/dynamic/blob/1");
    assert_eq!(links[0]["type"], "text");
    assert_eq!(c[2].called_at.as_deref(), Some("2026-12-01T19:35:18.451Z"));
    assert_eq!(result(&c[4])["isError"], true);
    // Its 3 MB file under tool-results/ was left out of the fixture: marked, not lost.
    let why = c[5].incomplete.as_deref().expect("incomplete");
    assert!(why.contains("mcp-my_srv-big-"), "{why}");
    assert!(
        result(&c[5])["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("exceeds maximum allowed tokens"))
    );
}

#[test]
fn refused_calls_are_not_imported_and_a_lost_connection_is_an_error_result() {
    let t = read(&fixture("refused-and-closed")).expect("read");
    assert_eq!(names(&t), ["ex greet"]);
    assert_eq!((t.refused, t.session.skipped_tools), (1, 1));
    assert_eq!(
        result(&t.session.calls[0]),
        &json!({"content": [{"type": "text", "text": "Connection closed"}], "isError": true})
    );
}

fn write(lines: &[&str], end: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, format!("{}{end}", lines.join("\n"))).expect("write");
    (dir, path)
}

const CALL: &str = r#"{"type":"assistant","sessionId":"s1","timestamp":"2026-12-01T10:00:00Z","message":{"content":[{"type":"tool_use","id":"t1","name":"mcp__a__echo","input":{"message":"x"}}]}}"#;

#[test]
fn a_call_without_a_result_is_kept_unanswered_and_repeats_are_read_once() {
    let (_d, path) = write(&[CALL, CALL], "\n");
    let t = read(&path).expect("read");
    assert_eq!(t.session.calls.len(), 1);
    assert_eq!(t.session.calls[0].answer, None);
    assert_eq!(t.session.id, "s1");
}

#[test]
fn bad_lines_name_file_and_line_and_a_torn_last_line_is_skipped() {
    let (_d, path) = write(&[CALL, "{\"type\":", CALL], "\n");
    let err = read(&path).expect_err("bad JSON").to_string();
    assert!(err.contains("s.jsonl") && err.contains("line 2"), "{err}");
    let (_d, path) = write(&[CALL, "[1,2]"], "\n");
    let err = read(&path).expect_err("not an object").to_string();
    assert!(err.contains("line 2 is not a JSON object"), "{err}");
    let (_d, path) = write(&[CALL, "{\"type\":\"us"], "");
    let t = read(&path).expect("a torn last line is skipped");
    assert_eq!(t.session.calls.len(), 1);
    assert!(
        t.warnings[0].contains("line 2 is cut off"),
        "{:?}",
        t.warnings
    );
}

#[test]
fn any_depth_is_an_error_not_a_crash() {
    let deep = format!(
        r#"{{"type":"assistant","message":{{"content":[{{"type":"tool_use","id":"t","name":"mcp__a__b","input":{{"x":{}1{}}}}}]}}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let (_d, path) = write(&[&deep], "\n");
    let err = read(&path).expect_err("too deep").to_string();
    assert!(err.contains("line 1"), "{err}");
}

#[test]
fn names_split_at_the_first_double_underscore() {
    assert_eq!(split_name("mcp__a__echo"), Some(("a", "echo")));
    assert_eq!(split_name("mcp__a__b__c"), Some(("a", "b__c")));
    assert_eq!(
        split_name("mcp__plugin_p_srv__tool"),
        Some(("plugin_p_srv", "tool"))
    );
    assert_eq!(split_name("Bash"), None);
    assert_eq!(split_name("mcp__a"), None);
    assert_eq!(mangle("my.srv"), "my_srv");
}

#[test]
fn an_older_layouts_subagent_file_joins_its_session() {
    let dir = tempfile::tempdir().expect("tempdir");
    let main = dir.path().join("s1.jsonl");
    let agent = dir.path().join("agent-x.jsonl");
    std::fs::write(&main, format!("{CALL}\n")).expect("write");
    let later = CALL
        .replace("\"t1\"", "\"t2\"")
        .replace("10:00:00Z", "10:00:05Z")
        .replace("mcp__a__echo", "mcp__b__echo");
    let earlier = CALL
        .replace("\"t1\"", "\"t0\"")
        .replace("10:00:00Z", "09:59:00Z");
    std::fs::write(&agent, format!("{later}\n{earlier}\n")).expect("write");
    let read_all = vec![read(&agent).expect("agent"), read(&main).expect("main")];
    let merged = merge(read_all);
    assert_eq!(merged.len(), 1);
    let t = &merged[0];
    assert_eq!(t.session.source, main);
    assert_eq!(t.subagents, [agent]);
    let order: Vec<&str> = t
        .session
        .calls
        .iter()
        .map(|c| c.called_at.as_deref().unwrap_or(""))
        .collect();
    assert_eq!(
        order,
        [
            "2026-12-01T09:59:00Z",
            "2026-12-01T10:00:00Z",
            "2026-12-01T10:00:05Z"
        ]
    );
}

#[test]
fn no_symlinked_directory_is_followed_and_only_agent_files_are_subagents() {
    let dir = tempfile::tempdir().expect("tempdir");
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(elsewhere.join("subagents")).expect("mkdir");
    let other = CALL.replace("\"t1\"", "\"t9\"");
    std::fs::write(
        elsewhere.join("subagents/agent-o.jsonl"),
        format!("{other}\n"),
    )
    .expect("write");
    // A session whose `<id>/` directory is a link elsewhere: nothing there is read.
    let project = dir.path().join("p");
    std::fs::create_dir_all(&project).expect("mkdir");
    std::fs::write(project.join("s1.jsonl"), format!("{CALL}\n")).expect("write");
    std::os::unix::fs::symlink(&elsewhere, project.join("s1")).expect("symlink");
    let t = read(&project.join("s1.jsonl")).expect("read");
    assert!(t.subagents.is_empty(), "{:?}", t.subagents);
    assert_eq!(t.session.calls.len(), 1);
    // A real `<id>/subagents/` that is a link: not read either.
    let linked = dir.path().join("q");
    std::fs::create_dir_all(linked.join("s1")).expect("mkdir");
    std::fs::write(linked.join("s1.jsonl"), format!("{CALL}\n")).expect("write");
    std::os::unix::fs::symlink(elsewhere.join("subagents"), linked.join("s1/subagents"))
        .expect("symlink");
    assert!(
        read(&linked.join("s1.jsonl"))
            .expect("read")
            .subagents
            .is_empty()
    );
    // In a real `subagents/`, only `agent-*.jsonl` are subagents.
    let real = dir.path().join("r");
    std::fs::create_dir_all(real.join("s1/subagents")).expect("mkdir");
    std::fs::write(real.join("s1.jsonl"), format!("{CALL}\n")).expect("write");
    std::fs::write(real.join("s1/subagents/other.jsonl"), format!("{other}\n")).expect("w");
    std::fs::write(
        real.join("s1/subagents/agent-a.jsonl"),
        format!("{other}\n"),
    )
    .expect("w");
    let t = read(&real.join("s1.jsonl")).expect("read");
    assert_eq!(t.subagents, [real.join("s1/subagents/agent-a.jsonl")]);
}

#[test]
fn the_same_session_id_in_two_directories_is_two_sessions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut read_all = Vec::new();
    for p in ["a", "b", "c"] {
        let project = dir.path().join(p);
        std::fs::create_dir_all(&project).expect("mkdir");
        // No `sessionId`: the file stem `s` stands for it in each.
        let no_id = CALL.replace(r#""sessionId":"s1","#, "");
        std::fs::write(project.join("s.jsonl"), format!("{no_id}\n")).expect("write");
        read_all.push(read(&project.join("s.jsonl")).expect("read"));
    }
    assert_eq!(merge(read_all).len(), 3);
}
