//! Unit tests of [`super`]: the scanner.

use super::*;

fn nested(levels: usize, open: &str, leaf: &str, close: &str) -> String {
    let mut s = String::with_capacity(levels * (open.len() + close.len()) + leaf.len());
    s.extend(std::iter::repeat_n(open, levels));
    s.push_str(leaf);
    s.extend(std::iter::repeat_n(close, levels));
    s
}

#[test]
fn text_that_is_not_json_never_panics() {
    // Found by the `redactor` fuzz target: a key followed by a multi-byte character
    // where the `:` should be made the walk cut the text inside that character.
    let r = Redactor::default();
    for text in [
        "{\"password\"\u{e9}}",
        "{\"password\"\u{e9}\"x\"}",
        "{\"a\":[1,{\"token\"",
        "[[[[",
        "{\"k\"",
        "{\"pass\":\u{e9}\u{e9}}",
        // Found by the fuzzer too: a text cut inside its last string, mid-character.
        "{\"conn\":\"833\u{316}",
    ] {
        let _ = r.message(text);
        let _ = r.findings(text);
    }
}

#[test]
fn a_million_levels_are_walked_without_the_call_stack() {
    let r = Redactor::default();
    let arrays = nested(1_000_000, "[", r#""Bearer abcdefghijklmnop1234""#, "]");
    let out = redact(&r, &arrays);
    assert_eq!(
        out,
        nested(1_000_000, "[", r#""Bearer [REDACTED]""#, "]"),
        "a secret by shape at the bottom is found"
    );
    // A recursive walk overflows its stack at about 15,000 levels.
    let objects = nested(200_000, r#"{"a":"#, r#"{"password":"hunter2"}"#, "}");
    assert_eq!(
        redact(&r, &objects),
        nested(200_000, r#"{"a":"#, r#"{"password":"[REDACTED]"}"#, "}")
    );
    let clean = nested(200_000, r#"{"a":["#, "1", "]}");
    assert!(matches!(redact(&r, &clean), Cow::Borrowed(_)));
}

#[test]
fn findings_deep_down_name_a_capped_path() {
    let r = Redactor::default();
    let text = nested(200_000, r#"{"a":"#, r#"{"token":"x"}"#, "}");
    let found = findings(&r, &text);
    assert_eq!(found.len(), 1);
    assert!(found[0].path.starts_with("a.a.a."), "{}", found[0].path);
    assert!(found[0].path.ends_with(".…"), "{}", found[0].path);
    assert_eq!(found[0].path.matches('a').count(), MAX_JSON_DEPTH);
    let shallow = findings(&r, r#"{"x":[{"token":"y"}]}"#);
    assert_eq!(shallow[0].path, "x[0].token");
}

#[test]
fn nested_credential_objects_stay_linear() {
    // Each level is a credential-named object whose `type` comes after a deep member:
    // telling schemas from secrets must not rescan what is below (quadratic: hours).
    let r = Redactor::default();
    let schemas = nested(50_000, r#"{"password":{"x":"#, "1", r#","type":"string"}}"#);
    assert!(matches!(redact(&r, &schemas), Cow::Borrowed(_)));
    let secrets = nested(100_000, r#"{"secret":"#, "7", "}");
    assert_eq!(
        redact(&r, &secrets),
        nested(100_000, r#"{"secret":"#, r#""[REDACTED]""#, "}")
    );
}

#[test]
fn container_ends_pair_brackets_outside_strings() {
    let text = r#"{"a":["]",{}],"b":"{"}"#;
    let ends = container_ends(text).expect("a short text");
    assert_eq!(ends, vec![(0, text.len() as u32), (5, 13), (10, 12)]);
    assert_eq!(scan_end(text.as_bytes(), 5), 13);
}
