//! What `timeout`, `delay`, `disconnect` and `slow-stream` faults look like to a real
//! client, on stdio (the proxy over the example server) and on the HTTP front (over
//! server-everything's Streamable HTTP): the TypeScript SDK's request timeout and
//! cancel, a delayed answer that holds up no other, the end of the connection, and an
//! answer that comes in many small reads.
//!
//! The rules are those of docs/faults.md (`METHOD name=TOOL: EFFECT [ARG]`).

use std::io::Read;
use std::process::Stdio;

use serde_json::Value;

use crate::get_stream::{authority, post, read_to, session_of};
use crate::http::{Front, HttpServer};
use crate::support::*;

/// The delay of the `delay` fault, in milliseconds.
const DELAY_MS: u64 = 800;

/// The TypeScript SDK's fault client in `scenario` with calls `first` and `second`,
/// against `target` (`--url URL`, or `--` and a command); its JSON lines.
fn ts(env: &Env, scenario: &str, first: &str, second: &str, target: &[String]) -> Vec<Value> {
    let mut cmd = env.cmd("node");
    cmd.arg(peer("ts_faults.mjs"))
        .args([scenario, first, second])
        .args(target);
    let out = run(cmd);
    assert!(out.status.success(), "{}", text(&out));
    stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// `-- mcptape proxy --server ex --record TAPE --fault RULE -- example-server`.
fn stdio_proxy(tape: &std::path::Path, rule: &str) -> Vec<String> {
    vec![
        "--".into(),
        bin().display().to_string(),
        "proxy".into(),
        "--server".into(),
        "ex".into(),
        "--record".into(),
        tape.display().to_string(),
        "--fault".into(),
        rule.into(),
        "--".into(),
        example_server(),
    ]
}

/// The step named `name` of a transcript.
fn step<'a>(lines: &'a [Value], name: &str) -> &'a Value {
    lines
        .iter()
        .find(|l| l["step"] == name)
        .unwrap_or_else(|| panic!("no {name} step: {lines:?}"))
}

/// The position of step `name`.
fn place(lines: &[Value], name: &str) -> usize {
    lines
        .iter()
        .position(|l| l["step"] == name)
        .unwrap_or_else(|| panic!("no {name} step: {lines:?}"))
}

fn assert_timed_out_then_answered(lines: &[Value], second_text: &str) {
    assert_eq!(step(lines, "first")["error"]["code"], -32001, "{lines:?}");
    let second = step(lines, "second").to_string();
    assert!(second.contains(second_text), "{second}");
    assert_eq!(lines.last().map(|l| &l["step"]), Some(&Value::from("done")));
}

#[test]
fn the_ts_sdk_times_out_a_call_that_is_never_answered_cancels_it_and_its_next_call_is_answered_on_stdio()
 {
    let env = Env::new();
    let tape = env.path("timeout.ndjson");
    let target = stdio_proxy(&tape, "tools/call name=add: timeout");
    let lines = ts(
        &env,
        "timeout",
        r#"add={"a":1,"b":2}"#,
        r#"echo={"message":"after the timeout"}"#,
        &target,
    );
    assert_timed_out_then_answered(&lines, "after the timeout");
    let sent = tape_messages(&tape, "send").join("\n");
    assert!(
        sent.contains("notifications/cancelled"),
        "the SDK's cancel reached the server: {sent}"
    );
}

#[test]
fn the_ts_sdk_times_out_a_call_that_is_never_answered_and_its_next_call_is_answered_on_the_http_front()
 {
    let env = Env::new();
    let server = HttpServer::start();
    let front = Front::start(
        &env,
        &[
            "--url",
            &server.url,
            "--fault",
            "tools/call name=get-sum: timeout",
        ],
    );
    let lines = ts(
        &env,
        "timeout",
        r#"get-sum={"a":1,"b":2}"#,
        r#"echo={"message":"after the timeout"}"#,
        &["--url".into(), front.url.clone()],
    );
    assert_timed_out_then_answered(&lines, "after the timeout");
    assert!(front.stop().success());
}

fn assert_delayed_alone(lines: &[Value]) {
    assert!(
        place(lines, "second") < place(lines, "first"),
        "the other answer was not held up: {lines:?}"
    );
    let first = step(lines, "first")["ms"].as_u64().expect("ms");
    let second = step(lines, "second")["ms"].as_u64().expect("ms");
    assert!(
        first >= DELAY_MS,
        "the delayed answer came after {first} ms"
    );
    assert!(second < DELAY_MS, "the other answer came after {second} ms");
}

