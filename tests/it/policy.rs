//! The policy gate (`--policy`) through real clients and a real server that logs every
//! tools/call it gets (tests/peers/py_policy_server.py, the Python SDK's `MCPServer`):
//! the Python SDK agent reads a refusal and goes on, a dry run, the server's log shows a
//! denied call never reached it, the tape's `$policy/decision` entries, `show`, replay
//! with no server, verify, `record --policy`, the HTTP front and `call`; and every bad
//! policy file is an error before the server starts.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::http::{Front, HttpServer};
use crate::support::*;

/// Deny the destructive, rehearse the writes, allow the rest.
pub(crate) const POLICY: &str = r#"
default = "allow"

[[rule]]
id = "no-destructive"
decision = "deny"
annotations = { destructiveHint = true }
tool = ["delete_*", "nothere"]

[[rule]]
id = "rehearse-writes"
decision = "dry-run"
tool = "write_file"
"#;

/// What the agent does: a denied call, then a call that works, a dry run, and a call of
/// a tool the server never listed (denied: unlisted tools get the spec's defaults, so
/// they are destructive).
fn plan() -> String {
    json!([
        ["delete_file", {"path": "/important"}],
        ["echo", {"message": "after the refusal"}],
        ["write_file", {"path": "/tmp/a", "content": "hi"}],
        ["nothere", {}],
    ])
    .to_string()
}

/// The Python SDK agent running `plan` against `target` (a command, or a URL).
fn agent(env: &Env, target: &[String]) -> Command {
    let mut cmd = env.cmd(python());
    cmd.arg(peer("py_policy_client.py"))
        .arg(plan())
        .arg("--")
        .args(target);
    cmd
}

/// The policy server over stdio, logging into `log`.
fn server(log: &Path) -> Vec<String> {
    vec![
        python(),
        peer("py_policy_server.py"),
        "stdio".into(),
        log.display().to_string(),
    ]
}

fn write_policy(env: &Env) -> PathBuf {
    let path = env.path("policy.toml");
    std::fs::write(&path, POLICY).expect("write policy");
    path
}

