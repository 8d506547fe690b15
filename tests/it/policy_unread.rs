//! The gate reads every client line as the servers read it, or refuses it (docs/POLICY.md,
//! "What the gate reads"): a denied `tools/call` hidden behind a duplicate key, an
//! invalid UTF-8 byte, a number out of range, an odd id, a raw CR or LF never reaches the
//! real Python SDK server behind the proxy — over stdio and through the HTTP front — and
//! every refusal is taped, shown, and not played by verify.

use std::io::{Read, Write};
use std::path::Path;

use serde_json::{Value, json};

use crate::http::{Front, HttpServer};
use crate::support::*;

const POLICY: &str = r#"
default = "allow"

[[rule]]
id = "no-delete"
decision = "deny"
tool = "delete_file"
"#;

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const DELETE: &str = r#""params":{"name":"delete_file","arguments":{"path":"/important"}}"#;

/// Each line that hides a denied call, and what the gate answers it with: the refusal
/// result (`None`: it read the call and the rule denied it) or a JSON-RPC error code.
fn attacks() -> Vec<(&'static str, Vec<u8>, Option<i64>)> {
    let d = DELETE;
    vec![
        (
            "a duplicate method",
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call",{d}}}"#)
                .into_bytes(),
            None,
        ),
        (
            "a duplicate id",
            format!(r#"{{"jsonrpc":"2.0","id":2,"id":2,"method":"tools/call",{d}}}"#).into_bytes(),
            None,
        ),
        (
            "a duplicate result",
            format!(r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","result":1,"result":2,{d}}}"#)
                .into_bytes(),
            None,
        ),
        (
            "an invalid UTF-8 byte",
            b"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"delete_file\",\"arguments\":{\"path\":\"/x\xff\"}}}".to_vec(),
            Some(-32700),
        ),
        (
            "a number out of range",
            br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"delete_file","arguments":{"path":"/big","junk":1e400}}}"#.to_vec(),
            Some(-32700),
        ),
        (
            "a raw CR (a ping to a strict reader, a tools/call to Python's universal newlines)",
            format!("{{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\",\"x\":\r{{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",{d}}}\r}}").into_bytes(),
            Some(-32700),
        ),
        (
            "trailing bytes",
            format!(r#"{{"jsonrpc":"2.0","id":8,"method":"tools/call",{d}}} x"#).into_bytes(),
            Some(-32700),
        ),
        (
            "the id true (the Python SDK reads it as 1)",
            format!(r#"{{"jsonrpc":"2.0","id":true,"method":"tools/call",{d}}}"#).into_bytes(),
            Some(-32600),
        ),
        (
            "the id [7]",
            format!(r#"{{"jsonrpc":"2.0","id":[7],"method":"tools/call",{d}}}"#).into_bytes(),
            Some(-32600),
        ),
        (
            "the id 1e400",
            format!(r#"{{"jsonrpc":"2.0","id":1e400,"method":"tools/call",{d}}}"#).into_bytes(),
            Some(-32700),
        ),
    ]
}

/// The server's log: the tools it ran.
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

fn server(log: &Path) -> Vec<String> {
    vec![
        python(),
        peer("py_policy_server.py"),
        "stdio".into(),
        log.display().to_string(),
    ]
}

/// The gate's answer is the refusal `want` says.
fn refused(what: &str, answer: &Value, want: Option<i64>) {
    match want {
        None => assert_eq!(
            answer["result"]["content"][0]["text"], "Tool call blocked by policy: no-delete",
            "{what}: {answer}"
        ),
        Some(code) => {
            assert_eq!(answer["error"]["code"], code, "{what}: {answer}");
            assert_eq!(answer["id"], Value::Null, "{what}: {answer}");
            let message = answer["error"]["message"].as_str().unwrap_or("");
            assert!(
                message.contains("the policy gate forwards only what it reads whole"),
                "{what}: {answer}"
            );
        }
    }
}

#[test]
fn over_stdio_no_line_the_gate_cannot_read_reaches_the_python_server() {
    let env = Env::new();
    std::fs::write(env.path("p.toml"), POLICY).expect("policy");
    let log = env.path("server.log");
    let tape = env.path("t.ndjson");
    let mut proxy = Proc::spawn(
        env.mcptape(["proxy", "--server", "fs", "--policy", "p.toml", "--record"])
            .arg(&tape)
            .arg("--")
            .args(server(&log)),
    );
    proxy.send(INIT);
    assert_eq!(proxy.recv()["id"], 0);
    proxy.send(INITIALIZED);
    for (what, line, want) in attacks() {
        let mut bytes = line;
        bytes.push(b'\n');
        proxy.write(&bytes);
        refused(what, &proxy.recv(), want);
    }
    // The connection goes on: an allowed call runs.
    proxy.send(
        r#"{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"echo","arguments":{"message":"still here"}}}"#,
    );
    let echo = proxy.recv();
    assert_eq!(echo["id"], 20);
    assert_eq!(echo["result"]["content"][0]["text"], "Echo: still here");
    proxy.close_stdin();
    assert!(proxy.wait().success());
    assert_eq!(served(&log), ["echo"], "the server ran no hidden call");

    // Each refusal is a `$policy/decision` beside it: a deny by no rule, with its code.
    // (The tape keeps each refused line as it came: not every one is JSON.)
    let decisions: Vec<Value> = std::fs::read_to_string(&tape)
        .expect("tape")
        .lines()
        .filter(|l| l.contains(r#""method":"$policy/decision""#))
        .map(|l| serde_json::from_str(l).expect("a decision is JSON"))
        .collect();
    assert_eq!(decisions.len(), attacks().len() + 1, "{decisions:?}");
    let p = |i: usize| &decisions[i]["params"];
    assert_eq!(
        p(0)["rules"],
        json!(["no-delete"]),
        "read as the server reads it"
    );
    assert_eq!(p(0)["method"], "tools/call");
    assert_eq!(
        (&p(3)["error"], &p(3)["resolution"]),
        (&json!(-32700), &json!("refused"))
    );
    // Read from a strict head as far as one reads (the bad byte is past the method).
    assert_eq!(
        (&p(3)["id"], &p(3)["method"]),
        (&json!(4), &json!("tools/call"))
    );
    assert_eq!(
        (&p(4)["id"], &p(4)["method"]),
        (&json!(5), &json!("tools/call"))
    );
    assert_eq!(
        (&p(7)["id"], &p(7)["error"]),
        (&json!(true), &json!(-32600))
    );
    assert_eq!(p(8)["id"], json!([7]));
    assert!(
        p(5)["reason"]
            .as_str()
            .is_some_and(|r| r.contains("raw carriage return")),
        "{:?}",
        p(5)
    );
    let shown = stdout(&run(env.mcptape(["show"]).arg(&tape).arg("--full")));
    assert!(
        shown.contains(
            "POLICY deny → refused #true tools/call delete_file (not read: error -32600;"
        ),
        "{shown}"
    );

    // Verify plays none of them (the server never saw them), only the echo.
    let vlog = env.path("verify.log");
    let out = run(env
        .mcptape(["verify", "--allow-writes"])
        .arg(&tape)
        .arg("--")
        .args(server(&vlog)));
    let report = stdout(&out);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        served(&vlog),
        ["echo"],
        "verify ran no refused call: {report}"
    );
    assert!(
        report.contains("not played: the policy answered it when it was recorded (deny by the gate, which could not read it (error -32600)"),
        "{report}"
    );
}

/// One POST to the front: the status line, the session id, the JSON-RPC answer.
fn post(authority: &str, session: Option<&str>, body: &[u8]) -> (String, Option<String>, Value) {
    let mut s = std::net::TcpStream::connect(authority).expect("connect");
    s.set_read_timeout(Some(DEADLINE)).expect("timeout");
    let session = session
        .map(|id| format!("Mcp-Session-Id: {id}\r\nMCP-Protocol-Version: 2025-06-18\r\n"))
        .unwrap_or_default();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{session}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).expect("head");
    s.write_all(body).expect("body");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read");
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, rest) = raw.split_once("\r\n\r\n").expect("a head");
    let session = head.lines().find_map(|l| {
        l.split_once(':')
            .filter(|(k, _)| k.eq_ignore_ascii_case("mcp-session-id"))
            .map(|(_, v)| v.trim().to_owned())
    });
    // The JSON-RPC message: the last SSE `data:` line, or a JSON body (chunked or not).
    let answer = rest
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("data: "))
        .or_else(|| rest.lines().find(|l| l.starts_with('{')))
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or(Value::Null);
    (
        head.lines().next().unwrap_or("").to_owned(),
        session,
        answer,
    )
}

