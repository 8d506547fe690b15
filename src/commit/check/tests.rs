//! Verdicts on hand-made tapes: each way a commitment can be checked or not.

use super::*;
use crate::tape::commit::Digest;

fn meta(dir: &str, conn: &str) -> String {
    format!(
        r#""_meta":{{"dir":"{dir}","server":"s","ts":"2026-01-01T00:00:00.000Z","conn":"{conn}"}}"#
    )
}

fn commit(id: u32, result: &str, body: &str, conn: &str) -> String {
    let hex = jcs::commitment(result).expect("hash");
    format!(
        r#"{{"jsonrpc":"2.0","method":"$commit","params":{{"id":{id},"tool":"t","alg":"jcs-sha256","sha256":"{hex}","body":"{body}"}},{}}}"#,
        meta("lifecycle", conn)
    )
}

fn answer(id: u32, result: &str, conn: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{result},{}}}"#,
        meta("recv", conn)
    )
}

fn tape(lines: &[String]) -> Tape {
    let text = lines.join("\n") + "\n";
    Tape::parse(std::path::Path::new("t.ndjson"), text.as_bytes()).expect("a tape")
}

const R: &str = r#"{"content":[{"type":"text","text":"hi"}]}"#;

#[test]
fn a_kept_answer_is_ok_and_a_changed_one_a_mismatch_at_its_line() {
    let t = tape(&[
        commit(1, R, "kept", "c-1"),
        answer(1, R, "c-1"),
        commit(2, R, "kept", "c-1"),
        answer(2, r#"{"content":[{"type":"text","text":"HI"}]}"#, "c-1"),
        // The same id on another connection is another call.
        commit(1, R, "kept", "c-2"),
        answer(
            1,
            r#"{ "content" : [ { "text" : "hi" , "type" : "text" } ] }"#,
            "c-2",
        ),
    ]);
    let v = verify(&t);
    assert_eq!(v.len(), 3);
    assert_eq!(v[0].1, Verdict::Ok(2));
    assert!(
        matches!(&v[1].1, Verdict::Mismatch(4, why) if why.contains("hashes to")),
        "{v:?}"
    );
    assert_eq!(
        v[2].1,
        Verdict::Ok(6),
        "whitespace and member order do not matter"
    );
    assert_eq!(v[1].0.line, 3);
    assert_eq!(v[1].0.entry.tool.as_deref(), Some("t"));
}

#[test]
fn what_cannot_be_checked_says_why() {
    let fault = format!(
        r#"{{"jsonrpc":"2.0","method":"$fault","params":{{"rule":"tools/call: tool-error x","index":1,"effect":"tool-error","id":3,"replaced":{{"jsonrpc":"2.0","id":3,"result":{R}}}}},{}}}"#,
        meta("lifecycle", "c-1")
    );
    let nohash = format!(
        r#"{{"jsonrpc":"2.0","method":"$commit","params":{{"id":5,"alg":"jcs-sha256","reason":"lone","body":"kept"}},{}}}"#,
        meta("lifecycle", "c-1")
    );
    let t = tape(&[
        commit(1, R, "redacted", "c-1"),
        answer(
            1,
            r#"{"content":[{"type":"text","text":"[REDACTED]"}]}"#,
            "c-1",
        ),
        commit(2, R, "dropped", "c-1"),
        answer(
            2,
            &crate::commit::body::dropped(
                R,
                &crate::tape::commit::CommitEntry {
                    id: Some("2".into()),
                    tool: None,
                    alg: ALG.into(),
                    digest: Digest::Sha256(jcs::commitment(R).expect("hash")),
                    body: Body::Dropped,
                },
            ),
            "c-1",
        ),
        // As the tap writes it: the fault as it happens, the $commit before the answer.
        fault,
        commit(3, R, "kept", "c-1"),
        answer(3, r#"{"content":[],"isError":true}"#, "c-1"),
        commit(4, R, "kept", "c-1"),
        nohash,
        answer(5, "{}", "c-1"),
    ]);
    let v = verify(&t);
    let why: Vec<String> = v
        .iter()
        .map(|(_, v)| match v {
            Verdict::Unchecked(why) => why.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert!(why[0].contains("redacted"), "{why:?}");
    assert!(why[1].contains("dropped"), "{why:?}");
    assert!(why[2].contains("fault"), "{why:?}");
    assert!(why[3].contains("not on the tape"), "{why:?}");
    assert!(why[4].contains("no commitment: lone"), "{why:?}");
}

#[test]
fn an_error_answer_or_a_dropped_result_naming_another_hash_is_a_mismatch() {
    let error = format!(
        r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":-1,"message":"x"}},{}}}"#,
        meta("recv", "c-1")
    );
    let other = r#"{"content":[],"_meta":{"mcptape/commit":{"alg":"jcs-sha256","sha256":"00"}}}"#;
    let t = tape(&[
        commit(1, R, "kept", "c-1"),
        error,
        commit(2, R, "dropped", "c-1"),
        answer(2, other, "c-1"),
    ]);
    let v = verify(&t);
    assert!(
        matches!(&v[0].1, Verdict::Mismatch(2, why) if why.contains("error")),
        "{v:?}"
    );
    assert!(
        matches!(&v[1].1, Verdict::Mismatch(4, why) if why.contains("00")),
        "{v:?}"
    );
}

#[test]
fn an_answer_given_matches_the_commitments_with_its_hash() {
    let t = tape(&[
        commit(1, R, "dropped", "c-1"),
        commit(2, "{}", "kept", "c-1"),
        commit(3, R, "kept", "c-2"),
    ]);
    let all = commitments(&t);
    assert_eq!(all.len(), 3);
    let hex = jcs::commitment(R).expect("hash");
    let hits: Vec<usize> = matching(&all, &hex).iter().map(|c| c.line).collect();
    assert_eq!(hits, [1, 3]);
    let upper: Vec<usize> = matching(&all, &hex.to_uppercase())
        .iter()
        .map(|c| c.line)
        .collect();
    assert_eq!(upper, [1, 3], "hex compares without regard to case");
    assert!(matching(&all, "ff").is_empty());

    assert_eq!(result_of(R), Ok(R));
    assert_eq!(
        result_of(&format!(r#"{{"jsonrpc":"2.0","id":1,"result":{R}}}"#)),
        Ok(R)
    );
    assert!(result_of(r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}"#).is_err());
    assert_eq!(result_of("[1]"), Ok("[1]"));
}

#[test]
fn a_replaced_or_missing_answer_is_not_checkable_and_never_paired_with_a_later_one() {
    let other = r#"{"tools":[]}"#;
    let t = tape(&[
        // The reviewer's tape: a fault withheld id 5's answer; id 5 was then reused.
        commit(5, R, "replaced", "c-1"),
        answer(5, other, "c-1"),
        commit(6, R, "missing", "c-1"),
        answer(6, other, "c-1"),
        // Uppercase hex is the same hash.
        commit(7, R, "kept", "c-1").replace(
            &jcs::commitment(R).expect("hash"),
            &jcs::commitment(R).expect("hash").to_uppercase(),
        ),
        answer(7, R, "c-1"),
    ]);
    let verdicts: Vec<Verdict> = verify(&t).into_iter().map(|(_, v)| v).collect();
    assert_eq!(
        verdicts,
        [unchecked(REPLACED), unchecked(MISSING), Verdict::Ok(6),]
    );
}
