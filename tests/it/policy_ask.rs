//! A policy's `ask` through real clients: the Python SDK client holds a call for
//! approval and makes another on the same connection meanwhile
//! (tests/peers/py_ask_client.py); a second process — `mcptape approvals`, `approve`,
//! `deny`, as a person would run them — decides it. The server is the Python SDK's,
//! logging each tools/call it gets (tests/peers/py_policy_server.py), so a test shows
//! what reached it and in what order.
//!
//! The client sends the held call, then an `echo`: once the echo is answered the proxy
//! has read the held call too, and put it on the desk — that is what each test waits
//! for before it looks at the desk (no polling).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::http::{Front, HttpServer};
use crate::support::*;

/// Hold every `write_file` for a person; allow the rest.
const POLICY: &str = r#"
default = "allow"

[[rule]]
id = "ask-writes"
decision = "ask"
tool = "write_file"
"#;

fn write_policy(env: &Env) -> PathBuf {
    let path = env.path("policy.toml");
    std::fs::write(&path, POLICY).expect("write policy");
    path
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

/// The tools the server's log says it was called with, in order.
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

/// `mcptape proxy --server fs --policy P [EXTRA] -- SERVER`, as argv.
fn gated_proxy(policy: &Path, extra: &[&str], server: &[String]) -> Vec<String> {
    let mut argv = proxy_argv("fs", server);
    let mut flags = vec!["--policy".to_owned(), policy.display().to_string()];
    flags.extend(extra.iter().map(|s| (*s).to_owned()));
    argv.splice(4..4, flags);
    argv
}

/// The ask client in `mode` against `target` (a command, or a URL).
fn client(env: &Env, mode: &str, target: &[String]) -> Command {
    let mut cmd = env.cmd(python());
    cmd.arg(peer("py_ask_client.py"))
        .arg(mode)
        .arg("--")
        .args(target);
    cmd
}

/// The calls waiting on `env`'s desk, as `mcptape approvals --json` gives them.
fn waiting(env: &Env) -> Vec<Value> {
    let out = run(env.mcptape(["approvals", "--json"]));
    assert!(out.status.success(), "{}", text(&out));
    stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one object a line"))
        .collect()
}

/// The one call waiting: a `write_file` of server `fs`, its arguments as sent. Its id.
fn the_held_call(env: &Env) -> String {
    let all = waiting(env);
    assert_eq!(all.len(), 1, "{all:?}");
    let call = &all[0];
    assert_eq!(
        (&call["server"], &call["tool"], &call["rules"]),
        (&json!("fs"), &json!("write_file"), &json!(["ask-writes"]))
    );
    assert_eq!(
        call["arguments"],
        json!({"path": "/srv/app.yaml", "content": "x: 1"})
    );
    assert!(call["left_ms"].as_u64().is_some(), "its clock runs: {call}");
    call["id"].as_str().expect("an id").to_owned()
}

/// The echo answered while the other call is held.
fn echo_while_held(line: &Value) {
    assert_eq!(
        line,
        &json!({"call": "echo", "isError": false, "text": "Echo: while held"})
    );
}

/// The `$policy/decision` of the held call in a tape, checked to stand after its
/// request and before its answer.
fn decision_of_held(entries: &[Value]) -> Value {
    let request = entries
        .iter()
        .position(|e| e["method"] == "tools/call" && e["params"]["name"] == "write_file")
        .expect("the held request on the tape");
    let id = &entries[request]["id"];
    let decision = entries
        .iter()
        .position(|e| e["method"] == "$policy/decision" && &e["params"]["id"] == id)
        .expect("its decision on the tape");
    assert!(decision > request, "{entries:?}");
    if let Some(answer) = entries
        .iter()
        .position(|e| e["_meta"]["dir"] == "recv" && &e["id"] == id)
    {
        assert!(
            decision < answer,
            "the decision comes before the answer: {entries:?}"
        );
    }
    entries[decision]["params"].clone()
}

#[test]
fn an_ask_approved_from_a_second_process_while_the_same_connection_goes_on() {
    let env = Env::new();
    let policy = write_policy(&env);
    let log = env.path("server.log");
    let mut record = env.mcptape(["record", "asked", "--"]);
    record
        .arg(python())
        .arg(peer("py_ask_client.py"))
        .arg("wait")
        .arg("--")
        .args(gated_proxy(&policy, &[], &server(&log)));
    let mut agent = Proc::spawn(&mut record);
    echo_while_held(&agent.recv());
    assert_eq!(
        served(&log),
        ["echo"],
        "the held call has not reached the server"
    );
    let id = the_held_call(&env);

    let out = run(env.mcptape(["approve", &id]));
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stdout(&out).starts_with(&format!(
            "approved `{id}`: tool `write_file` of server `fs`, after "
        )),
        "{}",
        text(&out)
    );
    assert_eq!(
        agent.recv(),
        json!({"call": "write_file", "isError": false, "text": "wrote 4 bytes to /srv/app.yaml"})
    );
    assert_eq!(agent.recv(), json!({"step": "closed"}));
    assert!(agent.wait().success(), "{}", agent.stderr());
    assert_eq!(
        served(&log),
        ["echo", "write_file"],
        "the approved call went up after"
    );
    assert!(waiting(&env).is_empty(), "off the desk");

    let entries = tape_entries(&env.tape("asked"));
    let d = decision_of_held(&entries);
    assert_eq!(
        (&d["decision"], &d["resolution"], &d["approval"]),
        (&json!("ask"), &json!("allowed"), &json!(id))
    );
    assert!(d["by"].as_str().is_some_and(|b| b.contains('@')), "{d}");
    assert!(d["waitedMs"].as_u64().is_some(), "{d}");
}