/// The agent's JSON lines.
fn lines(out: &Output) -> Vec<Value> {
    assert!(out.status.success(), "{}", text(out));
    stdout(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The agent saw each refusal, went on, and saw the dry run.
fn gated(lines: &[Value]) {
    assert_eq!(lines.len(), 4, "{lines:?}");
    assert_eq!(lines[0]["isError"], true, "{lines:?}");
    assert_eq!(
        lines[0]["text"],
        "Tool call blocked by policy: no-destructive"
    );
    assert_eq!(lines[1]["isError"], false, "{lines:?}");
    assert_eq!(lines[1]["text"], "Echo: after the refusal");
    assert_eq!(lines[2]["isError"], false, "{lines:?}");
    let dry = lines[2]["text"].as_str().expect("text");
    assert!(
        dry.starts_with("Dry run: tool `write_file` was not executed (policy: rehearse-writes)")
            && dry.contains(r#"{"path":"/tmp/a","content":"hi"}"#),
        "{dry}"
    );
    assert_eq!(
        lines[3]["text"],
        "Tool call blocked by policy: no-destructive"
    );
}

/// The tools the server's log says it was called with.
fn served(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("a log line");
            v["tool"].as_str().unwrap_or("").to_owned()
        })
        .collect()
}

#[test]
fn the_python_agent_reads_the_refusal_and_goes_on_and_the_server_never_sees_the_call() {
    let env = Env::new();
    let policy = write_policy(&env);
    let log = env.path("server.log");
    let mut proxy = vec![
        bin().display().to_string(),
        "proxy".into(),
        "--policy".into(),
    ];
    proxy.push(policy.display().to_string());
    proxy.push("--".into());
    proxy.extend(server(&log));
    gated(&lines(&run(agent(&env, &proxy))));
    assert_eq!(
        served(&log),
        ["echo"],
        "only the allowed call reached the server"
    );
}

#[test]
fn a_gated_session_is_taped_shown_replayed_with_no_server_and_skipped_by_verify() {
    let env = Env::new();
    let policy = write_policy(&env);
    let log = env.path("server.log");
    let proxy = |server: Vec<String>| {
        let mut argv = proxy_argv("fs", &server);
        argv.splice(2..2, ["--policy".to_owned(), policy.display().to_string()]);
        argv
    };
    let mut record = env.mcptape(["record", "gated", "--"]);
    record
        .arg(python())
        .arg(peer("py_policy_client.py"))
        .arg(plan())
        .arg("--");
    record.args(proxy(server(&log)));
    gated(&lines(&run(record)));
    assert_eq!(served(&log), ["echo"]);

    // Each decision stands after its request and before the answer the client was given;
    // only the allowed call reached the server, so only it has a commitment (a policy
    // turns them on), between its decision and its answer.
    let entries = tape_entries(&env.tape("gated"));
    let decisions = lifecycle(&entries, "$policy/decision");
    assert_eq!(decisions.len(), 4, "{entries:?}");
    for d in &decisions {
        let at = entries
            .iter()
            .position(|e| std::ptr::eq(e, *d))
            .expect("in the tape");
        let id = &d["params"]["id"];
        assert_eq!(entries[at - 1]["method"], "tools/call", "{entries:?}");
        assert_eq!(&entries[at - 1]["id"], id);
        let mut next = at + 1;
        if d["params"]["resolution"] == "allowed" {
            assert_eq!(entries[next]["method"], "$commit", "{entries:?}");
            assert_eq!(&entries[next]["params"]["id"], id);
            next += 1;
        }
        assert_eq!(&entries[next]["id"], id, "{entries:?}");
        assert_eq!(entries[next]["_meta"]["dir"], "recv");
    }
    assert_eq!(lifecycle(&entries, "$commit").len(), 1, "{entries:?}");
    let p = |i: usize, k: &str| decisions[i]["params"][k].clone();
    assert_eq!(
        (p(0, "decision"), p(0, "resolution")),
        (json!("deny"), json!("refused"))
    );
    assert_eq!(p(0, "rules"), json!(["no-destructive"]));
    assert_eq!(p(0, "tool"), "delete_file");
    assert_eq!(
        (p(1, "decision"), p(1, "rules")),
        (json!("allow"), json!([]))
    );
    assert_eq!(p(2, "resolution"), "dry-run");

    let shown = run(env.mcptape(["show", "gated", "--full"]));
    let shown = stdout(&shown);
    assert!(
        shown.contains("POLICY deny → refused #3 tools/call delete_file (rule no-destructive)"),
        "{shown}"
    );
    assert!(
        shown.contains("POLICY dry-run → dry-run #5 tools/call write_file (rule rehearse-writes)"),
        "{shown}"
    );
    assert!(
        shown.contains("POLICY allow → allowed #4 tools/call echo (default)"),
        "{shown}"
    );
    let json: Value = serde_json::from_slice(&run(env.mcptape(["show", "gated", "--json"])).stdout)
        .expect("json");
    let shown_decisions: Vec<&Value> = json["connections"][0]["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| e["message"]["method"] == "$policy/decision")
        .collect();
    assert_eq!(shown_decisions.len(), 4);
    assert_eq!(
        shown_decisions[0]["message"]["params"]["rules"],
        json!(["no-destructive"])
    );

    // Replayed with no server (a command that does not exist), strict and any: the same
    // refusals, from the tape. The proxy keeps its --policy: a replay does not apply it.
    let absent = vec!["/nonexistent/server-that-must-not-start".to_owned()];
    for matching in [None, Some("any")] {
        let mut replay = env.mcptape(["replay", "gated"]);
        if let Some(m) = matching {
            replay.args(["--match", m]);
        }
        replay
            .arg("--")
            .arg(python())
            .arg(peer("py_policy_client.py"))
            .arg(plan())
            .arg("--");
        replay.args(proxy(absent.clone()));
        let out = run(replay);
        gated(&lines(&out));
        let err = stderr(&out);
        assert!(err.contains("ok       server `fs`"), "{err}");
        assert!(err.contains("the policy (--policy `"), "{err}");
    }

    // Verify plays the allowed call and skips the gated ones, which the server never saw.
    let vlog = env.path("verify.log");
    let out = run(env
        .mcptape(["verify", "gated", "--allow-writes", "--"])
        .args(server(&vlog)));
    assert!(out.status.success(), "{}", text(&out));
    let report = stdout(&out);
    assert!(report.contains("0 changed, 3 skipped"), "{report}");
    assert!(
        report.contains("not played: the policy answered it when it was recorded (deny by rule no-destructive: refused)"),
        "{report}"
    );
    assert_eq!(
        served(&vlog),
        ["echo"],
        "verify ran no call the policy refused"
    );
}

#[test]
fn record_policy_gates_every_proxy_under_it_and_exports_the_file() {
    let env = Env::new();
    let policy = write_policy(&env);
    let log = env.path("server.log");
    // Given relative to record's directory: the proxies get it absolute.
    let mut record = env.mcptape(["record", "gated", "--policy", "policy.toml", "--"]);
    record
        .arg(python())
        .arg(peer("py_policy_client.py"))
        .arg(plan())
        .arg("--");
    record.args(proxy_argv("fs", &server(&log)));
    gated(&lines(&run(record)));
    assert_eq!(served(&log), ["echo"]);
    assert_eq!(
        lifecycle(&tape_entries(&env.tape("gated")), "$policy/decision").len(),
        4
    );

    let out = run(env.mcptape([
        "record",
        "s",
        "--policy",
        "policy.toml",
        "--approval-timeout",
        "0",
    ]));
    let exports = stdout(&out);
    let abs = std::fs::canonicalize(&policy).expect("abs");
    assert!(
        exports.contains(&format!("export MCPTAPE_POLICY='{}'", abs.display()))
            || exports.contains(&format!("export MCPTAPE_POLICY='{}'", policy.display())),
        "{exports}"
    );
    assert!(
        exports.contains("export MCPTAPE_APPROVAL_TIMEOUT='0'"),
        "{exports}"
    );
    let out = run(env.mcptape(["record", "s"]));
    assert!(!stdout(&out).contains("MCPTAPE_POLICY"), "{}", text(&out));
}

#[test]
fn every_bad_policy_file_is_an_error_naming_it_and_the_server_never_starts() {
    let env = Env::new();
    let started = env.path("started");
    // A server that leaves a mark when it starts.
    let marker = vec![
        "sh".to_owned(),
        "-c".to_owned(),
        format!("touch '{}'; exec cat", started.display()),
    ];
    let fifo = env.path("fifo.toml");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).expect("mkfifo");
    let cases: &[(&str, Option<&str>, &str)] = &[
        ("missing.toml", None, "cannot read --policy `missing.toml`"),
        (
            "fifo.toml",
            None,
            "--policy `fifo.toml`: not a regular file",
        ),
        (
            "syntax.toml",
            Some("default = \"allow\"\n[[rule]\n"),
            "--policy `syntax.toml`: line 2: not TOML",
        ),
        (
            "nodefault.toml",
            Some("[[rule]]\nid = \"a\"\ndecision = \"deny\"\n"),
            "`default` is missing",
        ),
        (
            "unknown.toml",
            Some(
                "default = \"allow\"\n\n[[rule]]\nid = \"a\"\ndecision = \"deny\"\ntols = \"x\"\n",
            ),
            "--policy `unknown.toml`: line 6: rule `a`: `tols`: unknown key",
        ),
        (
            "decision.toml",
            Some("default = \"allow\"\n[[rule]]\nid = \"a\"\ndecision = \"block\"\n"),
            "line 4: rule `a`: `decision`: `block` is not a decision: allow, deny, ask, dry-run",
        ),
        (
            "glob.toml",
            Some("default = \"allow\"\n[[rule]]\nid = \"g\"\ndecision = \"deny\"\ntool = \"a[\"\n"),
            "line 5: rule `g`: `tool`: `a[` is not a glob",
        ),
        (
            "regex.toml",
            Some(
                "default = \"allow\"\n[[rule]]\nid = \"r\"\ndecision = \"deny\"\nargs = { path = { regex = \"(\" } }\n",
            ),
            "line 5: rule `r`: `args`: `path`: `regex`: `(` is not a regex",
        ),
        (
            "dup.toml",
            Some(
                "default = \"allow\"\n[[rule]]\nid = \"a\"\ndecision = \"deny\"\n[[rule]]\nid = \"a\"\ndecision = \"allow\"\n",
            ),
            "line 5: rule `a`: the id is already the rule's of line 2",
        ),
    ];
    for (name, contents, want) in cases {
        if let Some(c) = contents {
            std::fs::write(env.path(name), c).expect("write");
        }
        let out = run(env.mcptape(["proxy", "--policy", name, "--"]).args(&marker));
        assert_eq!(out.status.code(), Some(2), "{name}: {}", text(&out));
        assert!(stderr(&out).contains(want), "{name}: {}", text(&out));
        assert!(!started.exists(), "{name}: the server started");
    }
    // From the environment too: never a silent allow.
    let out = run(env
        .mcptape(["proxy", "--"])
        .args(&marker)
        .env("MCPTAPE_POLICY", "decision.toml"));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(stderr(&out).contains("MCPTAPE_POLICY `"), "{}", text(&out));
    assert!(!started.exists());
    // `record --policy` checks the file before it runs CMD.
    let out = run(env
        .mcptape(["record", "s", "--policy", "glob.toml", "--"])
        .args(&marker));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("`a[` is not a glob"),
        "{}",
        text(&out)
    );
    assert!(!started.exists());
}

