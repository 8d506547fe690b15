//! `replay --record-mode once|none|new|all` (and `MCPTAPE_MODE`), each with the Python
//! SDK client (tests/peers/py_calls.py) and the example server behind `mcptape proxy`.

use std::process::Output;

use serde_json::Value;

use crate::support::*;

/// A server command that must never run: the replay starts no server.
const ABSENT: &str = "/nonexistent/example-server-that-must-not-start";

/// `mcptape replay SESSION --record-mode MODE FLAGS... -- py_calls.py CALLS... -- proxy`,
/// the proxy over `server`.
fn replay(env: &Env, mode: &str, flags: &[&str], calls: &[&str], server: &str) -> Output {
    let mut cmd = env.mcptape(["replay", "s", "--record-mode", mode]);
    cmd.args(flags)
        .arg("--")
        .arg(python())
        .arg(peer("py_calls.py"))
        .args(calls)
        .arg("--")
        .args(proxy_argv("example", &[server.to_owned()]));
    run(&mut cmd)
}

/// The client's printed calls: tool → text.
fn answers(out: &Output) -> Vec<(String, String)> {
    stdout(out)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["step"] == "call" || v["step"] == "error")
        .map(|v| {
            (
                v["tool"].as_str().unwrap_or_default().to_owned(),
                v["text"].as_str().unwrap_or("<error>").to_owned(),
            )
        })
        .collect()
}

fn pair(tool: &str, text: &str) -> (String, String) {
    (tool.to_owned(), text.to_owned())
}

const ECHO_HI: &str = r#"echo:{"message":"hi"}"#;
const ADD: &str = r#"add:{"a":2,"b":3}"#;

/// The `$transport/start` entries of the tape.
fn starts(env: &Env) -> Vec<Value> {
    let entries = tape_entries(&env.tape("s"));
    lifecycle(&entries, "$transport/start")
        .into_iter()
        .cloned()
        .collect()
}

#[test]
fn once_records_a_missing_tape_then_replays_it_without_the_server() {
    let env = Env::new();
    let first = replay(&env, "once", &[], &[ECHO_HI], &example_server());
    assert!(first.status.success(), "{}", text(&first));
    let tape = env.tape("s");
    assert!(
        stderr(&first).contains(&format!(
            "mcptape: no tape `{}` yet: recording it (--record-mode once)",
            tape.display()
        )),
        "{}",
        text(&first)
    );
    assert_eq!(answers(&first), vec![pair("echo", "Echo: hi")]);
    // The server ran: its start on the tape names a pid.
    let started = starts(&env);
    assert_eq!(started.len(), 1, "{started:?}");
    assert!(started[0]["params"]["pid"].is_u64(), "{started:?}");
    let recorded = std::fs::read(&tape).expect("tape");

    let second = replay(&env, "once", &[], &[ECHO_HI], ABSENT);
    assert!(second.status.success(), "{}", text(&second));
    assert!(
        !stderr(&second).contains("recording it"),
        "{}",
        text(&second)
    );
    assert!(
        stderr(&second).contains("mcptape: ok "),
        "{}",
        text(&second)
    );
    assert_eq!(answers(&second), vec![pair("echo", "Echo: hi")]);
    assert_eq!(
        std::fs::read(&tape).expect("tape"),
        recorded,
        "replay wrote"
    );
}

#[test]
fn once_from_the_environment_records_too_and_prints_the_record_variables_without_cmd() {
    let env = Env::new();
    let out = run(env.mcptape(["replay", "s"]).env("MCPTAPE_MODE", "once"));
    assert!(out.status.success(), "{}", text(&out));
    let tape = env.tape("s");
    assert!(
        stdout(&out).contains(&format!("MCPTAPE_RECORD='{}'", tape.display())),
        "{}",
        text(&out)
    );
    let mut cmd = env.mcptape(["replay", "s", "--"]);
    cmd.env("MCPTAPE_MODE", "once")
        .arg(python())
        .arg(peer("py_calls.py"))
        .arg(ECHO_HI)
        .arg("--")
        .args(proxy_argv("example", &[example_server()]));
    let recorded = run(&mut cmd);
    assert!(recorded.status.success(), "{}", text(&recorded));
    assert!(tape.exists(), "{}", text(&recorded));
    // Now that it exists, the variables are the replay's.
    let out = run(env.mcptape(["replay", "s"]).env("MCPTAPE_MODE", "once"));
    assert!(
        stdout(&out).contains(&format!("MCPTAPE_REPLAY='{}'", tape.display())),
        "{}",
        text(&out)
    );
}

