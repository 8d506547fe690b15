use serde_json::{Value, json};

use super::*;
use crate::policy::index::ToolInfo;
use crate::policy::rule::Call;

fn policy(text: &str) -> Policy {
    parse(text, "--policy `p.toml`").unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn error(text: &str) -> String {
    match parse(text, "p") {
        Ok(p) => panic!("parsed: {p:?}"),
        Err(e) => e,
    }
}

fn call<'a>(tool: &'a str, args: &'a Value, listed: Option<&'a ToolInfo>) -> Call<'a> {
    Call {
        server: "fs",
        method: "tools/call",
        tool: Some(tool),
        arguments: args,
        listed,
    }
}

fn decided(p: &Policy, c: &Call<'_>) -> (Decision, Vec<String>) {
    let r = p.decide(c).expect("gated");
    (r.decision, r.rules)
}

const EXAMPLE: &str = r#"
default = "allow"

[[rule]]
id = "no-destructive"
decision = "deny"
annotations = { destructiveHint = true }

[[rule]]
id = "etc"
decision = "ask"
tool = ["read_*", "list_directory"]
args = { path = { glob = "/etc/*" } }

[[rule]]
id = "big"
decision = "dry-run"
server = "f?"
args.options.size = { gt = 100, le = 1000 }
args."items[*].name" = "x"
"#;

#[test]
fn the_first_matching_rule_decides_else_the_default() {
    let p = policy(EXAMPLE);
    assert_eq!(p.default, Decision::Allow);
    assert_eq!(p.rules.len(), 3);
    assert_eq!(p.rules[1].line, 9);
    let ro = ToolInfo::of(&json!({"name": "read_file", "annotations": {"readOnlyHint": true}}));
    let etc = json!({"path": "/etc/passwd"});
    assert_eq!(
        decided(&p, &call("read_file", &etc, Some(&ro))),
        (Decision::Ask, vec!["etc".to_owned()])
    );
    let tmp = json!({"path": "/tmp/x"});
    assert_eq!(
        decided(&p, &call("read_file", &tmp, Some(&ro))),
        (Decision::Allow, vec![])
    );
    // Never listed: the spec's defaults, so destructive.
    assert_eq!(
        decided(&p, &call("read_file", &tmp, None)).0,
        Decision::Deny
    );
    let big = json!({"options": {"size": 500}, "items": [{"name": "a"}, {"name": "x"}]});
    assert_eq!(
        decided(&p, &call("anything", &big, Some(&ro))).0,
        Decision::DryRun
    );
    let huge = json!({"options": {"size": 5000}, "items": [{"name": "x"}]});
    assert_eq!(
        decided(&p, &call("anything", &huge, Some(&ro))).0,
        Decision::Allow
    );
}

#[test]
fn only_tools_call_is_gated_unless_a_rule_names_the_method() {
    let p = policy(EXAMPLE);
    let other = Call {
        method: "resources/read",
        ..call("x", &Value::Null, None)
    };
    assert!(p.decide(&other).is_none());
    let p = policy(
        "default = \"deny\"\n[[rule]]\nid = \"safe-reads\"\ndecision = \"allow\"\nmethod = \"resources/*\"\nargs = { uri = { regex = '^file:///safe/' } }\n",
    );
    let safe = json!({"uri": "file:///safe/a"});
    let read = Call {
        method: "resources/read",
        ..call("x", &safe, None)
    };
    assert_eq!(decided(&p, &read).0, Decision::Allow);
    let elsewhere = json!({"uri": "file:///etc/a"});
    let read = Call {
        method: "resources/read",
        ..call("x", &elsewhere, None)
    };
    assert_eq!(decided(&p, &read), (Decision::Deny, vec![]));
    let prompt = Call {
        method: "prompts/get",
        ..call("x", &safe, None)
    };
    assert!(p.decide(&prompt).is_none());
}

