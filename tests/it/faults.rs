//! Fault injection (`--fault`, `--faults`) through real clients: the Python SDK behind
//! `mcptape proxy` of the example server, `mcptape call`, and `record`/`replay` with the
//! `$fault` entries they tape.

use serde_json::Value;

use crate::support::*;

const ERROR_2: &str = r#"tools/call name=echo nth=2: error -32000 "rate limited""#;
const TOOL_ERROR_3: &str = "tools/call name=echo nth=3: tool-error disk full";

/// The Python client's lines.
fn lines(out: &std::process::Output) -> Vec<Value> {
    stdout(out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

fn faulted(lines: &[Value]) {
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[0]["text"], "Echo: m1");
    assert_eq!(lines[0]["isError"], false);
    assert_eq!(lines[1]["error"]["code"], -32000);
    assert_eq!(lines[1]["error"]["message"], "rate limited");
    assert_eq!(lines[2]["isError"], true);
    assert_eq!(lines[2]["text"], "disk full");
}

fn py(env: &Env) -> std::process::Command {
    let mut cmd = env.cmd(python());
    cmd.args([peer("py_faults.py"), "3".into(), "--".into()]);
    cmd
}

#[test]
fn the_python_client_gets_the_injected_error_and_tool_error_on_stdio() {
    let env = Env::new();
    let out = run(py(&env)
        .arg(bin())
        .args(["proxy", "--fault", ERROR_2, "--fault", TOOL_ERROR_3, "--"])
        .arg(example_server()));
    assert!(out.status.success(), "{}", text(&out));
    faulted(&lines(&out));
}

#[test]
fn a_faults_file_gives_the_same_faults_and_a_bad_entry_is_named() {
    let env = Env::new();
    let toml = env.path("faults.toml");
    std::fs::write(
        &toml,
        "[[rules]]\nmethod = \"tools/call\"\nname = \"echo\"\nnth = 2\neffect = \"error\"\ncode = -32000\nmessage = \"rate limited\"\n\n[[rules]]\nrule = \"tools/call name=echo nth=3: tool-error disk full\"\n",
    )
    .expect("write");
    let out = run(py(&env)
        .arg(bin())
        .args(["proxy", "--faults"])
        .arg(&toml)
        .arg("--")
        .arg(example_server()));
    assert!(out.status.success(), "{}", text(&out));
    faulted(&lines(&out));

    let json = env.path("faults.json");
    std::fs::write(
        &json,
        "[\n \"tools/call: drop\",\n {\"effect\": \"delay\", \"ms\": \"soon\"}\n]",
    )
    .expect("write");
    let out = run(env
        .mcptape(["proxy", "--faults"])
        .arg(&json)
        .arg("--")
        .arg(example_server()));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = stderr(&out);
    assert!(
        err.contains("faults.json`: rule 2 (line 3): `soon`: delay takes"),
        "{err}"
    );
}

#[test]
fn a_bad_rule_is_a_usage_error_pointing_at_the_bad_word() {
    let env = Env::new();
    let out = run(env
        .mcptape(["proxy", "--fault", "tools/call nth=x: error", "--"])
        .arg(example_server()));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains(
            "--fault rule 1 `tools/call nth=x: error`: `nth=x`: nth takes a whole number ≥ 1"
        ),
        "{}",
        stderr(&out)
    );
}

