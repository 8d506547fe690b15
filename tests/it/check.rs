//! `mcptape check`: every rule passes and fails on real recordings — server-everything
//! through the Python SDK client, the policy server behind a gate, the example server
//! with injected faults, a tape cut by `--max-bytes`, and a verify receipt — with each
//! report format parsed back and the exit codes (0 pass, 1 a rule failed, 2 usage).
//! The recordings are shared with tests/it/export.rs.

use std::path::PathBuf;
use std::process::Output;

use serde_json::Value;

use crate::support::*;

/// A real server-everything session (stdio, the Python SDK client's `replayable`
/// scenario): five tools/calls (echo, a long one with progress, sampling, two tool
/// errors), tools/list, and the server's sampling request.
pub(crate) fn everything(env: &Env) -> PathBuf {
    record_everything(env, "ev");
    env.tape("ev")
}

/// A gated session: the Python SDK agent against the policy server behind `--policy`
/// (a denied delete, an echo, a dry-run write, an unlisted tool denied).
pub(crate) fn gated(env: &Env) -> PathBuf {
    let policy = env.path("policy.toml");
    std::fs::write(&policy, crate::policy::POLICY).expect("write the policy");
    let log = env.path("server.log");
    let plan = r#"[["delete_file",{"path":"/important"}],["echo",{"message":"after"}],["write_file",{"path":"/tmp/a","content":"hi"}],["nothere",{}]]"#;
    let mut proxy = proxy_argv(
        "fs",
        &[
            python(),
            peer("py_policy_server.py"),
            "stdio".into(),
            log.display().to_string(),
        ],
    );
    proxy.splice(2..2, ["--policy".to_owned(), policy.display().to_string()]);
    let mut record = env.mcptape(["record", "gated", "--"]);
    record
        .arg(python())
        .arg(peer("py_policy_client.py"))
        .arg(plan)
        .arg("--")
        .args(proxy);
    let out = run(record);
    assert!(out.status.success(), "{}", text(&out));
    env.tape("gated")
}

/// The example server behind two injected faults: the second echo answered with a
/// JSON-RPC error, the third with a tool error.
pub(crate) fn faulty(env: &Env) -> PathBuf {
    let out = run(env
        .mcptape(["record", "faulty"])
        .args([
            "--fault",
            r#"tools/call name=echo nth=2: error -32000 "rate limited""#,
            "--fault",
            "tools/call name=echo nth=3: tool-error disk full",
            "--",
        ])
        .arg(python())
        .args([peer("py_faults.py"), "3".into(), "--".into()])
        .args(proxy_argv("example", &[example_server()])));
    assert!(out.status.success(), "{}", text(&out));
    env.tape("faulty")
}

/// A server-everything echo session cut by `record --max-bytes 1500`.
pub(crate) fn truncated(env: &Env) -> PathBuf {
    let out = run(env
        .mcptape(["record", "cut", "--max-bytes", "1500", "--"])
        .args([python(), peer("py_client.py"), "echo".into()])
        .args(["--message", "hello", "--"])
        .args(proxy_argv("everything", &everything_server())));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    env.tape("cut")
}

fn check(env: &Env, tape: &std::path::Path, args: &[&str]) -> Output {
    run(env
        .mcptape(["check", &tape.display().to_string()])
        .args(args))
}

fn json_report(env: &Env, tape: &std::path::Path, args: &[&str]) -> (Option<i32>, Value) {
    let out = check(env, tape, &[args, &["--format", "json"]].concat());
    let doc = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(&out)));
    (out.status.code(), doc)
}

/// The rules of a JSON report: (rule title, pass, count).
fn rules(doc: &Value) -> Vec<(String, bool, u64)> {
    doc["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .map(|r| {
            (
                format!(
                    "{} {}",
                    r["rule"].as_str().expect("the shape this test expects"),
                    r["arg"].as_str().expect("the shape this test expects")
                ),
                r["pass"].as_bool().expect("the shape this test expects"),
                r["count"].as_u64().expect("the shape this test expects"),
            )
        })
        .collect()
}