#[test]
fn none_fails_on_a_missing_tape_naming_it() {
    let env = Env::new();
    let out = replay(&env, "none", &[], &[ECHO_HI], &example_server());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(stderr(&out).contains("no tape `s` in `"), "{}", text(&out));
    assert!(!env.tape("s").exists());
}

#[test]
fn all_records_every_time_and_keeps_the_previous_tape_as_prev() {
    let env = Env::new();
    let first = replay(&env, "all", &[], &[ECHO_HI], &example_server());
    assert!(first.status.success(), "{}", text(&first));
    let second = replay(
        &env,
        "all",
        &[],
        &[r#"echo:{"message":"again"}"#],
        &example_server(),
    );
    assert!(second.status.success(), "{}", text(&second));
    assert_eq!(answers(&second), vec![pair("echo", "Echo: again")]);
    let now = std::fs::read_to_string(env.tape("s")).expect("tape");
    let prev = env.mcptape_home().join("recordings/s.prev.ndjson");
    let prev = std::fs::read_to_string(&prev).expect(".prev");
    assert!(now.contains("again") && !now.contains("\"hi\""), "{now}");
    assert!(prev.contains("\"hi\"") && !prev.contains("again"), "{prev}");
    // Recording, the server is needed: without it the run fails.
    let third = replay(&env, "all", &[], &[ECHO_HI], ABSENT);
    assert!(!third.status.success(), "{}", text(&third));
}

/// Records echo, then replays echo and add with `--record-mode new`: the run's output.
fn record_then_add(env: &Env) -> Output {
    let recorded = replay(env, "all", &[], &[ECHO_HI], &example_server());
    assert!(recorded.status.success(), "{}", text(&recorded));
    let added = replay(env, "new", &[], &[ECHO_HI, ADD], &example_server());
    assert!(added.status.success(), "{}", text(&added));
    added
}

#[test]
fn new_forwards_an_added_call_and_appends_it_as_a_marked_connection() {
    let env = Env::new();
    let recorded = replay(&env, "all", &[], &[ECHO_HI], &example_server());
    assert!(recorded.status.success(), "{}", text(&recorded));
    let before = std::fs::read_to_string(env.tape("s")).expect("tape");

    let added = replay(&env, "new", &[], &[ECHO_HI, ADD], &example_server());
    assert!(added.status.success(), "{}", text(&added));
    assert_eq!(
        answers(&added),
        vec![pair("echo", "Echo: hi"), pair("add", "5")]
    );
    let after = std::fs::read_to_string(env.tape("s")).expect("tape");
    assert!(after.starts_with(&before), "the recorded run was changed");
    let entries = tape_entries(&env.tape("s"));
    let line = entries
        .iter()
        .position(|e| e["method"] == "tools/call" && e["params"]["name"] == "add")
        .map(|i| i + 1)
        .expect("the added call is on the tape");
    assert!(
        stderr(&added).contains(&format!("added (tape line {line}): tools/call add")),
        "{}",
        text(&added)
    );
    assert!(stderr(&added).contains("mcptape: ok "), "{}", text(&added));
    // A connection of its own, marked, with the recorded handshake played to it.
    let started = starts(&env);
    assert_eq!(started.len(), 2, "{started:?}");
    assert_eq!(started[1]["params"]["added"], "record-mode new");
    assert!(started[0]["params"].get("added").is_none());
    let conn = started[1]["_meta"]["conn"].clone();
    let segment: Vec<&Value> = entries
        .iter()
        .filter(|e| e["_meta"]["conn"] == conn)
        .collect();
    let methods: Vec<&str> = segment
        .iter()
        .filter_map(|e| e["method"].as_str())
        .collect();
    assert_eq!(
        methods,
        [
            "$transport/start",
            "initialize",
            "notifications/initialized",
            "tools/call",
            "$transport/close"
        ],
        "{segment:?}"
    );
}

#[test]
fn the_connection_new_added_replays_next_time_with_match_any_and_no_server() {
    let env = Env::new();
    record_then_add(&env);
    let replayed = replay(&env, "none", &["--match", "any"], &[ECHO_HI, ADD], ABSENT);
    assert!(replayed.status.success(), "{}", text(&replayed));
    assert_eq!(
        answers(&replayed),
        vec![pair("echo", "Echo: hi"), pair("add", "5")]
    );
}

#[test]
fn new_without_a_server_to_start_answers_an_error_and_fails_the_verdict() {
    let env = Env::new();
    let recorded = replay(&env, "all", &[], &[ECHO_HI], &example_server());
    assert!(recorded.status.success(), "{}", text(&recorded));
    let before = std::fs::read(env.tape("s")).expect("tape");
    let out = replay(&env, "new", &[], &[ECHO_HI, ADD], ABSENT);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(stdout(&out).contains(r#""code": -32090"#), "{}", text(&out));
    assert!(
        stderr(&out).contains("could not be forwarded to the real server"),
        "{}",
        text(&out)
    );
    assert_eq!(std::fs::read(env.tape("s")).expect("tape"), before);
}

#[test]
fn new_with_a_matching_mode_it_cannot_serve_next_time_is_refused() {
    let env = Env::new();
    let recorded = replay(&env, "all", &[], &[ECHO_HI], &example_server());
    assert!(recorded.status.success(), "{}", text(&recorded));
    for flag in [&["--match", "strict"][..], &["--unordered"]] {
        let out = replay(&env, "new", flag, &[ECHO_HI], ABSENT);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(
            stderr(&out).contains("--record-mode new replays with --match any"),
            "{}",
            text(&out)
        );
    }
    // Without a command, `new` exports the mode and `any`.
    let out = run(&mut env.mcptape(["replay", "s", "--record-mode", "new"]));
    assert!(
        stdout(&out).contains("MCPTAPE_MODE='new'") && stdout(&out).contains("MCPTAPE_MATCH='any'"),
        "{}",
        text(&out)
    );
}

#[test]
fn new_routes_the_live_servers_progress_to_the_client_while_the_rest_replays() {
    let env = Env::new();
    let recorded = replay(&env, "all", &[], &[ECHO_HI], &example_server());
    assert!(recorded.status.success(), "{}", text(&recorded));
    let slow = r#"slow:{"steps":2,"ms":1}"#;
    let out = replay(&env, "new", &[], &[slow, ECHO_HI], &example_server());
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        answers(&out),
        vec![pair("slow", "done after 2 steps"), pair("echo", "Echo: hi")]
    );
    let progress: Vec<String> = stdout(&out)
        .lines()
        .filter(|l| l.contains(r#""step": "progress""#))
        .map(String::from)
        .collect();
    assert_eq!(progress.len(), 2, "{}", text(&out));
    assert!(
        stderr(&out).contains("): tools/call slow") && !stderr(&out).contains("tools/call echo"),
        "{}",
        text(&out)
    );
}

/// Records a sampling-capable client's echo behind `proxy` into `s`, then runs it again
/// under `--record-mode new` with a long-running call (progress) and a call that makes
/// the server ask the client for sampling added.
fn sampling_added_to_an_echo(env: &Env, proxy: &[String]) -> Output {
    let client = |calls: &[&str]| {
        let mut argv = vec![python(), peer("py_calls.py"), "--sampling".to_owned()];
        argv.extend(calls.iter().map(|c| (*c).to_owned()));
        argv.push("--".into());
        argv
    };
    let recorded = run(env
        .mcptape(["replay", "s", "--record-mode", "all", "--"])
        .args(client(&[ECHO_HI]))
        .args(proxy));
    assert!(recorded.status.success(), "{}", text(&recorded));
    run(env
        .mcptape(["replay", "s", "--record-mode", "new", "--"])
        .args(client(&[
            ECHO_HI,
            r#"trigger-long-running-operation:{"duration":0.2,"steps":2}"#,
            r#"trigger-sampling-request:{"prompt":"say hi","maxTokens":20}"#,
        ]))
        .args(proxy))
}

/// What [`sampling_added_to_an_echo`] must find: progress came, the server's sampling
/// request reached the client and its answer went back (the tool's result quotes it),
/// and both calls were added, the echo replayed.
fn assert_added_with_sampling(env: &Env, out: &Output) {
    assert!(out.status.success(), "{}", text(out));
    let got = stdout(out);
    assert_eq!(
        got.matches(r#""step": "progress""#).count(),
        2,
        "{}",
        text(out)
    );
    assert!(
        got.contains(r#"{"step": "sampling", "prompt": "#),
        "{}",
        text(out)
    );
    assert!(got.contains(r#"\"text\": \"sampled: "#), "{}", text(out));
    assert_eq!(answers(out)[0], pair("echo", "Echo: hi"));
    let err = stderr(out);
    for tool in ["trigger-long-running-operation", "trigger-sampling-request"] {
        assert!(
            err.contains(&format!("): tools/call {tool}")),
            "{}",
            text(out)
        );
    }
    assert!(!err.contains("tools/call echo"), "{}", text(out));
    let entries = tape_entries(&env.tape("s"));
    let starts = lifecycle(&entries, "$transport/start");
    assert_eq!(starts.len(), 2, "{starts:?}");
    assert_eq!(starts[1]["params"]["added"], "record-mode new");
    // The server's request and the client's answer are on the added connection.
    let conn = &starts[1]["_meta"]["conn"];
    let mine: Vec<&Value> = entries
        .iter()
        .filter(|e| e["_meta"]["conn"] == *conn)
        .collect();
    assert!(
        mine.iter().any(|e| e["method"] == "sampling/createMessage"),
        "{mine:?}"
    );
    assert!(
        mine.iter()
            .any(|e| e["_meta"]["dir"] == "send" && e["result"]["model"] == "py-calls"),
        "{mine:?}"
    );
}

#[test]
fn new_routes_a_live_server_request_and_the_clients_answer_over_stdio() {
    let env = Env::new();
    let out = sampling_added_to_an_echo(&env, &proxy_argv("everything", &everything_server()));
    assert_added_with_sampling(&env, &out);
}

#[test]
fn new_forwards_to_the_proxys_url_server() {
    let env = Env::new();
    let server = crate::http::HttpServer::start();
    let proxy = vec![
        bin().display().to_string(),
        "proxy".into(),
        "--server".into(),
        "everything".into(),
        "--url".into(),
        server.url.clone(),
    ];
    let out = sampling_added_to_an_echo(&env, &proxy);
    assert_added_with_sampling(&env, &out);
}

#[test]
fn faults_are_passed_on_whether_the_mode_records_or_replays() {
    let env = Env::new();
    let rule = r#"tools/call name=echo: error -32000 "rate limited""#;
    let export = |env: &Env| {
        let out = run(&mut env.mcptape(["replay", "s", "--record-mode", "once", "--fault", rule]));
        assert!(out.status.success(), "{}", text(&out));
        stdout(&out)
    };
    // No tape: the record variables, with the rule.
    let recording = export(&env);
    assert!(recording.contains("export MCPTAPE_RECORD="), "{recording}");
    assert!(recording.contains("rate limited"), "{recording}");
    let recorded = replay(&env, "once", &[], &[ECHO_HI], &example_server());
    assert!(recorded.status.success(), "{}", text(&recorded));
    // A tape: the replay variables, with the rule.
    let replaying = export(&env);
    assert!(replaying.contains("export MCPTAPE_REPLAY="), "{replaying}");
    assert!(replaying.contains("rate limited"), "{replaying}");
}

#[test]
fn a_standalone_replaying_proxy_with_mcptape_mode_new_adds_and_says_so() {
    let env = Env::new();
    let recorded = replay(&env, "all", &[], &[ECHO_HI], &example_server());
    assert!(recorded.status.success(), "{}", text(&recorded));
    let tape = env.tape("s");
    let mut proxy = Proc::spawn(
        env.mcptape(["proxy", "--server", "example", "--replay"])
            .arg(&tape)
            .arg("--")
            .arg(example_server())
            .env("MCPTAPE_MODE", "new"),
    );
    proxy.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#);
    let init = proxy.recv();
    assert_eq!(
        init["result"]["serverInfo"]["name"], "mcptape-example",
        "{init}"
    );
    proxy.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    proxy.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}"#);
    let sum = proxy.recv();
    assert_eq!(sum["id"], 1, "{sum}");
    assert_eq!(sum["result"]["content"][0]["text"], "5", "{sum}");
    proxy.close_stdin();
    assert!(proxy.wait().success());
    let err = proxy.stderr();
    assert!(err.contains("): tools/call add"), "{err}");
}

#[test]
fn the_http_front_warns_that_new_is_stdio_only() {
    let env = Env::new();
    let recorded = replay(&env, "all", &[], &[ECHO_HI], &example_server());
    assert!(recorded.status.success(), "{}", text(&recorded));
    let mut front = env
        .mcptape([
            "proxy",
            "--server",
            "example",
            "--listen",
            "127.0.0.1:0",
            "--replay",
        ])
        .arg(env.tape("s"))
        .env("MCPTAPE_MODE", "new")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn the front");
    let said = crate::http::after_stderr_line(&mut front, "mcptape: warning: ", "the front");
    let _ = front.kill();
    let _ = front.wait();
    assert!(
        said.starts_with("--record-mode new is stdio-only for now"),
        "{said}"
    );
}

#[test]
fn new_fails_the_verdict_when_the_real_server_dies_before_answering_and_says_why() {
    let env = Env::new();
    let recorded = replay(&env, "all", &[], &[ECHO_HI], &example_server());
    assert!(recorded.status.success(), "{}", text(&recorded));
    let dying = env.path("dying.sh");
    std::fs::write(&dying, "#!/bin/sh\necho oops >&2\nexit 4\n").expect("script");
    std::os::unix::fs::PermissionsExt::set_mode(
        &mut std::fs::metadata(&dying).expect("meta").permissions(),
        0o755,
    );
    std::fs::set_permissions(&dying, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let out = replay(&env, "new", &[], &[ECHO_HI, ADD], &dying.to_string_lossy());
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(
        stderr(&out).contains("the real server ended before answering 1 forwarded request"),
        "{}",
        text(&out)
    );
    // Its close on the tape says the server went, not that the client hung up.
    let entries = tape_entries(&env.tape("s"));
    let closes = lifecycle(&entries, "$transport/close");
    let last = closes.last().expect("a close");
    assert_eq!(last["params"]["reason"], "server exited", "{last}");
}

#[test]
fn new_lists_a_recorded_connection_no_client_used_without_failing_as_any_does() {
    let env = Env::new();
    // Two recorded connections: two runs of the client appended by `new` on an empty
    // start would do too; two `all` runs keep one, so record the second with `new`.
    let recorded = replay(&env, "all", &[], &[ECHO_HI], &example_server());
    assert!(recorded.status.success(), "{}", text(&recorded));
    let added = replay(&env, "new", &[], &[ECHO_HI, ADD], &example_server());
    assert!(added.status.success(), "{}", text(&added));
    // A client that needs only the first connection: the added one goes unused.
    let out = replay(&env, "new", &[], &[ECHO_HI], ABSENT);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(!stderr(&out).contains("UNUSED"), "{}", text(&out));
}