#[test]
fn a_delayed_answer_comes_no_sooner_than_its_delay_and_holds_up_no_other_on_stdio() {
    let env = Env::new();
    let tape = env.path("delay.ndjson");
    let rule = format!("tools/call name=add: delay {DELAY_MS}");
    let lines = ts(
        &env,
        "delay",
        r#"add={"a":1,"b":2}"#,
        r#"echo={"message":"not held up"}"#,
        &stdio_proxy(&tape, &rule),
    );
    assert_delayed_alone(&lines);
}

#[test]
fn a_delayed_answer_comes_no_sooner_than_its_delay_and_holds_up_no_other_on_the_http_front() {
    let env = Env::new();
    let server = HttpServer::start();
    let rule = format!("tools/call name=get-sum: delay {DELAY_MS}");
    let front = Front::start(&env, &["--url", &server.url, "--fault", &rule]);
    let lines = ts(
        &env,
        "delay",
        r#"get-sum={"a":1,"b":2}"#,
        r#"echo={"message":"not held up"}"#,
        &["--url".into(), front.url.clone()],
    );
    assert_delayed_alone(&lines);
    assert!(front.stop().success());
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

#[test]
fn a_disconnect_on_stdio_closes_the_clients_input_exits_with_its_status_and_says_so_in_the_tape() {
    let env = Env::new();
    let tape = env.path("disconnect.ndjson");
    let mut proxy = Proc::spawn(&mut env.mcptape([
        "proxy",
        "--server",
        "ex",
        "--record",
        &tape.display().to_string(),
        "--fault",
        "tools/call name=echo: disconnect 150",
        "--",
        &example_server(),
    ]));
    proxy.send(INIT);
    assert_eq!(proxy.recv()["id"], 0);
    proxy.send(INITIALIZED);
    proxy.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}}}"#);
    assert!(proxy.recv_raw().is_none(), "the client's input closed");
    assert_eq!(proxy.wait().code(), Some(150), "{}", proxy.stderr());
    let entries = tape_entries(&tape);
    let close = lifecycle(&entries, "$transport/close");
    assert_eq!(close.len(), 1, "{entries:?}");
    assert_eq!(close[0]["params"]["reason"], "injected disconnect");

    // The TypeScript SDK sees the connection end.
    let tape = env.path("disconnect-ts.ndjson");
    let lines = ts(
        &env,
        "disconnect",
        r#"echo={"message":"x"}"#,
        r#"echo={"message":"y"}"#,
        &stdio_proxy(&tape, "tools/call name=echo: disconnect"),
    );
    let error = &step(&lines, "first")["error"];
    assert_eq!(error["code"], -32000, "ConnectionClosed: {lines:?}");
}

#[test]
fn a_disconnect_on_the_http_front_answers_its_status_and_ends_the_session() {
    let env = Env::new();
    let server = HttpServer::start();
    let tape = env.path("front-disconnect.ndjson");
    let front = Front::start(
        &env,
        &[
            "--url",
            &server.url,
            "--record",
            &tape.display().to_string(),
            "--fault",
            "tools/call name=echo: disconnect 503",
        ],
    );
    let authority = authority(&front.url);
    let post = |session: Option<&str>, body: &str| post(&authority, session, body);
    let session = session_of(&read_to(&mut post(None, INIT), "serverInfo"));
    read_to(&mut post(Some(&session), INITIALIZED), "\r\n");
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}}}"#;
    let answer = read_to(&mut post(Some(&session), call), "\r\n");
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    let again = read_to(&mut post(Some(&session), call), "\r\n");
    assert!(
        again.starts_with("HTTP/1.1 404"),
        "the session is over: {again}"
    );
    assert!(front.stop().success());
    let entries = tape_entries(&tape);
    let close = lifecycle(&entries, "$transport/close");
    assert_eq!(close.len(), 1, "{entries:?}");
    assert_eq!(close[0]["params"]["reason"], "injected disconnect");

    // The TypeScript SDK hears the default status, 404: its session is gone.
    let front = Front::start(
        &env,
        &[
            "--url",
            &server.url,
            "--fault",
            "tools/call name=echo: disconnect",
        ],
    );
    let lines = ts(
        &env,
        "disconnect",
        r#"echo={"message":"x"}"#,
        r#"echo={"message":"y"}"#,
        &["--url".into(), front.url.clone()],
    );
    let error = step(&lines, "first")["error"].to_string();
    assert!(error.contains("404"), "{error}");
    assert!(front.stop().success());
}

/// A message long enough to be cut into many pieces.
fn long_message() -> String {
    "slow ".repeat(40)
}

