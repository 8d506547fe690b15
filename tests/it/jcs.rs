//! The cross-check of mcptape's RFC 8785 (JCS) canonical form — what every commitment
//! hashes — against two implementations that share no code with it: the PyPI package
//! `rfc8785` (tests/peers/jcs_canon.py) and node's own JSON (tests/peers/jcs_canon.mjs,
//! ECMAScript being what JCS is defined by). Byte for byte and hash for hash, on:
//!
//! - real answers: every message, and every `result` in it, of the tapes in
//!   recordings-example/ and tests/fixtures/ (server-everything's among them), and of a
//!   recording made here of server-everything through the Python SDK with `--commit`,
//!   whose `$commit` hashes are checked against Python's too;
//! - the RFC's vectors (tests/fixtures/jcs/: its authors' input/output pairs, and its
//!   Appendix B number table, whose expected texts are compared too);
//! - edge cases: integers past 2^53 and 2^64, `-0`, `1e21`, `1e-7`, non-BMP names and
//!   their UTF-16 order, controls in strings, nesting to mcptape's limit, and what I-JSON
//!   forbids (a lone surrogate, `1e400`), which all three must refuse.
//!
//! Python's rfc8785 refuses integers beyond ±(2^53−1) (IntegerDomainError): those are
//! compared against node only, and counted apart. The figures are printed (run with
//! `--nocapture` to see them).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use serde_json::value::RawValue;

use crate::support::*;

/// One text to canonicalize, and where it came from.
struct Case {
    from: String,
    text: String,
    /// The canonical form the RFC's vectors give, when they give one.
    expected: Option<Vec<u8>>,
}

/// What one implementation made of a text.
#[derive(Debug, Clone, PartialEq)]
enum Made {
    Canonical { bytes: Vec<u8>, sha256: String },
    Refused(String),
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}

/// The canonical forms a peer script makes of `texts`.
fn peer_made(program: &str, script: &str, texts: &[String]) -> Vec<Made> {
    let env = Env::new();
    let input = env.path("texts.json");
    std::fs::write(&input, serde_json::to_vec(texts).expect("json")).expect("write");
    let out = run(env.cmd(program).arg(peer(script)).arg(&input));
    assert!(out.status.success(), "{script}: {}", text(&out));
    let made: Vec<Value> = serde_json::from_slice(&out.stdout).expect("a JSON array");
    assert_eq!(made.len(), texts.len(), "{script}: one answer per text");
    made.into_iter()
        .map(|m| match (m["canonical"].as_str(), m["sha256"].as_str()) {
            (Some(c), Some(h)) => Made::Canonical {
                bytes: hex(c),
                sha256: h.to_owned(),
            },
            _ => Made::Refused(m["refused"].as_str().expect("a refusal").to_owned()),
        })
        .collect()
}

fn ours(text: &str) -> Made {
    match mcptape::jcs::canonical_text(text) {
        Ok(bytes) => {
            let sha256 = mcptape::jcs::commitment(text).expect("the same text hashes");
            assert_eq!(sha256, mcptape::jcs::sha256_hex(&bytes));
            Made::Canonical { bytes, sha256 }
        }
        Err(refusal) => Made::Refused(refusal.to_string()),
    }
}

/// The message (without `_meta`) and the `result` text of every line of a tape.
fn tape_cases(path: &Path, label: &str, cases: &mut Vec<Case>) -> (usize, usize) {
    let tape = mcptape::Tape::load(path).expect("a tape");
    let (mut messages, mut results) = (0, 0);
    for e in &tape.entries {
        let text = e.message.text();
        cases.push(Case {
            from: format!("{label}:{} message", e.line),
            text: text.to_owned(),
            expected: None,
        });
        messages += 1;
        let members: BTreeMap<String, Box<RawValue>> =
            serde_json::from_str(text).expect("an object");
        if let Some(result) = members.get("result") {
            cases.push(Case {
                from: format!("{label}:{} result", e.line),
                text: result.get().to_owned(),
                expected: None,
            });
            results += 1;
        }
    }
    (messages, results)
}

/// server-everything through the Python SDK, recorded with `--commit`: real answers of
/// many kinds (text, an image, annotations, resource links and references, structured
/// content, progress).
fn record_everything_with_commit(env: &Env) -> std::path::PathBuf {
    let calls = [
        r#"echo:{"message":"héllo wörld ✓ 😀 \"quoted\" \\ back\tslash"}"#,
        r#"get-sum:{"a":0.1,"b":0.2}"#,
        r#"get-sum:{"a":9007199254740991,"b":2}"#,
        "get-tiny-image",
        r#"get-annotated-message:{"messageType":"success","includeImage":true}"#,
        r#"get-annotated-message:{"messageType":"error"}"#,
        r#"get-resource-links:{"count":10}"#,
        r#"get-resource-reference:{"resourceType":"Blob","resourceId":2}"#,
        r#"get-structured-content:{"location":"Chicago"}"#,
        r#"trigger-long-running-operation:{"duration":0.2,"steps":2}"#,
    ];
    let out = run(env
        .mcptape(["record", "everything", "--commit", "--", &python()])
        .arg(peer("py_calls.py"))
        .args(calls)
        .arg("--")
        .args(proxy_argv("everything", &everything_server())));
    assert!(out.status.success(), "{}", text(&out));
    env.tape("everything")
}

