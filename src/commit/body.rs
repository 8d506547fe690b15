//! What the tape keeps in place of a result whose body is dropped (`--redact-results`):
//! a `tools/call` result that a client can still be given on replay — `content` empty,
//! `isError` as the server said it (when it said `true`), and `_meta` naming the
//! commitment:
//!
//! ```json
//! {"content":[],"_meta":{"mcptape/commit":{"alg":"jcs-sha256","sha256":"…"}}}
//! ```
//!
//! Everything else the server put in the result (its `content`, `structuredContent`,
//! its own `_meta`) is left out. The format is documented in docs/FORMAT.md (`$commit`).

use serde_json::{Map, Value, json};

use crate::tape::commit::{CommitEntry, Digest};

/// The `_meta` name of the marker a dropped result carries.
pub const MARKER: &str = "mcptape/commit";

/// The result the tape keeps for `result` (its raw text) when its body is dropped.
pub fn dropped(result: &str, entry: &CommitEntry) -> String {
    let mut marker = Map::new();
    marker.insert("alg".into(), json!(entry.alg));
    match &entry.digest {
        Digest::Sha256(hex) => marker.insert("sha256".into(), json!(hex)),
        Digest::None(reason) => marker.insert("reason".into(), json!(reason)),
    };
    stub(result, marker)
}

/// The result the tape keeps for `result` (its raw text) when its body is dropped and
/// there is no commitment to name: the marker says why (`{"reason": …}`).
pub fn withheld(result: &str, reason: &str) -> String {
    let mut marker = Map::new();
    marker.insert("reason".into(), json!(reason));
    stub(result, marker)
}

fn stub(result: &str, marker: Map<String, Value>) -> String {
    let mut kept = Map::new();
    kept.insert("content".into(), json!([]));
    if crate::message::raw_member(result, &["isError"]) == Some("true") {
        kept.insert("isError".into(), json!(true));
    }
    kept.insert("_meta".into(), json!({ MARKER: marker }));
    Value::Object(kept).to_string()
}

/// The marker of a result the tape kept without its body (`result._meta["mcptape/commit"]`),
/// when it is one.
pub fn marker(result: &Value) -> Option<&Value> {
    result.get("_meta")?.get(MARKER)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tape::commit::{ALG, Body};

    fn entry(digest: Digest) -> CommitEntry {
        CommitEntry {
            id: Some("3".into()),
            tool: Some("echo".into()),
            alg: ALG.into(),
            digest,
            body: Body::Dropped,
        }
    }

    #[test]
    fn a_dropped_result_keeps_no_content_but_its_error_flag_and_commitment() {
        let hex = "ab".repeat(32);
        let kept = dropped(
            r#"{"content":[{"type":"text","text":"secret"}],"isError":true,"structuredContent":{"x":1}}"#,
            &entry(Digest::Sha256(hex.clone())),
        );
        assert_eq!(
            kept,
            format!(
                r#"{{"content":[],"isError":true,"_meta":{{"mcptape/commit":{{"alg":"jcs-sha256","sha256":"{hex}"}}}}}}"#
            )
        );
        let value: Value = serde_json::from_str(&kept).expect("JSON");
        assert_eq!(marker(&value).expect("marker")["sha256"], json!(hex));

        let plain = dropped(
            r#"{"content":[],"isError":false}"#,
            &entry(Digest::None("why".into())),
        );
        assert_eq!(
            plain,
            r#"{"content":[],"_meta":{"mcptape/commit":{"alg":"jcs-sha256","reason":"why"}}}"#
        );
        assert_eq!(marker(&json!({"content": []})), None);
        assert_eq!(
            withheld(r#"{"tools":[{"name":"secret"}]}"#, "unattributed"),
            r#"{"content":[],"_meta":{"mcptape/commit":{"reason":"unattributed"}}}"#
        );
    }
}
