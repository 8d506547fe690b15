//! Replay: the server absent, the client answered from the tape exactly as recorded,
//! and every divergence named.

use std::process::Output;

use crate::support::*;

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

fn echo(id: u32, message: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"{message}"}}}}}}"#
    )
}

/// Runs `mcptape MODE SESSION -- CLIENT... -- PROXY...`.
fn wrapped(env: &Env, mode: &str, session: &str, client: &[String], proxy: &[String]) -> Output {
    let mut cmd = env.mcptape([mode, session, "--"]);
    cmd.args(client).arg("--").args(proxy);
    run(&mut cmd)
}

/// A command that must never run: replay starts no server.
fn absent() -> Vec<String> {
    vec!["/nonexistent/server-that-must-not-start".into()]
}

#[test]
fn python_sdk_client_gets_identical_answers_from_a_replayed_server_everything() {
    let env = Env::new();
    let client = vec![python(), peer("py_client.py"), "replayable".into()];
    let recorded = wrapped(
        &env,
        "record",
        "s",
        &client,
        &proxy_argv("everything", &everything_server()),
    );
    assert!(recorded.status.success(), "{}", text(&recorded));
    let replayed = wrapped(
        &env,
        "replay",
        "s",
        &client,
        &proxy_argv("everything", &absent()),
    );
    assert!(replayed.status.success(), "{}", text(&replayed));
    similar_asserts::assert_eq!(
        String::from_utf8_lossy(&recorded.stdout),
        String::from_utf8_lossy(&replayed.stdout)
    );
    let out = String::from_utf8_lossy(&replayed.stdout);
    // The run covers what it claims: progress, a sampling callback, errors.
    assert_eq!(out.matches(r#""step": "progress""#).count(), 3, "{out}");
    assert!(out.contains(r#""step": "sampling""#), "{out}");
    assert!(out.contains("hi from the sampling callback"), "{out}");
    assert!(out.contains("Tool no-such-tool not found"), "{out}");
    assert!(out.contains("Input validation error"), "{out}");
    let err = stderr(&replayed);
    assert!(err.contains("no server is started"), "{err}");
    assert!(err.contains("ok       server `everything`"), "{err}");
}

#[test]
fn two_servers_in_one_tape_replay_to_their_own_clients() {
    let env = Env::new();
    let script = |a: &[String], b: &[String]| {
        let client = format!("{} {} example --", python(), peer("py_client.py"));
        let q = |argv: Vec<String>| argv.join(" ");
        format!(
            "{client} {} && {client} {}",
            q(proxy_argv("a", a)),
            q(proxy_argv("b", b))
        )
    };
    let live_b = vec![example_server(), "--variant".into()];
    let recorded = run(&mut env.mcptape([
        "record",
        "s",
        "--",
        "sh",
        "-c",
        &script(&[example_server()], &live_b),
    ]));
    assert!(recorded.status.success(), "{}", text(&recorded));
    assert!(String::from_utf8_lossy(&recorded.stdout).contains("Hi, tape!"));
    let replayed = run(&mut env.mcptape([
        "replay",
        "s",
        "--",
        "sh",
        "-c",
        &script(&absent(), &absent()),
    ]));
    assert!(replayed.status.success(), "{}", text(&replayed));
    similar_asserts::assert_eq!(
        String::from_utf8_lossy(&recorded.stdout),
        String::from_utf8_lossy(&replayed.stdout)
    );
    let err = stderr(&replayed);
    assert!(
        err.contains("ok       server `a`") && err.contains("ok       server `b`"),
        "{err}"
    );
}

#[test]
fn a_changed_argument_fails_with_server_connection_expected_and_got() {
    let env = Env::new();
    let client = |m: &str| {
        vec![
            python(),
            peer("py_client.py"),
            "echo".into(),
            "--message".into(),
            m.into(),
        ]
    };
    let recorded = wrapped(
        &env,
        "record",
        "s",
        &client("one"),
        &proxy_argv("example", &[example_server()]),
    );
    assert!(recorded.status.success(), "{}", text(&recorded));
    let replayed = wrapped(
        &env,
        "replay",
        "s",
        &client("two"),
        &proxy_argv("example", &absent()),
    );
    assert_eq!(replayed.status.code(), Some(3), "{}", text(&replayed));
    let err = stderr(&replayed);
    assert!(
        err.contains("DIVERGED server `example` connection `"),
        "{err}"
    );
    assert!(
        err.contains(r#"expected tools/call #2 echo {"message":"one"} (tape line"#),
        "{err}"
    );
    assert!(
        err.contains(r#"got      tools/call #2 echo {"message":"two"}"#),
        "{err}"
    );
    assert!(
        err.contains(r#"-      "message": "one""#) && err.contains(r#"+      "message": "two""#),
        "{err}"
    );
    // The client saw the divergence as a JSON-RPC error naming both.
    let client_out = String::from_utf8_lossy(&replayed.stderr);
    assert!(
        client_out.contains("-32090") || client_out.contains("mcptape replay of server"),
        "{client_out}"
    );
}

/// A proxy replaying `tape` to a client driven by the test.
fn replay_proxy(env: &Env, tape: &std::path::Path) -> Proc {
    let mut cmd = env.mcptape(["proxy", "--server", "example", "--replay"]);
    cmd.arg(tape).arg("--").args(absent());
    Proc::spawn(&mut cmd)
}

/// Records INIT, INITIALIZED and the given echo calls with the example server.
fn record_calls(env: &Env, messages: &[&str]) -> std::path::PathBuf {
    let tape = env.path("calls.ndjson");
    let mut cmd = env.mcptape(["proxy", "--server", "example", "--record"]);
    cmd.arg(&tape).arg("--").arg(example_server());
    let mut p = Proc::spawn(&mut cmd);
    p.send(INIT);
    p.recv();
    p.send(INITIALIZED);
    for (i, m) in messages.iter().enumerate() {
        p.send(&echo(i as u32 + 2, m));
        p.recv();
    }
    p.close_stdin();
    assert!(p.wait().success());
    tape
}

#[test]
fn an_extra_call_gets_an_error_and_fails_the_verdict() {
    let env = Env::new();
    let tape = record_calls(&env, &["a"]);
    let mut p = replay_proxy(&env, &tape);
    p.send(r#"{"jsonrpc":"2.0","id":"x","method":"initialize","params":{}}"#);
    assert_eq!(p.recv()["id"], "x", "the live id, typed");
    p.send(INITIALIZED);
    p.send(&echo(2, "a"));
    assert_eq!(p.recv()["result"]["content"][0]["text"], "Echo: a");
    p.send(&echo(3, "extra"));
    let err = p.recv();
    assert_eq!(err["id"], 3);
    assert_eq!(err["error"]["code"], -32090);
    let message = err["error"]["message"].as_str().expect("message");
    assert!(
        message.contains("expected nothing more from the client"),
        "{message}"
    );
    assert!(
        message.contains(r#"got tools/call #3 echo {"message":"extra"}"#),
        "{message}"
    );
    p.close_stdin();
    assert_eq!(p.wait().code(), Some(3));
    assert!(p.stderr().contains("DIVERGED server `example`"));
}

#[test]
fn a_missing_call_is_a_leftover() {
    let env = Env::new();
    let tape = record_calls(&env, &["a", "b"]);
    let mut p = replay_proxy(&env, &tape);
    p.send(INIT);
    p.recv();
    p.send(INITIALIZED);
    p.send(&echo(2, "a"));
    p.recv();
    p.close_stdin();
    assert_eq!(p.wait().code(), Some(3));
    let err = p.stderr();
    assert!(
        err.contains(r#"never sent (tape line "#)
            && err.contains(r#"tools/call #3 echo {"message":"b"}"#),
        "{err}"
    );
}

#[test]
fn pings_are_answered_and_garbage_gets_a_parse_error() {
    let env = Env::new();
    let tape = record_calls(&env, &[]);
    let mut p = replay_proxy(&env, &tape);
    p.send(r#"{"jsonrpc":"2.0","id":99,"method":"ping"}"#);
    assert_eq!(
        p.recv(),
        serde_json::json!({"jsonrpc":"2.0","id":99,"result":{}})
    );
    p.send(INIT);
    p.recv();
    p.send("this is not json");
    let err = p.recv();
    assert_eq!(err["error"]["code"], -32700);
    p.send(INITIALIZED);
    p.close_stdin();
    assert_eq!(p.wait().code(), Some(3), "garbage fails the verdict");
    assert!(
        p.stderr()
            .contains("not a JSON-RPC message: this is not json")
    );
}

#[test]
fn an_mcporter_tape_is_served_to_a_client_that_sends_the_same_calls() {
    let env = Env::new();
    let sample = samples().join("mcporter-0.13.7-everything-echo.ndjson");
    let client = vec![
        "node".into(),
        peer("ts_client.mjs"),
        "echo".into(),
        "--message".into(),
        "hello".into(),
    ];
    let out = wrapped(
        &env,
        "replay",
        &sample.to_string_lossy(),
        &client,
        &proxy_argv("everything", &absent()),
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("Echo: hello"),
        "{}",
        text(&out)
    );
    assert!(
        stderr(&out).contains("ok       server `everything` connection `everything#1`"),
        "{}",
        text(&out)
    );
}

#[test]
fn an_unused_recorded_connection_fails_the_run() {
    let env = Env::new();
    let client = vec![python(), peer("py_client.py"), "echo".into()];
    let script = format!(
        "{0} -- {1} && {0} -- {1}",
        client.join(" "),
        proxy_argv("example", &[example_server()]).join(" ")
    );
    let out = run(&mut env.mcptape(["record", "s", "--", "sh", "-c", &script]));
    assert!(out.status.success(), "{}", text(&out));
    let replayed = wrapped(
        &env,
        "replay",
        "s",
        &client,
        &proxy_argv("example", &absent()),
    );
    assert_eq!(replayed.status.code(), Some(3), "{}", text(&replayed));
    assert!(
        stderr(&replayed).contains("UNUSED   server `example` connection"),
        "{}",
        text(&replayed)
    );
}

#[test]
fn bad_tapes_and_unknown_servers_are_named() {
    let env = Env::new();
    let out = run(&mut env.mcptape(["replay", "nosuch", "--", "true"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("no tape `nosuch` in `")
            && stderr(&out).contains(".mcptape/recordings`"),
        "{}",
        text(&out)
    );

    let tape = record_calls(&env, &["a"]);
    let out = run(env
        .mcptape(["replay", "--server", "other"])
        .arg(&tape)
        .args(["--", "true"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("holds no connection of server `other`; it holds: example"),
        "{}",
        text(&out)
    );

    // A proxy for a server the tape does not hold tells its client, and fails.
    let mut cmd = env.mcptape(["proxy", "--server", "other", "--replay"]);
    cmd.arg(&tape).arg("--").args(absent());
    let mut p = Proc::spawn(&mut cmd);
    p.send(INIT);
    let err = p.recv();
    assert_eq!(err["error"]["code"], -32090);
    assert!(
        err["error"]["message"]
            .as_str()
            .expect("message")
            .contains("holds no connection of server `other`"),
        "{err}"
    );
    p.close_stdin();
    assert_eq!(p.wait().code(), Some(3));
    assert!(
        p.stderr()
            .contains("holds no connection of server `other`; it holds: example")
    );

    // A torn last line replays the rest, with a warning naming the line.
    let mut text_ = std::fs::read_to_string(&tape).expect("tape");
    text_.push_str(r#"{"jsonrpc":"2.0","id":9,"meth"#);
    let torn = env.path("torn.ndjson");
    std::fs::write(&torn, &text_).expect("write");
    let client = vec![
        python(),
        peer("py_client.py"),
        "echo".into(),
        "--message".into(),
        "a".into(),
    ];
    let out = wrapped(
        &env,
        "replay",
        &torn.to_string_lossy(),
        &client,
        &proxy_argv("example", &absent()),
    );
    let lines = text_.lines().count();
    assert!(
        stderr(&out).contains(&format!(
            "torn.ndjson` line {lines}: torn last line ignored"
        )),
        "{}",
        text(&out)
    );

    // A malformed line in the middle is an error with file and line.
    let bad = env.path("bad.ndjson");
    std::fs::write(&bad, text_.replacen("\n", "\n{oops\n", 1)).expect("write");
    let out = run(env.mcptape(["replay"]).arg(&bad).args(["--", "true"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("bad.ndjson` line 2: not valid JSON"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_recorded_server_crash_replays_as_a_crash() {
    let env = Env::new();
    let client = vec![
        python(),
        peer("py_client.py"),
        "echo".into(),
        "--message".into(),
        "boom".into(),
    ];
    let crashing = vec![example_server(), "--exit-mid-call".into(), "echo".into()];
    let recorded = wrapped(
        &env,
        "record",
        "s",
        &client,
        &proxy_argv("example", &crashing),
    );
    assert_eq!(
        recorded.status.code(),
        Some(1),
        "the client fails live: {}",
        text(&recorded)
    );
    let replayed = wrapped(
        &env,
        "replay",
        "s",
        &client,
        &proxy_argv("example", &absent()),
    );
    assert_eq!(
        replayed.status.code(),
        Some(1),
        "and the same way on replay: {}",
        text(&replayed)
    );
    assert_eq!(stdout_of(&replayed), stdout_of(&recorded));
    assert!(
        stderr(&replayed).contains("ok       server `example`"),
        "{}",
        text(&replayed)
    );
}

fn stdout_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn concurrent_clients_get_the_recorded_connection_their_messages_match() {
    let env = Env::new();
    let client = |m: &str| format!("{} {} echo --message {m}", python(), peer("py_client.py"));
    let proxy = |server: &[String]| proxy_argv("example", server).join(" ");
    let live = proxy(&[example_server()]);
    let recorded = run(&mut env.mcptape([
        "record",
        "s",
        "--",
        "sh",
        "-c",
        &format!("{} -- {live} && {} -- {live}", client("one"), client("two")),
    ]));
    assert!(recorded.status.success(), "{}", text(&recorded));
    // Started together, in the other order: each must get its own recording.
    let gone = proxy(&absent());
    let script = format!(
        "{} -- {gone} & {} -- {gone} & wait",
        client("two"),
        client("one")
    );
    let replayed = run(&mut env.mcptape(["replay", "s", "--", "sh", "-c", &script]));
    assert!(replayed.status.success(), "{}", text(&replayed));
    assert_eq!(
        stderr(&replayed)
            .matches("ok       server `example`")
            .count(),
        2,
        "{}",
        text(&replayed)
    );
}

#[test]
fn pace_keeps_delays_but_answers_pings_at_once() {
    let env = Env::new();
    let tape = env.path("slow.ndjson");
    let mut cmd = env.mcptape(["proxy", "--server", "example", "--record"]);
    cmd.arg(&tape).arg("--").arg(example_server());
    let mut p = Proc::spawn(&mut cmd);
    p.send(INIT);
    p.recv();
    p.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"steps":1,"ms":1500}}}"#);
    p.recv();
    p.close_stdin();
    assert!(p.wait().success());

    let mut cmd = env.mcptape(["proxy", "--server", "example", "--pace", "--replay"]);
    cmd.arg(&tape).arg("--").args(absent());
    let mut p = Proc::spawn(&mut cmd);
    p.send(INIT);
    p.recv();
    p.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"steps":1,"ms":1500}}}"#);
    p.send(r#"{"jsonrpc":"2.0","id":"ping","method":"ping"}"#);
    // The ping's answer overtakes the paced, 1.5 s later, answer to the call.
    assert_eq!(p.recv()["id"], "ping");
    assert_eq!(p.recv()["id"], 2);
    p.close_stdin();
    assert!(p.wait().success());
}
