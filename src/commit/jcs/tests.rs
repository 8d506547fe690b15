//! The canonical form on the cases RFC 8785 spells out, and the ones it leaves to
//! ECMAScript and I-JSON. The RFC's own vectors, and the cross-check against Python's
//! `rfc8785` and node on real answers, are in tests/it/jcs.rs.

use super::*;

fn canon(text: &str) -> String {
    String::from_utf8(canonical_text(text).expect("canonical")).expect("UTF-8")
}

#[test]
fn numbers_are_written_as_ecmascript_writes_their_double() {
    for (text, want) in [
        ("-0", "0"),
        ("-0.0", "0"),
        ("0.0", "0"),
        ("1.0", "1"),
        ("4.50", "4.5"),
        ("2e-3", "0.002"),
        ("1e-6", "0.000001"),
        ("1e-7", "1e-7"),
        ("1e21", "1e+21"),
        ("1E30", "1e+30"),
        ("999999999999999999999", "1e+21"),
        ("100000000000000000000", "100000000000000000000"),
        ("333333333.33333329", "333333333.3333333"),
        ("5e-324", "5e-324"),
        ("1.7976931348623157e308", "1.7976931348623157e+308"),
        ("0.000000000000000000000000001", "1e-27"),
        // Integers are doubles: beyond 2^53 they round, ties to even.
        ("9007199254740992", "9007199254740992"),
        ("9007199254740993", "9007199254740992"),
        ("9007199254740995", "9007199254740996"),
        ("-9007199254740993", "-9007199254740992"),
        ("18446744073709551615", "18446744073709552000"),
        ("18446744073709551616", "18446744073709552000"),
        ("-9223372036854775808", "-9223372036854776000"),
        ("123456789012345678901234567890", "1.2345678901234568e+29"),
    ] {
        assert_eq!(canon(text), want, "{text}");
    }
}

#[test]
fn names_sort_by_utf16_code_units_not_by_code_points() {
    // U+1F600 is D83D DE00 in UTF-16: before U+FB33, though after it in UTF-8.
    let text = r#"{"\ufb33":4,"\ud83d\ude00":3,"\u20ac":1,"\r":2,"a":5,"":6,"\u0080":7,"ö":8}"#;
    assert_eq!(
        canon(text),
        "{\"\":6,\"\\r\":2,\"a\":5,\"\u{80}\":7,\"ö\":8,\"€\":1,\"😀\":3,\"\u{fb33}\":4}"
    );
    // Nested objects sort too; arrays keep their order.
    assert_eq!(
        canon(r#"{"b":[3,1,{"z":1,"y":2}],"a":{"d":1,"c":2}}"#),
        r#"{"a":{"c":2,"d":1},"b":[3,1,{"y":2,"z":1}]}"#
    );
}

#[test]
fn strings_escape_only_what_jcs_escapes() {
    let text = r#""\u0000\u001f\u007f\b\f\n\r\t\"\\\/\u2028\u00e9\ud83d\ude00<>&'""#;
    assert_eq!(
        canon(text),
        "\"\\u0000\\u001f\u{7f}\\b\\f\\n\\r\\t\\\"\\\\/\u{2028}é😀<>&'\""
    );
    assert_eq!(canon(r#""\u000F""#), r#""\u000f""#, "lowercase hex");
}

#[test]
fn whitespace_goes_and_literals_stay() {
    assert_eq!(
        canon(" {\n \"a\" : [ null , true , false ] ,\t\"b\": { } , \"c\" : [ ] }\r\n"),
        r#"{"a":[null,true,false],"b":{},"c":[]}"#
    );
    assert_eq!(canon("\"x\""), "\"x\"");
}

#[test]
fn what_i_json_forbids_has_no_commitment_and_says_why() {
    assert_eq!(
        canonical_text(r#"{"a":"\ud800"}"#),
        Err(Refusal::LoneSurrogate)
    );
    assert_eq!(
        canonical_text(r#"["\udc00x"]"#),
        Err(Refusal::LoneSurrogate)
    );
    // A pair is a character; an escaped backslash before `ud800` is text.
    assert_eq!(canon(r#""\ud83d\ude00""#), "\"😀\"");
    assert_eq!(canon(r#""\\ud800""#), r#""\\ud800""#);
    let Err(Refusal::Unreadable(why)) = canonical_text("[1e400]") else {
        panic!("1e400 is beyond a double")
    };
    assert!(why.contains("out of range"), "{why}");
    assert!(matches!(
        canonical_text("{\"a\":"),
        Err(Refusal::Unreadable(_))
    ));
    let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    assert_eq!(canonical_text(&deep), Err(Refusal::TooDeep(5000)));
    let just = format!(
        "{}{}",
        "[".repeat(crate::depth::MAX_JSON_DEPTH),
        "]".repeat(crate::depth::MAX_JSON_DEPTH)
    );
    assert_eq!(canon(&just), just);
    for refusal in [Refusal::LoneSurrogate, Refusal::TooDeep(5000)] {
        assert!(!refusal.to_string().is_empty());
    }
}

#[test]
fn a_commitment_is_the_sha256_of_the_canonical_form() {
    // sha256("{}") and sha256("{\"a\":1}"), as `printf '%s' … | sha256sum` gives them.
    assert_eq!(
        commitment(" { } ").expect("hash"),
        "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
    );
    assert_eq!(
        commitment("{\"a\":1.0}").expect("hash"),
        "015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862"
    );
    assert_eq!(commitment("{\"a\":1}"), commitment("{ \"a\" : 1e0 }"));
    assert_ne!(commitment("{\"a\":1}"), commitment("{\"a\":2}"));
}