#[test]
fn the_http_front_refuses_the_same_calls_and_its_server_never_sees_them() {
    let env = Env::new();
    let policy = write_policy(&env);
    let log = env.path("server.log");
    let mut cmd = Command::new(python());
    cmd.arg(peer("py_policy_server.py")).arg("http").arg(&log);
    let server = HttpServer::launch(cmd, "listening on port ");
    let tape = env.path("front.ndjson").display().to_string();
    let front = Front::start_as(
        &env,
        "fs",
        &[
            "--url",
            &server.url,
            "--record",
            &tape,
            "--policy",
            &policy.display().to_string(),
        ],
    );
    gated(&lines(&run(agent(&env, std::slice::from_ref(&front.url)))));
    assert!(front.stop().success());
    assert_eq!(served(&log), ["echo"]);
    let entries = tape_entries(Path::new(&tape));
    assert_eq!(
        lifecycle(&entries, "$policy/decision").len(),
        4,
        "{entries:?}"
    );
    drop(server);

    // The front's replay, no server behind it: the recorded refusals.
    let front = Front::start_as(
        &env,
        "fs",
        &["--replay", &tape, "--policy", &policy.display().to_string()],
    );
    gated(&lines(&run(agent(&env, std::slice::from_ref(&front.url)))));
    assert!(
        front.stop().success(),
        "the replayed session's verdict is clean"
    );
}

