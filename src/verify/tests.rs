//! Unit tests of [`super`]: `verify`.

use serde_json::json;

use super::compare::compare;
use super::*;

#[test]
fn classes() {
    let ok = |t: &str| json!({"result": {"content": [{"type": "text", "text": t}]}});
    let tool_err = json!({"result": {"content": [], "isError": true}});
    let rpc_err = |c: i64, m: &str| json!({"error": {"code": c, "message": m}});
    let mut used = [];
    assert_eq!(compare(&ok("a"), &ok("a"), &[], &mut used).0, Class::Same);
    let (class, d) = compare(&ok("a"), &ok("b"), &[], &mut used);
    assert_eq!(class, Class::Changed);
    assert_eq!(d[0].path, "result.content.0.text");
    assert_eq!(
        compare(&ok("a"), &tool_err, &[], &mut used).0,
        Class::NewError
    );
    assert_eq!(
        compare(&rpc_err(-1, "x"), &ok("a"), &[], &mut used).0,
        Class::GoneError
    );
    let (class, d) = compare(&rpc_err(-1, "x"), &rpc_err(-2, "y"), &[], &mut used);
    assert_eq!((class, d[0].path.as_str()), (Class::Changed, "error.code"));
    let (class, d) = compare(&rpc_err(-1, "x"), &rpc_err(-1, "y"), &[], &mut used);
    assert_eq!(
        (class, d[0].path.as_str()),
        (Class::Changed, "error.message")
    );
}

#[test]
fn ignores_reach_into_json_text_and_are_counted() {
    let rec = json!({"result": {"content": [{"text": "{\"time\":\"1\",\"zone\":\"UTC\"}"}]}});
    let live = json!({"result": {"content": [{"text": "{\"time\":\"2\",\"zone\":\"UTC\"}"}]}});
    let globs = [
        Glob::parse("result.content.*.text.time").expect("glob"),
        Glob::parse("result.typo").expect("glob"),
    ];
    let mut used = [false, false];
    assert_eq!(compare(&rec, &live, &globs, &mut used).0, Class::Same);
    assert_eq!(used, [true, false]);
    let (_, d) = compare(&rec, &live, &[], &mut [][..].to_vec());
    assert_eq!(d[0].path, "result.content.0.text.time");
}

#[test]
fn redacted_recordings_match_anything_there() {
    let rec = json!({"result": {"token": "[REDACTED]", "text": "Bearer [REDACTED]!"}});
    let live = json!({"result": {"token": "abc", "text": "Bearer xyz!"}});
    assert_eq!(compare(&rec, &live, &[], &mut []).0, Class::Same);
}