#[test]
fn a_slow_answer_on_stdio_comes_whole_in_many_small_reads_and_is_recorded_once() {
    let env = Env::new();
    let tape = env.path("slow.ndjson");
    let mut proxy = env
        .mcptape([
            "proxy",
            "--server",
            "ex",
            "--record",
            &tape.display().to_string(),
            "--fault",
            "tools/call name=echo: slow-stream",
            "--",
            &example_server(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn the proxy");
    let mut stdin = proxy.stdin.take().expect("stdin");
    let mut out = proxy.stdout.take().expect("stdout");
    let call = serde_json::json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
        "params":{"name":"echo","arguments":{"message": long_message()}}});
    use std::io::Write;
    writeln!(stdin, "{INIT}\n{INITIALIZED}\n{call}").expect("write");
    stdin.flush().expect("flush");
    // The initialize answer, then the call's answer, counting the reads it takes.
    let (mut seen, mut reads) = (Vec::new(), 0);
    let mut buf = [0u8; 65536];
    while seen.iter().filter(|&&b| b == b'\n').count() < 2 {
        let n = out.read(&mut buf).expect("read");
        assert!(n > 0, "ended early: {}", String::from_utf8_lossy(&seen));
        let before = seen.iter().filter(|&&b| b == b'\n').count();
        seen.extend_from_slice(&buf[..n]);
        if before == 1 {
            reads += 1;
        }
    }
    drop(stdin);
    let status = wait_child(&mut proxy);
    assert!(status.success(), "{status:?}");
    let text = String::from_utf8(seen).expect("utf-8");
    let answer: Value =
        serde_json::from_str(text.lines().nth(1).expect("the answer")).expect("JSON");
    assert!(
        answer.to_string().contains(&long_message()),
        "whole: {answer}"
    );
    assert!(reads >= 4, "the answer came in {reads} reads");
    let recorded = tape_messages(&tape, "recv");
    let answers: Vec<_> = recorded
        .iter()
        .filter(|m| m.contains(&long_message()))
        .collect();
    assert_eq!(answers.len(), 1, "recorded once, whole: {recorded:?}");
}

#[test]
fn a_slow_answer_on_the_http_front_comes_whole_in_many_small_reads() {
    let env = Env::new();
    let server = HttpServer::start();
    let front = Front::start(
        &env,
        &[
            "--url",
            &server.url,
            "--fault",
            "tools/call name=echo: slow-stream",
        ],
    );
    let authority = authority(&front.url);
    let post = |session: Option<&str>, body: &str| post(&authority, session, body);
    let session = session_of(&read_to(&mut post(None, INIT), "serverInfo"));
    read_to(&mut post(Some(&session), INITIALIZED), "\r\n");
    let call = serde_json::json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
        "params":{"name":"echo","arguments":{"message": long_message()}}})
    .to_string();
    let mut stream = post(Some(&session), &call);
    let (mut seen, mut reads) = (Vec::new(), 0);
    let mut buf = [0u8; 65536];
    let event = loop {
        let body = body_of(&seen);
        if body.ends_with("\n\n") && body.contains(&long_message()) {
            break body;
        }
        let n = stream.read(&mut buf).expect("read");
        assert!(n > 0, "ended early: {}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buf[..n]);
        reads += 1;
    };
    let head = String::from_utf8_lossy(&seen);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let ours = event.split("\n\n").find(|e| e.contains(&long_message()));
    let data = ours
        .and_then(|e| e.split_once("data: "))
        .map_or("", |(_, d)| d);
    let answer: Value = serde_json::from_str(data).unwrap_or_else(|e| panic!("{e}: {event}"));
    assert!(
        answer.to_string().contains(&long_message()),
        "whole: {answer}"
    );
    assert!(reads >= 4, "the answer came in {reads} reads: {event}");
    assert!(front.stop().success());
}

/// The body of a chunked HTTP answer read so far (`seen`: its head and the chunks that
/// came whole), as text.
fn body_of(seen: &[u8]) -> String {
    let text = String::from_utf8_lossy(seen);
    let Some((_, mut rest)) = text.split_once("\r\n\r\n") else {
        return String::new();
    };
    let mut body = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || after.len() < size + 2 {
            break;
        }
        body.push_str(&after[..size]);
        rest = &after[size + 2..];
    }
    body
}

#[test]
fn call_says_the_server_closed_its_output_and_exits_1_on_a_disconnect() {
    let env = Env::new();
    let config = env.path(".mcp.json");
    let entry = serde_json::json!({"mcpServers": {"example": {"command": example_server()}}});
    std::fs::write(&config, entry.to_string()).expect("write the config");
    let out = run(env.mcptape([
        "call",
        "--fault",
        "tools/call name=echo: disconnect",
        "example.echo",
        "message:x",
    ]));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        stderr(&out).contains("server `example` closed its output before answering `tools/call`"),
        "{}",
        text(&out)
    );
}