/// The tape lines of a tape's entries that match `pred`.
fn lines_where(tape: &std::path::Path, pred: impl Fn(&Value) -> bool) -> Vec<u64> {
    tape_entries(tape)
        .iter()
        .enumerate()
        .filter(|(_, e)| pred(e))
        .map(|(i, _)| i as u64 + 1)
        .collect()
}

fn finding_lines(doc: &Value, rule: usize) -> Vec<u64> {
    doc["rules"][rule]["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| f["line"].as_u64().expect("a line"))
        .collect()
}

#[test]
fn the_rules_pass_and_fail_on_a_real_everything_session() {
    let env = Env::new();
    let tape = everything(&env);
    let (code, doc) = json_report(
        &env,
        &tape,
        &[
            "--expect-tool",
            "echo",
            "--expect-tool",
            "trigger-*",
            "--expect-tool",
            "never-*",
            "--forbid-tool",
            "delete*",
            "--forbid-tool",
            "get-sum",
            "--max-calls",
            "4",
            "--max-duration",
            "1h",
            "--max-call-duration",
            "1h",
            "--fail-on",
            "error,tool-error",
            "--fail-on",
            "invalid,truncated,fault,policy-denied",
        ],
    );
    assert_eq!(code, Some(1), "{doc:#}");
    assert_eq!(
        rules(&doc),
        [
            ("expect-tool echo".to_owned(), true, 1),
            ("expect-tool trigger-*".to_owned(), true, 2),
            ("expect-tool never-*".to_owned(), false, 0),
            ("forbid-tool delete*".to_owned(), true, 0),
            ("forbid-tool get-sum".to_owned(), false, 1),
            ("max-calls 4".to_owned(), false, 5),
            (
                "max-duration 1h".to_owned(),
                true,
                doc["rules"][6]["count"]
                    .as_u64()
                    .expect("the shape this test expects")
            ),
            ("max-call-duration 1h".to_owned(), true, 0),
            ("fail-on error".to_owned(), true, 0),
            ("fail-on tool-error".to_owned(), false, 2),
            ("fail-on invalid".to_owned(), true, 0),
            ("fail-on truncated".to_owned(), true, 0),
            ("fail-on fault".to_owned(), true, 0),
            ("fail-on policy-denied".to_owned(), true, 0),
        ]
    );
    // Each finding names the tape line of its request.
    let get_sum = lines_where(&tape, |e| {
        e["method"] == "tools/call" && e["params"]["name"] == "get-sum"
    });
    assert_eq!(finding_lines(&doc, 4), get_sum);
    assert_eq!(doc["rules"][4]["findings"][0]["tool"], "get-sum");
    assert!(doc["rules"][4]["findings"][0]["conn"].is_string());
    let tool_errors = lines_where(&tape, |e| {
        e["method"] == "tools/call"
            && ["get-sum", "no-such-tool"].contains(&e["params"]["name"].as_str().unwrap_or(""))
    });
    assert_eq!(finding_lines(&doc, 9), tool_errors);
    assert_eq!(doc["summary"]["failed"], 4);
    // The fifth call is the one over the limit.
    assert_eq!(
        finding_lines(&doc, 5),
        [*tool_errors.last().expect("the shape this test expects")]
    );

    // Every rule passes: exit 0.
    let out = check(&env, &tape, &["--expect-tool", "echo", "--max-calls", "5"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let report = stdout(&out);
    assert!(
        report.contains("PASS  expect-tool echo: 1 matching call(s)"),
        "{report}"
    );
    assert!(report.contains("2 rule(s), 2 passed, 0 failed"), "{report}");
}

#[test]
fn duration_rules_name_the_slowest_call_and_need_times() {
    let env = Env::new();
    let tape = everything(&env);
    // The long-running operation sleeps 0.3 s in 3 steps: it is slower than 100 ms, and
    // it is the slowest answer of the session.
    let (code, doc) = json_report(
        &env,
        &tape,
        &["--max-call-duration", "100ms", "--max-duration", "1ms"],
    );
    assert_eq!(code, Some(1), "{doc:#}");
    let long = lines_where(&tape, |e| {
        e["params"]["name"] == "trigger-long-running-operation" && e["method"] == "tools/call"
    });
    assert_eq!(doc["rules"][0]["rule"], "max-duration");
    assert_eq!(doc["rules"][0]["pass"], false);
    // Every call slower than 100 ms, the slowest first, and the summary names it.
    let findings = doc["rules"][1]["findings"]
        .as_array()
        .expect("the shape this test expects");
    assert!(findings.iter().any(|f| f["line"] == long[0]), "{doc:#}");
    let slowest = findings[0]["message"]
        .as_str()
        .expect("the shape this test expects");
    let summary = doc["rules"][1]["summary"]
        .as_str()
        .expect("the shape this test expects");
    let title = slowest
        .split(" took ")
        .next()
        .expect("the shape this test expects");
    assert!(summary.starts_with("the slowest answer took"), "{summary}");
    assert!(summary.contains(title), "{summary} / {slowest}");
    let ms = |f: &Value| -> f64 {
        let m = f["message"].as_str().expect("the shape this test expects");
        let took = m
            .split(" took ")
            .nth(1)
            .expect("the shape this test expects");
        let (n, unit) = took.split_once(' ').expect("the shape this test expects");
        n.parse::<f64>().expect("the shape this test expects")
            * if unit.starts_with("ms") { 1.0 } else { 1000.0 }
    };
    let times: Vec<f64> = findings.iter().map(ms).collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "{times:?}");
    assert!(times.iter().all(|&t| t > 100.0), "{times:?}");

    // The same tape with every time removed: an error that says so, never a pass.
    let untimed = env.path("untimed.ndjson");
    let body: String = std::fs::read_to_string(&tape)
        .expect("the shape this test expects")
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).expect("the shape this test expects");
            v["_meta"]
                .as_object_mut()
                .expect("the shape this test expects")
                .remove("ts");
            format!("{v}\n")
        })
        .collect();
    std::fs::write(&untimed, body).expect("the shape this test expects");
    for flag in ["--max-duration", "--max-call-duration"] {
        let out = check(&env, &untimed, &[flag, "10s"]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        let err = stderr(&out);
        assert!(err.contains(&format!("{flag} needs times")), "{err}");
        assert!(err.contains("untimed.ndjson"), "{err}");
    }
}