#[test]
fn faults_are_taped_shown_and_replayed_as_they_happened() {
    let env = Env::new();
    let client = |cmd: &str| {
        let mut c = env.mcptape([cmd, "faulty"]);
        if cmd == "record" {
            c.args(["--fault", ERROR_2, "--fault", TOOL_ERROR_3]);
        }
        c.arg("--")
            .arg(python())
            .args([peer("py_faults.py"), "3".into(), "--".into()])
            .args(proxy_argv("example", &[example_server()]));
        c
    };
    let out = run(client("record"));
    assert!(out.status.success(), "{}", text(&out));
    faulted(&lines(&out));

    let entries = tape_entries(&env.tape("faulty"));
    let faults = lifecycle(&entries, "$fault");
    assert_eq!(faults.len(), 2, "{entries:?}");
    assert_eq!(faults[0]["params"]["effect"], "error");
    assert_eq!(faults[0]["params"]["tool"], "echo");
    assert_eq!(faults[0]["params"]["index"], 1);
    assert_eq!(
        faults[0]["params"]["replaced"]["result"]["content"][0]["text"],
        "Echo: m2"
    );
    assert_eq!(faults[1]["params"]["effect"], "tool-error");
    // Each `$fault` stands just before the answer it replaced.
    let at = entries
        .iter()
        .position(|e| e["method"] == "$fault")
        .expect("a fault");
    assert_eq!(
        entries[at + 1]["error"]["message"],
        "rate limited",
        "{entries:?}"
    );

    let shown = run(env.mcptape(["show", "faulty"]));
    let shown = stdout(&shown);
    assert!(shown.contains("FAULT error on #"), "{shown}");
    assert!(
        shown.contains("tools/call echo (rule 1: tools/call name=echo nth=2"),
        "{shown}"
    );
    assert!(shown.contains("FAULT tool-error"), "{shown}");

    let out = run(client("replay"));
    assert!(out.status.success(), "{}", text(&out));
    faulted(&lines(&out));
}

/// `mcptape call` of the example server (a config naming it) with these rules.
fn call_with(env: &Env, tool: &str, rules: &[&str], extra: &[&str]) -> std::process::Output {
    let config = env.path("mcp.json");
    let text = serde_json::json!({"mcpServers": {"example": {"command": example_server()}}});
    std::fs::write(&config, text.to_string()).expect("write");
    let mut cmd = env.mcptape(["call", "--config"]);
    cmd.arg(&config).arg(tool).args(extra);
    for rule in rules {
        cmd.args(["--fault", rule]);
    }
    run(cmd)
}

#[test]
fn call_exits_by_the_injected_fault() {
    let env = Env::new();
    let out = call_with(
        &env,
        "example.echo",
        &[r#"tools/call: error -32000 "rate limited""#],
        &["message:hi"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        stderr(&out).contains("error -32000: rate limited"),
        "{}",
        text(&out)
    );
    let out = call_with(
        &env,
        "example.echo",
        &["tools/call: tool-error disk full"],
        &["message:hi"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("disk full"), "{}", text(&out));
    assert!(stderr(&out).contains("isError: true"), "{}", text(&out));
    // A malformed answer is no answer: the call runs into its timeout.
    let out = call_with(
        &env,
        "example.echo",
        &["tools/call: malformed"],
        &["message:hi", "--timeout", "1"],
    );
    assert_eq!(out.status.code(), Some(124), "{}", text(&out));
    assert!(
        stderr(&out).contains("not a JSON-RPC message"),
        "{}",
        text(&out)
    );
    // Untouched without a rule that picks it.
    let out = call_with(
        &env,
        "example.echo",
        &["tools/call name=other: error 1 x"],
        &["message:hi"],
    );
    assert_eq!(stdout(&out), "Echo: hi\n", "{}", text(&out));
}

#[test]
fn a_dropped_notification_never_reaches_the_client() {
    let env = Env::new();
    let out = call_with(&env, "example.slow", &[], &[]);
    assert!(stderr(&out).contains("progress 1/3"), "{}", text(&out));
    let out = call_with(
        &env,
        "example.slow",
        &["notifications/progress nth=2: drop"],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    let err = stderr(&out);
    assert!(
        err.contains("progress 1/3") && err.contains("progress 3/3"),
        "{err}"
    );
    assert!(!err.contains("progress 2/3"), "{err}");
}

#[test]
fn verify_skips_a_call_whose_recorded_answer_was_an_injected_fault_and_names_the_rule() {
    let env = Env::new();
    let out = call_with(
        &env,
        "example.greet",
        &[r#"tools/call name=greet: error -32000 "rate limited""#],
        &["name:Ada", "--record", "faulted"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let entries = tape_entries(&env.tape("faulted"));
    assert!(
        entries.iter().any(|e| e["method"] == "$fault"),
        "{entries:?}"
    );
    // The live server answers greet; the recorded answer was the fault's, not the
    // server's: nothing to compare, and no difference reported.
    let out = run(env.mcptape(["verify", "faulted", "--", &example_server()]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("injected fault (error by rule 1"),
        "verify names the rule that made the recorded answer: {said}"
    );
}