#[test]
fn an_ask_nobody_decides_is_refused_when_its_time_is_up_saying_so() {
    let env = Env::new();
    let policy = write_policy(&env);
    let log = env.path("server.log");
    let tape = env.path("timeout.ndjson").display().to_string();
    let proxy = gated_proxy(
        &policy,
        &["--approval-timeout", "2", "--record", &tape],
        &server(&log),
    );
    let mut agent = Proc::spawn(&mut client(&env, "wait", &proxy));
    echo_while_held(&agent.recv());
    let listed = waiting(&env);
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert!(
        listed[0]["left_ms"].as_u64().is_some_and(|ms| ms <= 2000),
        "{listed:?}"
    );
    let refused = agent.recv();
    assert_eq!(refused["isError"], true, "{refused}");
    assert_eq!(
        refused["text"],
        "Tool call blocked by policy: ask-writes (no decision within 2 s)"
    );
    assert_eq!(agent.recv(), json!({"step": "closed"}));
    assert!(agent.wait().success(), "{}", agent.stderr());
    assert_eq!(
        served(&log),
        ["echo"],
        "the refused call never reached the server"
    );
    assert!(waiting(&env).is_empty());
    let d = decision_of_held(&tape_entries(Path::new(&tape)));
    assert_eq!(
        (&d["resolution"], &d["by"]),
        (&json!("refused"), &json!("timeout"))
    );

    // Too late now: the second process is told what became of it.
    let id = d["approval"].as_str().expect("its approval id");
    let out = run(env.mcptape(["approve", id]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(stderr(&out).contains("it timed out"), "{}", text(&out));
}

#[test]
fn a_denial_with_a_reason_reaches_the_agent_and_the_server_never_sees_the_call() {
    let env = Env::new();
    let policy = write_policy(&env);
    let log = env.path("server.log");
    let tape = env.path("denied.ndjson").display().to_string();
    let proxy = gated_proxy(&policy, &["--record", &tape], &server(&log));
    let mut agent = Proc::spawn(&mut client(&env, "wait", &proxy));
    echo_while_held(&agent.recv());
    let id = the_held_call(&env);
    let out = run(env.mcptape(["deny", &id, "--reason", "not on prod"]));
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stdout(&out).ends_with("(reason: not on prod)\n"),
        "{}",
        text(&out)
    );
    let refused = agent.recv();
    assert_eq!(refused["isError"], true, "{refused}");
    let said = refused["text"].as_str().expect("text");
    assert!(
        said.starts_with("Tool call blocked by policy: ask-writes") && said.contains("not on prod"),
        "{said}"
    );
    assert_eq!(agent.recv(), json!({"step": "closed"}));
    assert!(agent.wait().success(), "{}", agent.stderr());
    assert_eq!(served(&log), ["echo"]);
    let d = decision_of_held(&tape_entries(Path::new(&tape)));
    assert_eq!(
        (&d["resolution"], &d["reason"]),
        (&json!("refused"), &json!("not on prod"))
    );

    // A second decision is refused, saying who decided first.
    let out = run(env.mcptape(["approve", &id]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains(&format!(
            "call `{id}` is no longer waiting: it was denied by "
        )),
        "{}",
        text(&out)
    );
}

#[test]
fn a_held_call_the_client_cancels_is_withdrawn_and_never_reaches_the_server() {
    let env = Env::new();
    let policy = write_policy(&env);
    let log = env.path("server.log");
    let tape = env.path("cancelled.ndjson").display().to_string();
    let proxy = gated_proxy(&policy, &["--record", &tape], &server(&log));
    let mut agent = Proc::spawn(&mut client(&env, "cancel", &proxy));
    echo_while_held(&agent.recv());
    assert_eq!(agent.recv(), json!({"step": "cancelled"}));
    assert_eq!(
        agent.recv(),
        json!({"call": "echo", "isError": false, "text": "Echo: after the cancel"})
    );
    assert_eq!(agent.recv(), json!({"step": "closed"}));
    assert!(agent.wait().success(), "{}", agent.stderr());
    assert_eq!(
        served(&log),
        ["echo", "echo"],
        "the withdrawn call never went up"
    );
    assert!(waiting(&env).is_empty(), "withdrawn from the desk");
    let entries = tape_entries(Path::new(&tape));
    let d = decision_of_held(&entries);
    assert_eq!(d["resolution"], "withdrawn", "{d}");
    let id = d["approval"].as_str().expect("its approval id");
    let out = run(env.mcptape(["approve", id]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(stderr(&out).contains("withdrawn"), "{}", text(&out));
}

#[test]
fn an_ask_on_the_http_front_is_approved_while_the_session_goes_on() {
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
    let mut agent = Proc::spawn(&mut client(&env, "wait", std::slice::from_ref(&front.url)));
    echo_while_held(&agent.recv());
    assert_eq!(served(&log), ["echo"]);
    let id = the_held_call(&env);
    let out = run(env.mcptape(["approve", &id]));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        agent.recv(),
        json!({"call": "write_file", "isError": false, "text": "wrote 4 bytes to /srv/app.yaml"})
    );
    assert_eq!(agent.recv(), json!({"step": "closed"}));
    assert!(agent.wait().success(), "{}", agent.stderr());
    assert!(front.stop().success());
    assert_eq!(served(&log), ["echo", "write_file"]);
    let d = decision_of_held(&tape_entries(Path::new(&tape)));
    assert_eq!(
        (&d["resolution"], &d["approval"]),
        (&json!("allowed"), &json!(id))
    );
    drop(server);
}

#[test]
fn a_script_that_hangs_up_right_after_a_held_call_still_gets_its_answer_once_approved() {
    // The bundled example server answers what it has read before it exits on the end of
    // its input (the Python SDK's server drops a call that came just before it: even
    // piped to it directly, such a call goes unanswered).
    let env = Env::new();
    let policy = env.path("policy.toml");
    std::fs::write(
        &policy,
        "default = \"allow\"\n[[rule]]\nid = \"ask-sums\"\ndecision = \"ask\"\ntool = \"add\"\n",
    )
    .expect("write policy");
    let argv = gated_proxy(&policy, &[], &[example_server()]);
    let mut proxy = Proc::spawn(env.cmd(&argv[0]).args(&argv[1..]));
    let call = |id: u32, tool: &str, arguments: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": tool, "arguments": arguments}})
        .to_string()
    };
    proxy.send(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "a script", "version": "1"}}})
        .to_string(),
    );
    proxy.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    proxy.send(&call(2, "add", json!({"a": 2, "b": 40})));
    proxy.send(&call(3, "echo", json!({"message": "while held"})));
    // Everything is said: the client's side closes with the call still held.
    proxy.close_stdin();
    assert_eq!(proxy.recv()["id"], 1);
    let echo = proxy.recv();
    assert_eq!(
        (&echo["id"], &echo["result"]["content"][0]["text"]),
        (&json!(3), &json!("Echo: while held"))
    );
    let all = waiting(&env);
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(all[0]["tool"], "add");
    let id = all[0]["id"].as_str().expect("an id").to_owned();
    let out = run(env.mcptape(["approve", &id]));
    assert!(out.status.success(), "{}", text(&out));
    // The server was still there: its input is closed once the held call is decided.
    let answer = proxy.recv();
    assert_eq!(
        (&answer["id"], &answer["result"]["content"][0]["text"]),
        (&json!(2), &json!("42"))
    );
    assert!(proxy.recv_raw().is_none(), "then the proxy's output ends");
    assert!(proxy.wait().success(), "{}", proxy.stderr());
}

