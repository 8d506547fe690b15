//! Each rule on a small tape: findings at their lines, a policy refusal is no tool error.

use super::*;
use crate::check::rules::ToolGlob;

fn tape() -> Tape {
    let m = |dir: &str, ms: u32| {
        format!(
            r#""_meta":{{"dir":"{dir}","server":"s","conn":"c1","ts":"2026-12-01T10:00:00.{ms:03}Z"}}"#
        )
    };
    let lines = [
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"read_a"}},{}}}"#,
            m("send", 0)
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"content":[]}},{}}}"#,
            m("recv", 100)
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"delete_b"}},{}}}"#,
            m("send", 200)
        ),
        format!(
            r#"{{"jsonrpc":"2.0","method":"$policy/decision","params":{{"id":2,"method":"tools/call","tool":"delete_b","decision":"deny","rules":["r"],"resolution":"refused"}},{}}}"#,
            m("lifecycle", 200)
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":2,"result":{{"isError":true,"content":[]}},{}}}"#,
            m("recv", 200)
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/list",{}}}"#,
            m("send", 300)
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":3,"error":{{"code":-32601,"message":"no"}},{}}}"#,
            m("recv", 900)
        ),
        format!(
            r#"{{"jsonrpc":"2.0","method":"$transport/invalid","params":{{"dir":"recv","text":"oops"}},{}}}"#,
            m("lifecycle", 950)
        ),
        format!(
            r#"{{"jsonrpc":"2.0","method":"$tape/truncated","params":{{"maxBytes":10}},{}}}"#,
            m("lifecycle", 990)
        ),
    ];
    let text = lines.join("\n") + "\n";
    Tape::parse(std::path::Path::new("t.ndjson"), text.as_bytes()).expect("a valid tape")
}

fn glob(t: &str) -> ToolGlob {
    ToolGlob {
        text: t.into(),
        glob: crate::policy::args::glob(t).expect("a glob"),
    }
}

#[test]
fn every_rule_counts_what_it_names_at_its_line() {
    let t = tape();
    let x = Exchanges::of(&t);
    let scope = Scope::new(&t, &x, &[]).expect("scope");
    let rules = Rules {
        expect: vec![glob("read_*"), glob("write_*")],
        forbid: vec![glob("delete_*")],
        max_calls: Some(1),
        max_duration: Some(Duration::from_millis(500)),
        max_call_duration: Some(Duration::from_millis(300)),
        fail_on: vec![
            CheckFailOn::Error,
            CheckFailOn::ToolError,
            CheckFailOn::Invalid,
            CheckFailOn::Truncated,
            CheckFailOn::Fault,
            CheckFailOn::PolicyDenied,
        ],
        ..Rules::default()
    };
    let got: Vec<(String, bool, Vec<Option<usize>>)> = run(&scope, &rules, None)
        .expect("runs")
        .into_iter()
        .map(|v| {
            (
                v.title(),
                v.pass,
                v.findings.iter().map(|f| f.line).collect(),
            )
        })
        .collect();
    let want: Vec<(String, bool, Vec<Option<usize>>)> = vec![
        ("expect-tool read_*".into(), true, vec![]),
        ("expect-tool write_*".into(), false, vec![None]),
        ("forbid-tool delete_*".into(), false, vec![Some(3)]),
        ("max-calls 1".into(), false, vec![Some(3)]),
        ("max-duration 500ms".into(), false, vec![Some(9)]),
        ("max-call-duration 300ms".into(), false, vec![Some(6)]),
        // tools/list's error; the refused call is the policy's, not a tool error.
        ("fail-on error".into(), false, vec![Some(6)]),
        ("fail-on tool-error".into(), true, vec![]),
        ("fail-on invalid".into(), false, vec![Some(8)]),
        ("fail-on truncated".into(), false, vec![Some(9)]),
        ("fail-on fault".into(), true, vec![]),
        ("fail-on policy-denied".into(), false, vec![Some(4)]),
    ];
    assert_eq!(got, want);
    assert!(matches!(
        Scope::new(&t, &x, &["nope".into()]),
        Err(CheckError::NoServer { .. })
    ));
}