#[test]
fn through_the_http_front_and_url_a_hidden_call_never_reaches_the_server() {
    let env = Env::new();
    std::fs::write(env.path("p.toml"), POLICY).expect("policy");
    let log = env.path("server.log");
    let mut cmd = std::process::Command::new(python());
    cmd.arg(peer("py_policy_server.py")).arg("http").arg(&log);
    let server = HttpServer::launch(cmd, "listening on port ");
    let front = Front::start_as(&env, "fs", &["--url", &server.url, "--policy", "p.toml"]);
    let authority = front
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let (status, session, init) = post(&authority, None, INIT.as_bytes());
    assert!(status.contains("200"), "{status}");
    assert_eq!(init["id"], 0, "{init}");
    let session = session.expect("a session");
    post(&authority, Some(&session), INITIALIZED.as_bytes());
    let d = DELETE;
    let dup = format!(r#"{{"jsonrpc":"2.0","id":4,"method":"ping","method":"tools/call",{d}}}"#);
    // The front takes only a body whose head reads strictly: a 400, never forwarded.
    let (status, _, _) = post(&authority, Some(&session), dup.as_bytes());
    assert!(status.contains("400"), "{status}");
    // A message is one line: a raw LF (JSON whitespace to the gate, a line end to a
    // stdio server) is refused on every front.
    let split = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\",\"x\":\n{{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",{d}}}\n}}"
    );
    let big = br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"delete_file","arguments":{"path":"/big","junk":1e400}}}"#;
    for (what, body) in [("1e400", &big[..]), ("a raw LF", split.as_bytes())] {
        let (status, _, answer) = post(&authority, Some(&session), body);
        assert!(status.contains("200"), "{what}: {status}");
        refused(what, &answer, Some(-32700));
    }
    let (_, _, echo) = post(
        &authority,
        Some(&session),
        br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}"#,
    );
    assert_eq!(echo["result"]["content"][0]["text"], "Echo: hi", "{echo}");
    assert!(front.stop().success());

    // The stdio proxy to the same server (`--url`): the same refusals.
    let mut proxy = Proc::spawn(&mut env.mcptape([
        "proxy",
        "--server",
        "fs",
        "--policy",
        "p.toml",
        "--url",
        &server.url,
    ]));
    proxy.send(INIT);
    assert_eq!(proxy.recv()["id"], 0);
    proxy.send(INITIALIZED);
    for (what, line, want) in attacks() {
        let mut bytes = line;
        bytes.push(b'\n');
        proxy.write(&bytes);
        refused(what, &proxy.recv(), want);
    }
    proxy.close_stdin();
    assert!(proxy.wait().success());
    assert_eq!(served(&log), ["echo"], "the server ran no hidden call");
}