#[test]
fn a_signal_to_the_proxy_withdraws_a_held_call_and_the_tape_says_so() {
    let env = Env::new();
    let policy = env.path("policy.toml");
    std::fs::write(
        &policy,
        "default = \"allow\"\n[[rule]]\nid = \"ask-sums\"\ndecision = \"ask\"\ntool = \"add\"\n",
    )
    .expect("write policy");
    let tape = env.path("signalled.ndjson").display().to_string();
    let argv = gated_proxy(&policy, &["--record", &tape], &[example_server()]);
    let mut proxy = Proc::spawn(env.cmd(&argv[0]).args(&argv[1..]));
    proxy.send(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "a script", "version": "1"}}})
        .to_string(),
    );
    proxy.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    proxy.send(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":40}}}"#,
    );
    proxy.send(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"while held"}}}"#,
    );
    assert_eq!(proxy.recv()["id"], 1);
    assert_eq!(proxy.recv()["id"], 3, "answered while the other is held");
    assert_eq!(waiting(&env).len(), 1);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(proxy.child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("kill");
    proxy.wait();
    assert!(waiting(&env).is_empty(), "withdrawn from the desk");
    let entries = tape_entries(Path::new(&tape));
    let d: Vec<_> = lifecycle(&entries, "$policy/decision")
        .into_iter()
        .filter(|d| d["params"]["id"] == 2)
        .collect();
    assert_eq!(d.len(), 1, "{entries:?}");
    assert_eq!(
        (&d[0]["params"]["resolution"], &d[0]["params"]["reason"]),
        (
            &json!("withdrawn"),
            &json!("the connection ended before a decision")
        )
    );
    let id = d[0]["params"]["approval"]
        .as_str()
        .expect("its approval id");
    let out = run(env.mcptape(["approve", id]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(stderr(&out).contains("withdrawn"), "{}", text(&out));
}
