//! Unit tests of [`super`]: the recorded client answers to server requests.

use std::path::Path;

use super::*;
use crate::tape::Tape;

fn tape(lines: &[&str]) -> Tape {
    Tape::parse(Path::new("t.ndjson"), lines.join("\n").as_bytes()).expect("tape")
}

#[test]
fn answers_come_by_method_in_recorded_order_with_the_live_id() {
    let t = tape(&[
        r#"{"jsonrpc":"2.0","id":"s1","method":"roots/list","_meta":{"dir":"recv","server":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":"s1","result":{"roots":[1]},"_meta":{"dir":"send","server":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":"s2","method":"sampling/createMessage","_meta":{"dir":"recv","server":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":"s3","method":"roots/list","_meta":{"dir":"recv","server":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":"s3","result":{"roots":[2]},"_meta":{"dir":"send","server":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":"s2","error":{"code":-1,"message":"no"},"_meta":{"dir":"send","server":"x"}}"#,
    ]);
    let entries: Vec<&Entry> = t.entries.iter().collect();
    let mut answers = Answers::new(&entries);
    let first = answers.take("roots/list", "7").expect("first roots answer");
    assert!(
        first.contains(r#""id":7"#) && first.contains("[1]"),
        "{first}"
    );
    let second = answers
        .take("roots/list", "8")
        .expect("second roots answer");
    assert!(
        second.contains(r#""id":8"#) && second.contains("[2]"),
        "{second}"
    );
    assert_eq!(answers.take("roots/list", "9"), None);
    let sampled = answers
        .take("sampling/createMessage", "\"a\"")
        .expect("error answer");
    assert!(
        sampled.contains(r#""id":"a""#) && sampled.contains("-1"),
        "{sampled}"
    );
    assert_eq!(answers.take("elicitation/create", "1"), None);
}
