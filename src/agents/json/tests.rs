use serde_json::json;

use super::*;

fn entry(doc: &JsonDocument, path: &[&str], name: &str) -> Entry {
    doc.entries(path)
        .expect("entries")
        .into_iter()
        .find(|e| e.name() == name)
        .expect("entry")
}

fn set(text: &str, path: &[&str], name: &str, key: &str, value: Option<Value>) -> String {
    let doc = JsonDocument::parse(text).expect("parse");
    let e = entry(&doc, path, name);
    let edits = doc.set_member(&e, key, value.as_ref()).expect("edit");
    crate::agents::document::apply_edits(text, edits).expect("apply")
}

const JSONC: &str = "// my servers\n{\n  \"servers\": {\n    /* the fs one */\n    \"fs\": {\n      \"type\": \"stdio\", // local\n      \"command\": \"npx\",\n      \"args\": [\"-y\", \"fs\"],\n    },\n  },\n  \"inputs\": [],\n}\n";

#[test]
fn entries_have_spans_and_values_with_comments_and_trailing_commas() {
    let doc = JsonDocument::parse(JSONC).expect("parse");
    let e = entry(&doc, &["servers"], "fs");
    assert_eq!(e.path, ["servers", "fs"]);
    assert!(JSONC[e.span.clone()].starts_with('{') && JSONC[e.span.clone()].ends_with('}'));
    assert_eq!(
        e.value,
        json!({"type": "stdio", "command": "npx", "args": ["-y", "fs"]})
    );
    assert!(doc.entries(&["nothing"]).expect("absent").is_empty());
    assert!(
        doc.entries(&["inputs"]).is_err(),
        "a container that is not an object"
    );
}

#[test]
fn replacing_a_value_changes_only_its_bytes() {
    let out = set(JSONC, &["servers"], "fs", "command", Some(json!("mcptape")));
    assert_eq!(out, JSONC.replace("\"npx\"", "\"mcptape\""));
    let out = set(JSONC, &["servers"], "fs", "args", Some(json!(["a", "b"])));
    assert_eq!(out, JSONC.replace("[\"-y\", \"fs\"]", "[\"a\", \"b\"]"));
}

#[test]
fn an_added_member_takes_the_entry_style_and_removing_it_round_trips() {
    let out = set(JSONC, &["servers"], "fs", "env", Some(json!({"K": "v"})));
    assert!(
        out.contains(
            "\"args\": [\"-y\", \"fs\"],\n      \"env\": {\n        \"K\": \"v\"\n      },\n    },"
        ),
        "{out}"
    );
    let back = set(&out, &["servers"], "fs", "env", None);
    assert_eq!(back, JSONC);
}

#[test]
fn crlf_tabs_and_single_line_objects_keep_their_style() {
    let crlf = "{\r\n\t\"mcpServers\": {\r\n\t\t\"a\": {\r\n\t\t\t\"command\": \"x\"\r\n\t\t}\r\n\t}\r\n}\r\n";
    let out = set(crlf, &["mcpServers"], "a", "args", Some(json!(["1"])));
    assert_eq!(
        out,
        "{\r\n\t\"mcpServers\": {\r\n\t\t\"a\": {\r\n\t\t\t\"command\": \"x\",\r\n\t\t\t\"args\": [\"1\"]\r\n\t\t}\r\n\t}\r\n}\r\n"
    );
    let one = "{\"mcpServers\":{\"a\":{\"command\":\"x\"}}}";
    let out = set(one, &["mcpServers"], "a", "env", Some(json!({"K": "v"})));
    assert_eq!(
        out,
        "{\"mcpServers\":{\"a\":{\"command\":\"x\",\"env\":{\"K\":\"v\"}}}}"
    );
    let spaced = "{ \"mcpServers\": { \"a\": { \"command\": \"x\" } } }";
    let out = set(
        spaced,
        &["mcpServers"],
        "a",
        "args",
        Some(json!(["1", "2"])),
    );
    assert_eq!(
        out,
        "{ \"mcpServers\": { \"a\": { \"command\": \"x\", \"args\": [\"1\", \"2\"] } } }"
    );
    let empty = "{\"mcpServers\": {\"a\": {}}}";
    let out = set(empty, &["mcpServers"], "a", "command", Some(json!("x")));
    assert_eq!(out, "{\"mcpServers\": {\"a\": {\"command\": \"x\"}}}");
}