#[test]
fn call_with_a_policy_is_refused_and_the_server_never_sees_it() {
    let env = Env::new();
    let policy = write_policy(&env);
    let log = env.path("server.log");
    let argv = server(&log);
    let config = json!({"mcpServers": {"fs": {"command": argv[0], "args": argv[1..]}}});
    std::fs::write(env.path(".mcp.json"), config.to_string()).expect("config");
    let p = policy.display().to_string();
    let out = run(env.mcptape(["call", "fs.delete_file", "path=/important", "--policy", &p]));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        stderr(&out).contains("Tool call blocked by policy: no-destructive"),
        "{}",
        text(&out)
    );
    let out = run(env.mcptape(["call", "fs.echo", "message=hi", "--policy", &p]));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(stdout(&out), "Echo: hi\n");
    assert_eq!(served(&log), ["echo"]);
}

#[test]
fn numbers_and_booleans_in_strings_are_judged_as_the_pydantic_server_runs_them() {
    let env = Env::new();
    let policy = env.path("amounts.toml");
    std::fs::write(
        &policy,
        r#"
default = "allow"

[[rule]]
id = "big-transfers"
decision = "deny"
tool = "transfer"
args.amount = { gt = 1000 }

[[rule]]
id = "confirmed"
decision = "deny"
tool = "transfer"
args.confirm = true
"#,
    )
    .expect("policy");
    let log = env.path("server.log");
    let argv = server(&log);
    let config = json!({"mcpServers": {"fs": {"command": argv[0], "args": argv[1..]}}});
    std::fs::write(env.path(".mcp.json"), config.to_string()).expect("config");
    let p = policy.display().to_string();
    let call =
        |args: &str| run(env.mcptape(["call", "fs.transfer", "--args", args, "--policy", &p]));
    // Each of these the server would run as a transfer of 5000, or a confirmed one.
    for refused in [
        r#"{"amount":"5000"}"#,
        r#"{"amount":" 5000 "}"#,
        r#"{"amount":5000.0}"#,
        r#"{"amount":9007199254740993}"#,
        r#"{"amount":10,"confirm":"yes"}"#,
        r#"{"amount":10,"confirm":1}"#,
    ] {
        let out = call(refused);
        assert_eq!(out.status.code(), Some(1), "{refused}: {}", text(&out));
        assert!(
            stderr(&out).contains("Tool call blocked by policy"),
            "{refused}: {}",
            text(&out)
        );
    }
    assert!(
        served(&log).is_empty(),
        "the server never got a refused transfer"
    );
    // A small amount in a string goes through, and the server did read it as a number:
    // the coercion the gate must judge by is real.
    let out = call(r#"{"amount":"500","confirm":"no"}"#);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(stdout(&out), "sent 500\n");
    let logged: Value = serde_json::from_str(
        std::fs::read_to_string(&log)
            .expect("log")
            .lines()
            .next()
            .expect("a line"),
    )
    .expect("json");
    assert_eq!(
        logged["arguments"],
        json!({"amount": 500, "confirm": false})
    );
}