#[test]
fn listed_and_annotation_matchers_read_the_index() {
    let p = policy(
        "default = \"allow\"\n[[rule]]\nid = \"unknown\"\ndecision = \"deny\"\nlisted = false\n[[rule]]\nid = \"writes\"\ndecision = \"ask\"\nannotations = { readOnlyHint = false, openWorldHint = false }\n",
    );
    let args = json!({});
    assert_eq!(decided(&p, &call("t", &args, None)).1, ["unknown"]);
    let closed = ToolInfo::of(&json!({"name": "t", "annotations": {"openWorldHint": false}}));
    assert_eq!(decided(&p, &call("t", &args, Some(&closed))).1, ["writes"]);
    let open = ToolInfo::of(&json!({"name": "t"}));
    assert_eq!(
        decided(&p, &call("t", &args, Some(&open))).1,
        Vec::<String>::new()
    );
}

#[test]
fn bad_files_are_errors_that_name_the_line_and_the_rule() {
    let cases = [
        ("", "`default` is missing"),
        (
            "default = \"maybe\"",
            "line 1: `default`: `maybe` is not a decision: allow, deny, ask, dry-run",
        ),
        (
            "default = \"allow\"\nunlisted = \"deny\"",
            "line 2: unknown key `unlisted`",
        ),
        (
            "default = \"allow\"\n[[rule]]\ndecision = \"deny\"",
            "line 2: rule 1 has no `id`",
        ),
        (
            "default = \"allow\"\n[[rule]]\nid = \"a\"",
            "line 2: rule `a` has no `decision`",
        ),
        (
            "default = \"allow\"\n[[rule]]\nid = \"a\"\ndecision = \"deny\"\ntools = \"x\"",
            "line 5: rule `a`: `tools`: unknown key",
        ),
        (
            "default = \"allow\"\n[[rule]]\nid = \"a\"\ndecision = \"deny\"\n[[rule]]\nid = \"a\"\ndecision = \"allow\"",
            "line 5: rule `a`: the id is already the rule's of line 2",
        ),
        (
            "default = \"allow\"\n[[rule]]\nid = \"a\"\ndecision = \"deny\"\ntool = \"[x\"",
            "line 5: rule `a`: `tool`: `[x` is not a glob",
        ),
        (
            "default = \"allow\"\n[[rule]]\nid = \"a\"\ndecision = \"deny\"\nargs = { p = { regex = \"(\" } }",
            "line 5: rule `a`: `args`: `p`: `regex`: `(` is not a regex",
        ),
        (
            "default = \"allow\"\n[[rule]]\nid = \"a\"\ndecision = \"deny\"\nargs = { p = { glob = \"x\", deep = 1 } }",
            "`p`: a table of tests",
        ),
        (
            "default = \"allow\"\n[[rule]]\nid = \"a\"\ndecision = \"deny\"\nannotations = { destructive = true }",
            "`destructive` is not an annotation",
        ),
        (
            "default = \"allow\"\n[[rule]]\nid = \"a\"\ndecision = \"deny\"\nargs = { \"x[y]\" = 1 }",
            "`[y]`: an index",
        ),
        (
            "default = \"allow\"\n[[rule]]\nid = \"a\"\ndecision = \"deny\"\nargs = { path = { glb = \"/etc/*\" } }",
            "`path.glb`: `glb` is not a test; did you mean `glob`?",
        ),
        (
            "default = \"allow\"\n[[rule]]\nid = \"a\"\ndecision = \"deny\"\nargs.options.count = { Gt = 1000 }",
            "`options.count.Gt`: `Gt` is not a test; did you mean `gt`?",
        ),
        (
            "default = \"allow\"\n[[rule]]\nid = \"a\"\ndecision = \"deny\"\nargs = { p = { equal = 1 } }",
            "did you mean `equals`?",
        ),
        (
            "default = \"allow\"\nrule = 3",
            "line 2: `rule` is a list of [[rule]] tables",
        ),
        ("default = \"allow\"\n[[rule]\n", "line 2: not TOML"),
        (
            "default = \"allow\"\n[[rule]]\nid = \"a\"\ndecision = \"deny\"\nargs = { when = 1979-05-27 }",
            "a date-time is no JSON value",
        ),
    ];
    for (text, want) in cases {
        let got = error(text);
        assert!(
            got.contains(want),
            "{text:?}\n  got:  {got}\n  want: {want}"
        );
    }
}

