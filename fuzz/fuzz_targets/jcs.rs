//! RFC 8785 canonical JSON (the commitments' form): any text is canonicalized or refused,
//! never a panic; a canonical form parses back to a value equal to the text's, and is its
//! own canonical form (a fixed point) with the same commitment.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(canonical) = mcptape::jcs::canonical_text(text) else {
        return;
    };
    let canonical = String::from_utf8(canonical).expect("the canonical form is UTF-8");
    let original: serde_json::Value = serde_json::from_str(text).expect("canonicalized, so JSON");
    let again: serde_json::Value =
        serde_json::from_str(&canonical).expect("the canonical form is JSON");
    assert_eq!(same(&original), same(&again), "{text} -> {canonical}");
    let twice = mcptape::jcs::canonical_text(&canonical).expect("canonical again");
    assert_eq!(canonical.as_bytes(), &twice[..], "a fixed point");
    assert_eq!(
        mcptape::jcs::commitment(text).ok(),
        mcptape::jcs::commitment(&canonical).ok()
    );
});

/// A value with every number as its double: JCS writes numbers as doubles, so `1` and
/// `1.0`, or an integer past 2^53 and its double, are the same value.
fn same(v: &serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::Number(n) => n
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map(serde_json::Value::Number)
            .unwrap_or(serde_json::Value::Null),
        serde_json::Value::Array(items) => serde_json::Value::Array(items.iter().map(same).collect()),
        serde_json::Value::Object(members) => {
            let mut sorted: Vec<(&String, &serde_json::Value)> = members.iter().collect();
            sorted.sort_by(|a, b| a.0.cmp(b.0));
            serde_json::Value::Object(sorted.into_iter().map(|(k, v)| (k.clone(), same(v))).collect())
        }
        other => other.clone(),
    }
}