#[test]
fn removing_a_middle_or_only_member() {
    let text = "{\"s\": {\"a\": {\"x\": 1, \"y\": 2, \"z\": 3}}}";
    assert_eq!(
        set(text, &["s"], "a", "y", None),
        "{\"s\": {\"a\": {\"x\": 1, \"z\": 3}}}"
    );
    assert_eq!(
        set(text, &["s"], "a", "z", None),
        "{\"s\": {\"a\": {\"x\": 1, \"y\": 2}}}"
    );
    let only = "{\"s\": {\"a\": {\"x\": 1}}}";
    assert_eq!(set(only, &["s"], "a", "x", None), "{\"s\": {\"a\": {}}}");
}

#[test]
fn bad_text_is_an_error_with_line_and_column_and_depth_is_bounded() {
    match JsonDocument::parse("{\n  \"a\": 1,\n  \"b\" 2\n}") {
        Err(DocError::Syntax { line, .. }) => assert_eq!(line, 3),
        other => panic!("{other:?}"),
    }
    assert!(
        JsonDocument::parse("[1]").is_err(),
        "the top level must be an object"
    );
    let deep = format!("{{\"a\":{}{}}}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(
        JsonDocument::parse(&deep).is_err(),
        "too deep is an error, not a crash"
    );
    assert!(
        JsonDocument::parse("  \n")
            .expect("empty")
            .entries(&["x"])
            .expect("none")
            .is_empty()
    );
}

#[test]
fn a_comment_after_the_last_member_stays_on_its_line() {
    let text =
        "{\n  \"s\": {\n    \"a\": {\n      \"command\": \"x\" // the server\n    }\n  }\n}\n";
    let out = set(text, &["s"], "a", "args", Some(json!(["1"])));
    assert_eq!(
        out,
        "{\n  \"s\": {\n    \"a\": {\n      \"command\": \"x\", // the server\n      \"args\": [\"1\"]\n    }\n  }\n}\n"
    );
    let trailing = "{\"s\": {\n  \"a\": {\n    \"command\": \"x\", // c\n  },\n}}";
    let out = set(trailing, &["s"], "a", "env", Some(json!({})));
    assert_eq!(
        out,
        "{\"s\": {\n  \"a\": {\n    \"command\": \"x\", // c\n    \"env\": {},\n  },\n}}"
    );
    let back = set(&out, &["s"], "a", "env", None);
    assert_eq!(back, trailing);
}

#[test]
fn removing_the_last_member_keeps_a_comment_of_the_one_before() {
    let text = "{\"s\": {\n  \"a\": {\n    \"b\": 1, // c\n    \"url\": \"u\"\n  }\n}}";
    assert_eq!(
        set(text, &["s"], "a", "url", None),
        "{\"s\": {\n  \"a\": {\n    \"b\": 1 // c\n  }\n}}"
    );
    let trailing =
        "{\"s\": {\r\n  \"a\": {\r\n    \"b\": 1, // c\r\n    \"url\": \"u\",\r\n  }\r\n}}";
    assert_eq!(
        set(trailing, &["s"], "a", "url", None),
        "{\"s\": {\r\n  \"a\": {\r\n    \"b\": 1, // c\r\n  }\r\n}}"
    );
}

#[test]
fn a_duplicate_key_is_an_error_naming_its_line_not_a_guess() {
    let text = "{\n  \"mcpServers\": {\n    \"s\": {\n      \"command\": \"a\",\n      \"command\": \"b\"\n    }\n  }\n}\n";
    match JsonDocument::parse(text) {
        Err(DocError::Syntax { line, message, .. }) => {
            assert_eq!(line, 5);
            assert!(message.contains("duplicate key `command`"), "{message}");
        }
        other => panic!("not a syntax error: {other:?}"),
    }
    // Equal keys in different objects are fine.
    let ok = "{\"mcpServers\": {\"a\": {\"command\": \"x\"}, \"b\": {\"command\": \"y\"}}}";
    assert!(JsonDocument::parse(ok).is_ok());
}

#[test]
fn removing_a_member_never_moves_text_onto_a_comment_line() {
    // Found by the config_json fuzz target: `}` after the removed member joined the
    // commented-out line before it and became part of the comment.
    let text = "{\"s\": {\n  \"a\": {\r\n    \"command\": \"x\",\n//  \"args\": [],\n    \"cwd\": \"/\", }\n}}";
    let out = set(text, &["s"], "a", "cwd", None);
    assert_eq!(
        out,
        "{\"s\": {\n  \"a\": {\r\n    \"command\": \"x\",\n//  \"args\": [],\n     }\n}}"
    );
    let again = JsonDocument::parse(&out).expect("parses again");
    assert_eq!(
        again.entries(&["s"]).expect("entries")[0].value,
        json!({"command": "x"})
    );
}