#[test]
fn policy_denials_faults_and_errors_fail_the_gate_at_their_lines() {
    let env = Env::new();
    let gated = gated(&env);
    let (code, doc) = json_report(
        &env,
        &gated,
        &["--fail-on", "policy-denied", "--forbid-tool", "delete_*"],
    );
    assert_eq!(code, Some(1), "{doc:#}");
    let refused = lines_where(&gated, |e| {
        e["method"] == "$policy/decision"
            && ["refused", "dry-run"].contains(&e["params"]["resolution"].as_str().unwrap_or(""))
    });
    assert_eq!(refused.len(), 3, "delete, write (dry run), nothere");
    assert_eq!(finding_lines(&doc, 1), refused);
    // The denied call was still made by the client: forbid-tool sees it.
    assert_eq!(doc["rules"][0]["count"], 1);
    // A gated tape with no fault passes --fail-on fault.
    let out = check(&env, &gated, &["--fail-on", "fault"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    let faulty = faulty(&env);
    let (code, doc) = json_report(&env, &faulty, &["--fail-on", "fault,error,tool-error"]);
    assert_eq!(code, Some(1), "{doc:#}");
    let faults = lines_where(&faulty, |e| e["method"] == "$fault");
    assert_eq!(faults.len(), 2);
    assert_eq!(finding_lines(&doc, 0), faults);
    // An injected answer is a fault, not the server's error or tool error.
    assert_eq!(rules(&doc)[1], ("fail-on error".to_owned(), true, 0));
    assert_eq!(rules(&doc)[2], ("fail-on tool-error".to_owned(), true, 0));

    // GitHub: an ::error per finding at its tape line, then the notice.
    let out = check(&env, &faulty, &["--fail-on", "fault", "--format", "github"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let lines: Vec<String> = stdout(&out).lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    for (l, line) in lines.iter().take(2).zip(&faults) {
        assert!(l.starts_with("::error file="), "{l}");
        assert!(
            l.contains(&format!(
                ",line={line},title=mcptape check%3A fail-on fault::"
            )),
            "{l}"
        );
        assert!(l.contains("injected fault"), "{l}");
    }
    assert!(
        lines[2].starts_with("::notice title=mcptape check::"),
        "{}",
        lines[2]
    );
}

#[test]
fn a_truncated_tape_fails_fail_on_truncated() {
    let env = Env::new();
    let cut = truncated(&env);
    let (code, doc) = json_report(&env, &cut, &["--fail-on", "truncated,invalid"]);
    assert_eq!(code, Some(1), "{doc:#}");
    let at = lines_where(&cut, |e| e["method"] == "$tape/truncated");
    assert_eq!(at.len(), 1);
    assert_eq!(finding_lines(&doc, 0), at);
    assert!(
        doc["rules"][0]["findings"][0]["message"]
            .as_str()
            .expect("the shape this test expects")
            .contains("--max-bytes 1500")
    );
    assert_eq!(doc["rules"][1]["pass"], true);
}

#[test]
fn diverged_reads_the_verify_receipt_beside_the_tape_or_refuses_without_one() {
    let env = Env::new();
    // The example server's echo session, verified against server-everything: its
    // tools/list differs.
    let out = run(env
        .mcptape(["record", "ex", "--"])
        .args([python(), peer("py_client.py"), "echo".into()])
        .args(["--message", "hi", "--"])
        .args(proxy_argv("example", &[example_server()])));
    assert!(out.status.success(), "{}", text(&out));
    let tape = env.tape("ex");

    let out = check(&env, &tape, &["--fail-on", "diverged"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = stderr(&out);
    assert!(
        err.contains("ex.verify.json") && err.contains("ex.replay.json"),
        "{err}"
    );

    let verify = run(env
        .mcptape(["verify", "ex", "--"])
        .args(everything_server()));
    assert_eq!(verify.status.code(), Some(1), "{}", text(&verify));
    let (code, doc) = json_report(&env, &tape, &["--fail-on", "diverged"]);
    assert_eq!(code, Some(1), "{doc:#}");
    let list = lines_where(&tape, |e| e["method"] == "tools/list");
    assert_eq!(finding_lines(&doc, 0), list);
    assert!(
        doc["rules"][0]["findings"][0]["message"]
            .as_str()
            .expect("the shape this test expects")
            .contains("`tools/list` diverged")
    );
    // --receipt names it; one that is not a receipt is an error naming the file.
    let not = env.path("not-a-receipt.json");
    std::fs::write(&not, "[1]").expect("the shape this test expects");
    let out = check(
        &env,
        &tape,
        &[
            "--fail-on",
            "diverged",
            "--receipt",
            &not.display().to_string(),
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("not-a-receipt.json"),
        "{}",
        text(&out)
    );
}

#[test]
fn reports_parse_back_and_bad_usage_is_named() {
    let env = Env::new();
    let tape = everything(&env);
    let args = ["--forbid-tool", "echo", "--fail-on", "error"];

    // JUnit: a testcase per rule, the failed one with its failure.
    let out = check(&env, &tape, &[&args[..], &["--format", "junit"]].concat());
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let xml = stdout(&out);
    // Parsed by Python's XML parser: each testcase as `name:failed`.
    let file = env.path("report.xml");
    std::fs::write(&file, &xml).expect("the shape this test expects");
    let parsed = run(env.cmd(python()).args([
        "-c",
        "import sys, xml.etree.ElementTree as ET\n\
         for c in ET.parse(sys.argv[1]).iter('testcase'):\n\
         \x20   print(c.get('name') + ':' + str(c.find('failure') is not None))",
        &file.display().to_string(),
    ]));
    assert!(parsed.status.success(), "{}\n{xml}", text(&parsed));
    assert_eq!(
        stdout(&parsed).lines().collect::<Vec<_>>(),
        ["forbid-tool echo:True", "fail-on error:False"],
        "{xml}"
    );

    // --output: the same report, 0600, never through a symlink.
    let file = env.path("report.json");
    let out = check(
        &env,
        &tape,
        &[
            &args[..],
            &["--format", "json", "--output", &file.display().to_string()],
        ]
        .concat(),
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(out.stdout.is_empty());
    let doc: Value =
        serde_json::from_slice(&std::fs::read(&file).expect("the shape this test expects"))
            .expect("the shape this test expects");
    assert_eq!(doc["summary"]["rules"], 2);
    assert_eq!(crate::support::mode_of(&file), 0o600);
    let link = env.path("link.json");
    std::os::unix::fs::symlink(env.path("elsewhere.json"), &link)
        .expect("the shape this test expects");
    let out = check(
        &env,
        &tape,
        &[&args[..], &["--output", &link.display().to_string()]].concat(),
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(!env.path("elsewhere.json").exists());

    // No rule at all: a usage error, never a silent pass.
    let out = check(&env, &tape, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(stderr(&out).contains("no rule to check"), "{}", text(&out));
    // A bad glob and an unknown server are named.
    let out = check(&env, &tape, &["--expect-tool", "a[b"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("--expect-tool: `a[b` is not a glob"),
        "{}",
        text(&out)
    );
    let out = check(&env, &tape, &["--max-calls", "1", "--server", "nope"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(stderr(&out).contains("--server `nope`"), "{}", text(&out));
    assert!(stderr(&out).contains("everything"), "{}", text(&out));
    // --server scopes the rules to that server's connections.
    let out = check(&env, &tape, &["--max-calls", "5", "--server", "everything"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

/// The tape's lines, each parsed.
fn parsed(tape: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(tape)
        .expect("read the tape")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

#[test]
fn a_call_never_answered_fails_the_call_duration_and_a_stray_error_fails_error() {
    let env = Env::new();
    let tape = everything(&env);
    let entries = parsed(&tape);
    // The server died before answering the echo call (its answer cut from a real
    // session), and later sent a parse error that answers no request.
    let echo = entries
        .iter()
        .position(|e| e["params"]["name"] == "echo" && e["_meta"]["dir"] == "send")
        .expect("the echo call");
    let id = entries[echo]["id"].clone();
    let answer = entries
        .iter()
        .position(|e| e["id"] == id && e["_meta"]["dir"] == "recv" && e.get("method").is_none())
        .expect("the echo answer");
    let mut stray = entries[answer].clone();
    stray["id"] = Value::Null;
    stray.as_object_mut().expect("an object").remove("result");
    stray["error"] = serde_json::json!({"code": -32700, "message": "Parse error"});
    let mut lines: Vec<String> = entries.iter().map(Value::to_string).collect();
    lines[answer] = stray.to_string();
    let hung = env.path("hung.ndjson");
    std::fs::write(&hung, lines.join("\n") + "\n").expect("write");

    let (code, doc) = json_report(&env, &hung, &["--max-call-duration", "1ms"]);
    assert_eq!(code, Some(1), "{doc:#}");
    let findings = doc["rules"][0]["findings"].as_array().expect("findings");
    let never: Vec<&Value> = findings
        .iter()
        .filter(|f| {
            f["message"]
                .as_str()
                .is_some_and(|m| m.contains("never answered"))
        })
        .collect();
    assert_eq!(never.len(), 1, "{doc:#}");
    assert_eq!(never[0]["line"], echo as u64 + 1, "{doc:#}");
    assert_eq!(never[0]["tool"], "echo");
    let (code, doc) = json_report(&env, &hung, &["--max-call-duration", "1h"]);
    assert_eq!(code, Some(0), "{doc:#}");

    let (code, doc) = json_report(&env, &hung, &["--fail-on", "error"]);
    assert_eq!(code, Some(1), "{doc:#}");
    let messages: Vec<&str> = doc["rules"][0]["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["message"].as_str())
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("-32700") && m.contains("no open request")),
        "{doc:#}"
    );
    // The untouched session has no such error: the stray one is what failed it.
    let (code, _) = json_report(&env, &tape, &["--fail-on", "error"]);
    assert_eq!(code, Some(0));
}

#[test]
fn a_torn_last_line_fails_truncated_and_flags_that_cannot_hold_together_are_usage_errors() {
    let env = Env::new();
    let tape = everything(&env);
    // A writer killed mid-line: the last line cut in half, no newline.
    let body = std::fs::read_to_string(&tape).expect("read");
    let lines: Vec<&str> = body.lines().collect();
    let last = lines[lines.len() - 1];
    let torn = env.path("torn.ndjson");
    let cut = format!(
        "{}\n{}",
        lines[..lines.len() - 1].join("\n"),
        &last[..last.len() / 2]
    );
    std::fs::write(&torn, cut).expect("write");
    let (code, doc) = json_report(&env, &torn, &["--fail-on", "truncated"]);
    assert_eq!(code, Some(1), "{doc:#}");
    assert_eq!(finding_lines(&doc, 0), [lines.len() as u64], "{doc:#}");
    let (code, _) = json_report(&env, &tape, &["--fail-on", "truncated"]);
    assert_eq!(code, Some(0));

    for (args, says) in [
        (
            &["--expect-tool", "echo", "--forbid-tool", "echo"][..],
            "--expect-tool `echo` and --forbid-tool `echo`",
        ),
        (
            &["--max-calls", "9", "--receipt", "r.json"][..],
            "--receipt is read only by --fail-on diverged",
        ),
    ] {
        let out = check(&env, &tape, args);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(stderr(&out).contains(says), "{}", text(&out));
    }
    // The same pattern twice is one rule.
    let (code, doc) = json_report(
        &env,
        &tape,
        &["--expect-tool", "echo", "--expect-tool", "echo"],
    );
    assert_eq!(code, Some(0), "{doc:#}");
    assert_eq!(doc["rules"].as_array().expect("rules").len(), 1, "{doc:#}");
}

#[test]
fn a_refused_call_does_not_meet_expect_tool_and_a_replay_past_the_tape_fails_diverged() {
    let env = Env::new();
    let gated = gated(&env);
    // delete_file was refused by the gate: the tool never ran.
    let (code, doc) = json_report(&env, &gated, &["--expect-tool", "delete_file"]);
    assert_eq!(code, Some(1), "{doc:#}");
    let (code, doc) = json_report(&env, &gated, &["--expect-tool", "echo"]);
    assert_eq!(code, Some(0), "{doc:#}");

    // An echo session replayed to a client that goes on calling past its end.
    let out = run(env
        .mcptape(["record", "short", "--"])
        .args([python(), peer("py_client.py"), "echo".into()])
        .args(["--message", "hello replay", "--"])
        .args(proxy_argv("everything", &everything_server())));
    assert!(out.status.success(), "{}", text(&out));
    let out = run(env
        .mcptape(["replay", "short", "--"])
        .args([
            python(),
            peer("py_client.py"),
            "replayable".into(),
            "--".into(),
        ])
        .args(proxy_argv("everything", &["absent-server".to_owned()])));
    assert_ne!(out.status.code(), Some(0), "{}", text(&out));
    let tape = env.tape("short");
    let receipt = tape.with_file_name("short.replay.json");
    let (code, doc) = json_report(
        &env,
        &tape,
        &[
            "--fail-on",
            "diverged",
            "--receipt",
            receipt.to_str().expect("utf-8"),
        ],
    );
    assert_eq!(code, Some(1), "{doc:#}");
    // What came past the end has no tape line: the finding says so at none.
    let findings = doc["rules"][0]["findings"].as_array().expect("findings");
    assert!(
        findings.iter().any(|f| f["line"].is_null()
            && f["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("server `everything`: "))),
        "{doc:#}"
    );
}
