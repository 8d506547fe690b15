//! A tape's listings: pages merged, the last listing wins, errors and refusals list
//! nothing, a kind never listed is `None`.

use super::*;

/// A tape of `lines` (JSON-RPC messages, each given its direction), one connection of
/// server `s`.
fn tape(lines: &[(&str, &str)]) -> Tape {
    let text: String = lines
        .iter()
        .map(|(dir, msg)| {
            let meta = format!(
                r#","_meta":{{"dir":"{dir}","server":"s","ts":"2026-12-01T00:00:00.000Z","conn":"c"}}}}"#
            );
            format!("{}{meta}\n", msg.strip_suffix('}').expect("an object"))
        })
        .collect();
    Tape::parse(Path::new("t.ndjson"), text.as_bytes()).expect("a tape")
}

fn names(side: &Side, family: Family) -> Option<Vec<String>> {
    side.listing(family)
        .map(|l| l.items.iter().map(|i| i.key.clone()).collect())
}

#[test]
fn pages_merge_and_the_last_listing_wins() {
    let t = tape(&[
        ("send", r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#),
        (
            "recv",
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"}],"nextCursor":"p2"}}"#,
        ),
        (
            "send",
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"p2"}}"#,
        ),
        (
            "recv",
            r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"b"}]}}"#,
        ),
        (
            "send",
            r#"{"jsonrpc":"2.0","id":3,"method":"prompts/list"}"#,
        ),
        (
            "recv",
            r#"{"jsonrpc":"2.0","id":3,"result":{"prompts":[{"name":"p"}]}}"#,
        ),
    ]);
    let side = Side::of_tape(t, None, None).expect("a side");
    assert_eq!(
        names(&side, Family::Tool),
        Some(vec!["a".into(), "b".into()])
    );
    assert_eq!(
        side.listing(Family::Tool).expect("tools").items[1].line,
        Some(4)
    );
    assert_eq!(names(&side, Family::Prompt), Some(vec!["p".into()]));
    assert_eq!(names(&side, Family::Resource), None, "never listed");

    let t = tape(&[
        ("send", r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#),
        (
            "recv",
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"old"}]}}"#,
        ),
        (
            "send",
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#,
        ),
        (
            "recv",
            r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"new"}]}}"#,
        ),
        // A refused listing lists nothing: the one before stands.
        ("send", r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#),
        (
            "recv",
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"busy"}}"#,
        ),
    ]);
    let side = Side::of_tape(t, None, None).expect("a side");
    assert_eq!(names(&side, Family::Tool), Some(vec!["new".into()]));
}

#[test]
fn a_listing_of_the_wrong_shape_is_an_error_naming_its_line() {
    let t = tape(&[
        (
            "send",
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/list"}"#,
        ),
        (
            "recv",
            r#"{"jsonrpc":"2.0","id":1,"result":{"resources":[{"name":"no uri"}]}}"#,
        ),
    ]);
    let err = Side::of_tape(t, None, None).expect_err("no uri");
    assert_eq!(
        err.to_string(),
        "the `resources/list` answer of tape `t.ndjson` at line 2 has an item 0 with no string `uri`"
    );
    let t = tape(&[
        (
            "send",
            r#"{"jsonrpc":"2.0","id":1,"method":"prompts/list"}"#,
        ),
        ("recv", r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
    ]);
    let err = Side::of_tape(t, None, None).expect_err("no prompts");
    assert!(
        err.to_string()
            .ends_with("at line 2 has no `prompts` member"),
        "{err}"
    );
}