fn edge_cases() -> Vec<(&'static str, String)> {
    let deep = |n: usize| format!("{}{{\"x\":-0.0}}{}", "[".repeat(n - 1), "]".repeat(n - 1));
    let mut cases: Vec<(&str, String)> = [
        ("2^53-1", "9007199254740991"),
        ("2^53", "9007199254740992"),
        ("2^53+1", "9007199254740993"),
        ("-(2^53+1)", "-9007199254740993"),
        ("2^64-1", "18446744073709551615"),
        ("2^64", "18446744073709551616"),
        ("-2^63", "-9223372036854775808"),
        ("30 digits", "123456789012345678901234567890"),
        ("a big integer among others", "[1,9007199254740993,{\"n\":18446744073709551616}]"),
        ("-0", "-0"),
        ("-0.0", "-0.0"),
        ("0e10", "0e10"),
        ("1e21", "1e21"),
        ("1e20", "1e20"),
        ("21 nines", "999999999999999999999"),
        ("1e-7", "1e-7"),
        ("1e-6", "1e-6"),
        ("0.1+0.2", "0.30000000000000004"),
        ("min subnormal", "5e-324"),
        ("min normal", "2.2250738585072014e-308"),
        ("max double", "1.7976931348623157e308"),
        ("underflow", "123.456e-789"),
        ("exponent spellings", "[1E+2,1e+2,1.0e2,100.000]"),
        ("1e400", "1e400"),
        ("-1e400", "[-1e400]"),
        (
            "non-BMP and high-BMP names",
            r#"{"\ud83d\ude00":1,"\ufb33":2,"\uffff":3,"\ud800\udc00":4,"a":5,"\u00e9":6,"e\u0301":7}"#,
        ),
        ("names that differ in UTF-8 and UTF-16 order", "{\"\u{ff61}\":1,\"\u{10000}\":2,\"\u{e000}\":3}"),
        (
            "controls in strings",
            r#"["\u0000\u0001\u0007\u001f", "\u007f\u0080\u009f", "\b\t\n\f\r", "\"\\\/", "\u2028\u2029\ufeff"]"#,
        ),
        ("a control in a name", r#"{"\u0001":1,"\u001f":2,"\t":3}"#),
        ("unnormalized unicode", r#""A\u030a and \u00c5""#),
        ("duplicate names: the last wins", r#"{"a":1,"b":2,"a":3}"#),
        ("empty containers", r#"{"":{},"a":[],"b":[{}],"c":""}"#),
        ("literals", "[true,false,null]"),
        ("a lone high surrogate", r#""\ud800""#),
        ("a lone low surrogate in a name", r#"{"\udc00":1}"#),
        ("a high surrogate not followed by a low one", r#"["\ud83dx"]"#),
    ]
    .into_iter()
    .map(|(what, text)| (what, text.to_owned()))
    .collect();
    cases.push(("nested 100 levels (mcptape's limit)", deep(100)));
    cases.push(("nested 50 levels", deep(50)));
    cases
}

#[test]
fn the_canonical_form_matches_python_rfc8785_and_node_byte_for_byte_on_real_answers_and_the_rfc_vectors()
 {
    let env = Env::new();
    let mut cases = Vec::new();

    // Real answers.
    let mut tapes: Vec<std::path::PathBuf> = Vec::new();
    for dir in [recordings_example(), samples()] {
        let mut found: Vec<_> = std::fs::read_dir(&dir)
            .expect("dir")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "ndjson"))
            .collect();
        found.sort();
        tapes.extend(found);
    }
    assert!(tapes.len() >= 5, "{tapes:?}");
    let (mut messages, mut results) = (0, 0);
    for tape in &tapes {
        let name = tape
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        let (m, r) = tape_cases(tape, &name, &mut cases);
        messages += m;
        results += r;
    }
    let recorded = record_everything_with_commit(&env);
    let (m, r) = tape_cases(&recorded, "recorded everything.ndjson", &mut cases);
    messages += m;
    results += r;
    let real = cases.len();

    // The RFC's vectors.
    let jcs = samples().join("jcs");
    let mut samples_n = 0;
    for name in [
        "arrays",
        "french",
        "structures",
        "unicode",
        "values",
        "weird",
    ] {
        let input = std::fs::read_to_string(jcs.join(format!("input/{name}.json"))).expect("input");
        let output = std::fs::read(jcs.join(format!("output/{name}.json"))).expect("output");
        cases.push(Case {
            from: format!("RFC 8785 test data {name}.json"),
            text: input,
            expected: Some(output),
        });
        samples_n += 1;
    }
    let table = std::fs::read_to_string(jcs.join("numbers.csv")).expect("numbers.csv");
    let mut numbers = 0;
    for row in table.lines() {
        let cols: Vec<&str> = row.splitn(3, ',').collect();
        let bits = u64::from_str_radix(cols[0], 16).expect("hex bits");
        let double = f64::from_bits(bits);
        if !double.is_finite() {
            assert_eq!(cols[1], "", "{row}: JSON has no text for it");
            continue;
        }
        // Rust's shortest round-trip spelling of the double is the input.
        cases.push(Case {
            from: format!("RFC 8785 Appendix B {}", cols[0]),
            text: format!("{double:?}"),
            expected: Some(cols[1].as_bytes().to_vec()),
        });
        numbers += 1;
    }

    let edges = edge_cases();
    let edge_n = edges.len();
    for (what, text) in edges {
        cases.push(Case {
            from: format!("edge case: {what}"),
            text,
            expected: None,
        });
    }

    let texts: Vec<String> = cases.iter().map(|c| c.text.clone()).collect();
    let by_rfc8785 = peer_made(&python(), "jcs_canon.py", &texts);
    let node = peer_made("node", "jcs_canon.mjs", &texts);

    let mut problems = Vec::new();
    let (mut by_python, mut by_node_only, mut refused_by_all, mut node_agrees) = (0, 0, 0, 0);
    for (i, case) in cases.iter().enumerate() {
        let mine = ours(&case.text);
        let from = &case.from;
        if let Made::Canonical { bytes, .. } = &mine {
            // A canonical form is its own canonical form, with the same commitment.
            let again = ours(std::str::from_utf8(bytes).expect("UTF-8"));
            if again != mine {
                problems.push(format!("{from}: not a fixed point: {again:?}"));
            }
        }
        if let (Some(want), Made::Canonical { bytes, .. }) = (&case.expected, &mine)
            && bytes != want
        {
            problems.push(format!(
                "{from}: mcptape {:?}, the RFC {:?}",
                String::from_utf8_lossy(bytes),
                String::from_utf8_lossy(want)
            ));
        }
        if case.expected.is_some() && matches!(mine, Made::Refused(_)) {
            problems.push(format!("{from}: mcptape refused a vector: {mine:?}"));
        }
        match (&mine, &by_rfc8785[i]) {
            (Made::Refused(_), Made::Refused(_)) => {
                if matches!(node[i], Made::Refused(_)) {
                    refused_by_all += 1;
                } else {
                    problems.push(format!("{from}: node did not refuse it: {:?}", node[i]));
                }
                continue;
            }
            (_, Made::Refused(why)) if why.starts_with("IntegerDomainError") => {
                // Python's rfc8785 keeps to ±(2^53−1): node decides.
                if node[i] == mine {
                    by_node_only += 1;
                } else {
                    problems.push(format!(
                        "{from}: mcptape {mine:?}, node {:?} (python: {why})",
                        node[i]
                    ));
                }
                continue;
            }
            (a, b) if a == b => by_python += 1,
            (a, b) => problems.push(format!(
                "{from}: mcptape {a:?}, python {b:?} (text {:?})",
                case.text
            )),
        }
        if node[i] == mine {
            node_agrees += 1;
        } else {
            problems.push(format!("{from}: mcptape {mine:?}, node {:?}", node[i]));
        }
    }

    // The recording's own commitments, hash for hash against Python's.
    let entries = tape_entries(&recorded);
    let lines: Vec<String> = std::fs::read_to_string(&recorded)
        .expect("tape")
        .lines()
        .map(str::to_owned)
        .collect();
    let mut committed = Vec::new();
    let mut answers = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        if e["method"] != "$commit" {
            continue;
        }
        let answer = &entries[i + 1];
        assert_eq!(
            answer["id"], e["params"]["id"],
            "the answer follows its $commit"
        );
        assert_eq!(e["params"]["body"], "kept");
        let members: BTreeMap<String, Box<RawValue>> =
            serde_json::from_str(&lines[i + 1]).expect("json");
        answers.push(members["result"].get().to_owned());
        committed.push(e["params"]["sha256"].as_str().expect("a hash").to_owned());
    }
    let commits = committed.len();
    for (made, hash) in peer_made(&python(), "jcs_canon.py", &answers)
        .into_iter()
        .zip(&committed)
    {
        let Made::Canonical { sha256, .. } = made else {
            panic!("python refused a real answer")
        };
        assert_eq!(&sha256, hash);
    }
    assert!(commits >= 10, "a $commit per call: {commits}");

    println!(
        "jcs cross-check: {} texts — {real} from {} real tapes ({messages} messages, {results} \
         results), {samples_n} RFC 8785 test-data samples, {numbers} Appendix B numbers, \
         {edge_n} edge cases",
        cases.len(),
        tapes.len() + 1,
    );
    println!(
        "jcs cross-check: {by_python} equal to Python rfc8785 0.1.4 byte for byte and hash for \
         hash (node agrees on all {node_agrees}); {by_node_only} texts holding integers beyond ±(2^53−1), \
         which rfc8785 refuses, equal to node's; {refused_by_all} refused by all three (lone \
         surrogates, 1e400); {commits} recorded $commit hashes equal to Python's; {} problems",
        problems.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        by_node_only >= 5 && refused_by_all >= 5,
        "the edge cases ran"
    );
}
