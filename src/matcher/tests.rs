//! Unit tests of [`super`]: `matcher`.

use super::*;
use serde_json::json;

fn msg(v: Value) -> Message {
    Message::new(v.to_string())
}

#[test]
fn volatile_meta_and_ids_are_not_compared() {
    let m = Matcher::default();
    let rec = msg(json!({"jsonrpc":"2.0","id":3,"method":"tools/call",
        "params":{"name":"echo","arguments":{"x":1},"_meta":{"progressToken":3}}}));
    let live = msg(json!({"jsonrpc":"2.0","id":"abc","method":"tools/call",
        "params":{"name":"echo","arguments":{"x":1.0}}}));
    assert!(m.matches(&rec, &live));
    let other = msg(json!({"jsonrpc":"2.0","id":3,"method":"tools/call",
        "params":{"name":"echo","arguments":{"x":2}}}));
    assert!(!m.matches(&rec, &other));
}

#[test]
fn meta_is_ignored_by_default_and_compared_with_the_flag() {
    let call = |id: &str, extra: Value| {
        msg(json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
            "params":{"name":"echo","arguments":{"x":1},
                "_meta":{"claudecode/toolUseId":id,"progressToken":id,"extra":extra}}}))
    };
    let (rec, live) = (call("toolu_01", json!(1)), call("toolu_02", json!(1)));
    let bare = msg(json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
        "params":{"name":"echo","arguments":{"x":1}}}));
    let m = Matcher::default();
    assert!(
        m.matches(&rec, &live),
        "an agent's own ids are not compared"
    );
    assert!(m.matches(&rec, &bare) && m.matches(&bare, &rec));
    let answer = |meta: Value| msg(json!({"id":0,"result":{"action":"accept","_meta":meta}}));
    assert!(m.matches(&answer(json!({"a":1})), &answer(json!({"a":2}))));

    let strict = Matcher::default().match_meta(true);
    assert!(
        !strict.matches(&rec, &live),
        "--match-meta compares `_meta`"
    );
    assert!(!strict.matches(&rec, &bare));
    assert!(!strict.matches(&answer(json!({"a":1})), &answer(json!({"a":2}))));
    // The progress token is rewritten, not compared, even with --match-meta.
    let token = |t: &str| {
        msg(
            json!({"id":1,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":t}}}),
        )
    };
    assert!(strict.matches(&token("a"), &token("b")));
    let bare = msg(json!({"id":1,"method":"tools/call","params":{"name":"echo"}}));
    assert!(strict.matches(&token("a"), &bare));
    // verify's answers.
    let answer = json!({"result":{"content":[],"_meta":{"x":1}}});
    assert_eq!(
        without_result_meta(answer.clone(), false),
        json!({"result":{"content":[]}})
    );
    assert_eq!(without_result_meta(answer.clone(), true), answer);
}

#[test]
fn kind_and_method_must_agree() {
    let m = Matcher::default();
    let req = msg(json!({"id":1,"method":"a"}));
    assert!(!m.matches(&req, &msg(json!({"method":"a"}))));
    assert!(!m.matches(&req, &msg(json!({"id":1,"method":"b"}))));
}

#[test]
fn initialize_matches_on_method_unless_strict() {
    let rec = msg(json!({"id":0,"method":"initialize","params":{"clientInfo":{"version":"1"}}}));
    let live = msg(json!({"id":1,"method":"initialize","params":{"clientInfo":{"version":"2"}}}));
    assert!(Matcher::default().matches(&rec, &live));
    assert!(!Matcher::new(vec![], true).matches(&rec, &live));
}

#[test]
fn ignore_globs() {
    let globs = ["params.arguments.ts", "**.requestId", "params.list.*.t"]
        .map(|g| Glob::parse(g).expect("glob"));
    let m = Matcher::new(globs.to_vec(), false);
    let rec = msg(
        json!({"method":"n","params":{"arguments":{"ts":1,"a":{"requestId":"x"}},
        "list":[{"t":1,"k":1}]}}),
    );
    let live = msg(
        json!({"method":"n","params":{"arguments":{"ts":2,"a":{"requestId":"y"}},
        "list":[{"t":2,"k":1}]}}),
    );
    assert!(m.matches(&rec, &live));
    assert!(Glob::parse("a..b").is_err());
}

#[test]
fn redacted_matches_whole_values_and_spans() {
    assert!(equal(
        &json!({"k": "[REDACTED]"}),
        &json!({"k": {"any": 1}})
    ));
    assert!(equal(
        &json!("Bearer [REDACTED] at [REDACTED]!"),
        &json!("Bearer abc at home!")
    ));
    assert!(!equal(&json!("Bearer [REDACTED]!"), &json!("Basic abc!")));
    assert!(!equal(&json!("x[REDACTED]x"), &json!("x")));
    assert!(
        !equal(&json!({"k": "v"}), &json!({"k": "[REDACTED]"})),
        "only the tape side is a pattern"
    );
}

#[test]
fn differences_have_paths_into_json_text() {
    let mut old = json!({"result": {"content": [{"text": "{\"a\":1,\"b\":2}"}], "x": 1}});
    let mut new = json!({"result": {"content": [{"text": "{\"a\":1,\"b\":3}"}], "y": 2}});
    expand_json_text(&mut old);
    expand_json_text(&mut new);
    let d = differences(&old, &new, "");
    let paths: Vec<&str> = d.iter().map(|d| d.path.as_str()).collect();
    assert_eq!(paths, ["result.content.0.text.b", "result.x", "result.y"]);
    assert_eq!(d[1].new, None);
    assert!(
        Glob::parse("result.content.*.text.b")
            .expect("glob")
            .remove(&mut new)
    );
    assert!(!Glob::parse("result.nope").expect("glob").remove(&mut new));
}

fn deep(levels: usize, leaf: &str) -> String {
    format!("{}{leaf}{}", "[".repeat(levels), "]".repeat(levels))
}

#[test]
fn too_deep_parts_match_by_their_bytes() {
    let m = Matcher::default();
    let call = |id: u32, arg: &str| {
        Message::new(format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"d":{arg}}}}}}}"#
        ))
    };
    let rec = call(1, &deep(1_000_000, "1"));
    assert!(m.matches(&rec, &call(7, &deep(1_000_000, " 1 "))));
    assert!(!m.matches(&rec, &call(1, &deep(1_000_000, "2"))));
    assert!(!m.matches(&rec, &call(1, &deep(999_999, "1"))));
    // What recording redacted deep down matches the live secret it stands for.
    let live = call(2, &deep(1_000, r#""Bearer abcdefghijklmnop1234""#));
    let recorded = call(1, &deep(1_000, r#""Bearer [REDACTED]""#));
    assert!(m.matches(&recorded, &live));
    assert!(!m.matches(&recorded, &call(2, &deep(1_000, r#""Bearer other""#))));
    let d = differences(
        &m.normalize(&rec),
        &m.normalize(&call(1, &deep(10_000, "1"))),
        "",
    );
    assert_eq!(d.len(), 1);
    assert!(
        d[0].path.starts_with("params.arguments.d.0.0."),
        "{}",
        d[0].path
    );
}

#[test]
fn json_in_text_expands_within_the_depth_limit() {
    // A string holding JSON 90 deep, whose innermost string holds JSON 90 deep, …
    let mut text = deep(90, "1");
    for _ in 0..6 {
        text = deep(90, &serde_json::to_string(&text).expect("a string"));
    }
    let mut v: Value = serde_json::from_str(&text).expect("90 deep");
    expand_json_text(&mut v);
    let expanded = v.to_string();
    assert_eq!(depth::depth(expanded.as_bytes()), MAX_JSON_DEPTH);
    assert!(expanded.contains(depth::TOO_DEEP), "{expanded}");
}

#[test]
fn diff_is_unified_and_labelled() {
    let d = diff(&json!({"a": 1}), &json!({"a": 2}), "expected", "got");
    assert!(d.contains("--- expected") && d.contains("+++ got"), "{d}");
    assert!(
        d.contains("-  \"a\": 1") && d.contains("+  \"a\": 2"),
        "{d}"
    );
}

#[test]
fn a_difference_as_json_tells_an_absent_side_from_null() {
    let d = differences(&json!({"a": null}), &json!({"b": null}), "");
    let text = serde_json::to_string(&d).expect("json");
    assert_eq!(text, r#"[{"path":"a","old":null},{"path":"b","new":null}]"#);
    let back: Vec<Difference> = serde_json::from_str(&text).expect("read back");
    assert_eq!(back, d);
    assert_eq!(back[0].old, Some(serde_json::Value::Null));
    assert_eq!(back[0].new, None);
}

#[test]
fn absent_params_and_empty_params_match_in_every_mode() {
    let bare = msg(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    let empty = msg(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}));
    let meta = msg(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list",
        "params": {"_meta": {"progressToken": 1}}}));
    let cursor = msg(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list",
        "params": {"cursor": "x"}}));
    let m = Matcher::default();
    assert!(m.matches(&bare, &empty) && m.matches(&empty, &bare));
    assert!(m.matches(&bare, &meta) && m.matches(&meta, &empty));
    assert!(!m.matches(&bare, &cursor) && !m.matches(&cursor, &empty));
}