#[test]
fn nested_paths_that_look_nothing_like_tests_still_load() {
    // `options = { recursive = true, depth = 3 }` is two paths; an argument named like a
    // test is one quoted key.
    let p = policy(
        "default = \"allow\"\n[[rule]]\nid = \"a\"\ndecision = \"deny\"\nargs = { options = { recursive = true, depth = 3 } }\n[[rule]]\nid = \"b\"\ndecision = \"deny\"\nargs = { 'q.glb' = 1 }\n",
    );
    let both = json!({"options": {"recursive": true, "depth": 3}});
    assert_eq!(decided(&p, &call("t", &both, None)).1, ["a"]);
    let one = json!({"options": {"recursive": true, "depth": 2}});
    assert_eq!(decided(&p, &call("t", &one, None)).1, Vec::<String>::new());
    let glb = json!({"q": {"glb": 1}});
    assert_eq!(decided(&p, &call("t", &glb, None)).1, ["b"]);
}

#[test]
fn files_that_are_missing_not_regular_or_too_large_are_refused_before_they_are_opened() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("none.toml");
    let e = Policy::load(&missing).expect_err("missing").to_string();
    assert!(
        e.contains("cannot read --policy `") && e.contains("none.toml"),
        "{e}"
    );
    let fifo = dir.path().join("fifo.toml");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).expect("mkfifo");
    let e = Policy::load(&fifo).expect_err("fifo").to_string();
    assert!(e.contains("not a regular file"), "{e}");
    let big = dir.path().join("big.toml");
    std::fs::write(&big, "#".repeat(MAX_FILE_BYTES as usize + 1)).expect("write");
    let e = Policy::load(&big).expect_err("big").to_string();
    assert!(e.contains("larger than"), "{e}");
    let bin = dir.path().join("bin.toml");
    std::fs::write(&bin, b"default = \"\xff\"").expect("write");
    let e = Policy::load(&bin).expect_err("bin").to_string();
    assert!(e.contains("not UTF-8"), "{e}");
}

#[test]
fn many_rules_parse_in_linear_time_and_too_many_are_refused() {
    let rules = |n: usize| {
        let mut text = String::from("default = \"deny\"\n");
        for i in 0..n {
            text.push_str(&format!(
                "[[rule]]\nid = \"r{i}\"\ndecision = \"allow\"\ntool = \"t{i}\"\n"
            ));
        }
        text
    };
    let p = policy(&rules(1000));
    assert_eq!(p.rules.len(), 1000);
    assert_eq!(p.rules[999].line, 2 + 4 * 999);
    assert!(error(&rules(MAX_RULES + 1)).contains("at most"));
}

#[test]
fn deep_or_odd_values_never_panic() {
    let deep = format!(
        "default = \"allow\"\n[[rule]]\nid = \"a\"\ndecision = \"deny\"\nargs = {{ p = {{ equals = {}1{} }} }}",
        "[".repeat(200),
        "]".repeat(200)
    );
    let _ = parse(&deep, "p");
    let nan = "default = \"allow\"\n[[rule]]\nid = \"a\"\ndecision = \"deny\"\nargs = { p = { gt = nan } }";
    assert!(error(nan).contains("a finite number"));
    let object = "default = \"allow\"\n[[rule]]\nid = \"a\"\ndecision = \"deny\"\nargs = { p = { equals = { a = [1, 2.0] } } }";
    let p = policy(object);
    let v = json!({"p": {"a": [1.0, 2]}});
    assert_eq!(decided(&p, &call("t", &v, None)).0, Decision::Deny);
}
