//! Every bad input gets a clear error naming the thing, and loses nothing recorded.

use serde_json::Value;

use crate::record::proxy;
use crate::support::*;

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

fn call(id: u32, tool: &str, args: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{args}}}}}"#
    )
}

fn example(flags: &[&str]) -> Vec<String> {
    let mut argv = vec![example_server()];
    argv.extend(flags.iter().map(|f| f.to_string()));
    argv
}

/// The pid of the proxy's server: its only child (the proxy spawns it from its main
/// thread). Read from /proc, not from the tape, which the tap writes a moment later.
fn server_pid(p: &Proc) -> u32 {
    let pid = p.child.id();
    let children =
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).expect("children");
    children
        .split_whitespace()
        .next()
        .expect("a server process")
        .parse()
        .expect("pid")
}

#[test]
fn a_server_that_writes_garbage_is_passed_through_and_recorded_as_invalid() {
    let env = Env::new();
    let tape = env.path("t.ndjson");
    let mut p = proxy(&env, &tape, &example(&["--garbage"]));
    p.send(INIT);
    p.recv();
    assert_eq!(p.recv_raw().expect("garbage"), b"this is not json\n");
    p.close_stdin();
    assert!(p.wait().success());
    let entries = tape_entries(&tape);
    let invalid = lifecycle(&entries, "$transport/invalid");
    assert_eq!(invalid.len(), 1);
    assert_eq!(
        invalid[0]["params"],
        serde_json::json!({"dir": "recv", "text": "this is not json"})
    );
}

#[test]
fn a_line_over_the_limit_is_streamed_whole_and_recorded_as_length_and_prefix() {
    let env = Env::new();
    let tape = env.path("t.ndjson");
    let mut cmd = env.mcptape([
        "proxy",
        "--server",
        "ex",
        "--max-line-bytes",
        "1000",
        "--record",
    ]);
    cmd.arg(&tape)
        .arg("--")
        .args(example(&["--long-line", "250000"]));
    let mut p = Proc::spawn(&mut cmd);
    p.send(INIT);
    p.recv();
    let long = p.recv_raw().expect("long line");
    assert_eq!(long.len(), 250_001);
    let v: Value = serde_json::from_slice(&long).expect("the long line arrives intact");
    assert_eq!(v["method"], "notifications/message");
    p.send(&call(2, "echo", r#"{"message":"after"}"#));
    assert_eq!(p.recv()["id"], 2);
    p.close_stdin();
    assert!(p.wait().success());
    let entries = tape_entries(&tape);
    let over = lifecycle(&entries, "$transport/oversize");
    assert_eq!(over.len(), 1);
    assert_eq!(over[0]["params"]["dir"], "recv");
    assert_eq!(over[0]["params"]["bytes"], 250_000);
    let prefix = over[0]["params"]["prefix"].as_str().expect("prefix");
    assert!(
        prefix.starts_with(r#"{"jsonrpc":"2.0","method":"notifications/message""#),
        "{prefix}"
    );
    assert_eq!(prefix.len(), 1024);
    // What came after the long line is recorded as usual.
    assert!(
        tape_messages(&tape, "recv")
            .iter()
            .any(|m| m.contains("Echo: after"))
    );
}

#[test]
fn a_server_that_dies_mid_call_ends_the_session_with_its_status() {
    let env = Env::new();
    let tape = env.path("t.ndjson");
    let mut p = proxy(&env, &tape, &example(&["--exit-mid-call", "echo"]));
    p.send(INIT);
    p.recv();
    p.send(&call(2, "echo", r#"{"message":"bye"}"#));
    assert_eq!(
        p.recv_raw(),
        None,
        "the client sees the server's stdout close"
    );
    assert_eq!(p.wait().code(), Some(3));
    let entries = tape_entries(&tape);
    assert!(
        tape_messages(&tape, "send")
            .iter()
            .any(|m| m.contains("bye")),
        "the call is kept"
    );
    let close = lifecycle(&entries, "$transport/close");
    assert_eq!(close[0]["params"]["exitCode"], 3);
    assert_eq!(close[0]["params"]["reason"], "server exited");
}

#[test]
fn a_server_killed_mid_call_gives_128_plus_signal_and_a_close_entry() {
    let env = Env::new();
    let tape = env.path("t.ndjson");
    let mut p = proxy(&env, &tape, &example(&[]));
    p.send(INIT);
    p.recv();
    p.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"steps":100000,"ms":20},"_meta":{"progressToken":"p"}}}"#);
    assert_eq!(p.recv()["method"], "notifications/progress");
    let pid = server_pid(&p);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("kill");
    while p.recv_raw().is_some() {}
    assert_eq!(p.wait().code(), Some(137));
    let close = tape_entries(&tape);
    let close = lifecycle(&close, "$transport/close");
    assert_eq!(close[0]["params"]["signal"], 9);
    assert_eq!(close[0]["params"]["signalName"], "SIGKILL");
}

#[test]
fn a_server_that_ignores_stdin_eof_gets_sigterm() {
    let env = Env::new();
    let tape = env.path("t.ndjson");
    let mut p = proxy(&env, &tape, &example(&["--ignore-stdin-eof"]));
    p.send(INIT);
    p.recv();
    p.close_stdin();
    assert_eq!(p.wait().code(), Some(143));
    p.stderr(); // every holder of stderr, the server included, is gone
    let close = tape_entries(&tape);
    let close = lifecycle(&close, "$transport/close");
    assert_eq!(close[0]["params"]["signalName"], "SIGTERM");
    assert_eq!(close[0]["params"]["reason"], "client closed stdin");
}

#[test]
fn a_server_that_ignores_eof_and_sigterm_gets_sigkill() {
    let env = Env::new();
    let tape = env.path("t.ndjson");
    let server = format!("trap '' TERM; exec {} --ignore-stdin-eof", example_server());
    let mut p = proxy(&env, &tape, &["sh".into(), "-c".into(), server]);
    p.send(INIT);
    p.recv();
    p.close_stdin();
    assert_eq!(p.wait().code(), Some(137));
    p.stderr();
}

#[test]
fn a_client_that_vanishes_leaves_no_server_behind() {
    let env = Env::new();
    let tape = env.path("t.ndjson");
    let mut p = proxy(&env, &tape, &example(&["--ignore-stdin-eof"]));
    p.send(INIT);
    p.recv();
    let pid = server_pid(&p);
    // The client dies: both of its pipe ends close at once.
    p.close_stdin();
    drop(p.child.stdout.take());
    p.wait();
    p.stderr();
    assert!(!alive(pid), "server {pid} survived its client");
}

#[test]
fn a_proxy_killed_outright_takes_its_server_along() {
    let env = Env::new();
    let tape = env.path("t.ndjson");
    let mut p = proxy(&env, &tape, &example(&[]));
    p.send(INIT);
    p.recv();
    let pid = server_pid(&p);
    assert!(alive(pid));
    p.child.kill().expect("SIGKILL the proxy");
    p.wait();
    // stderr reaches EOF only when the server, which shares it and never closes it, is
    // exiting too (PR_SET_PDEATHSIG). Nobody reaps it but init, so /proc may still show it
    // for a moment: the EOF is the proof.
    p.stderr();
}

#[test]
fn sigterm_to_the_proxy_reaches_the_server_and_the_tape_is_complete() {
    let env = Env::new();
    let tape = env.path("t.ndjson");
    let mut p = proxy(&env, &tape, &example(&[]));
    p.send(INIT);
    p.recv();
    p.send(&call(2, "echo", r#"{"message":"last"}"#));
    p.recv();
    let pid = p.child.id() as i32;
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("kill");
    assert_eq!(p.wait().code(), Some(143));
    let entries = tape_entries(&tape);
    assert!(
        tape_messages(&tape, "recv")
            .iter()
            .any(|m| m.contains("Echo: last"))
    );
    let close = lifecycle(&entries, "$transport/close");
    assert_eq!(close[0]["params"]["reason"], "SIGTERM");
}

#[test]
fn a_missing_server_command_is_127_and_recorded() {
    let env = Env::new();
    let tape = env.path("t.ndjson");
    let mut cmd = env.mcptape(["proxy", "--server", "ex", "--record"]);
    cmd.arg(&tape).args(["--", "/nonexistent/server", "--flag"]);
    let out = run(&mut cmd);
    assert_eq!(out.status.code(), Some(127), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("error: cannot start `/nonexistent/server --flag`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("caused by: No such file or directory"),
        "{stderr}"
    );
    let entries = tape_entries(&tape);
    let close = lifecycle(&entries, "$transport/close");
    assert!(
        close[0]["params"]["error"]
            .as_str()
            .expect("error")
            .contains("No such file")
    );
}

#[test]
fn hostile_session_names_are_refused_before_anything_runs() {
    let env = Env::new();
    let marker = env.path("ran");
    for name in ["", "..", "a\\b", ".hidden", "a..b", "bad\u{1b}[0m"] {
        let out = run(env.mcptape(["record", name, "--", "touch"]).arg(&marker));
        assert_eq!(out.status.code(), Some(2), "{name:?}: {}", text(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("invalid session name"),
            "{}",
            text(&out)
        );
        let out = run(&mut env.mcptape(["show", name]));
        assert_eq!(out.status.code(), Some(2), "{name:?}: {}", text(&out));
    }
    assert!(!marker.exists());
}

#[test]
fn an_unwritable_mcptape_home_is_an_error_before_the_command_starts() {
    let env = Env::new();
    let file = env.path("a-file");
    std::fs::write(&file, "").expect("write");
    let marker = env.path("ran");
    let out = run(env
        .mcptape(["record", "s", "--", "touch"])
        .arg(&marker)
        .env("MCPTAPE_HOME", file.join("home")));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot use tape directory"), "{stderr}");
    assert!(stderr.contains("a-file/home/recordings"), "{stderr}");
    assert!(!marker.exists(), "the command ran");
}

#[test]
fn a_full_disk_is_reported_once_and_the_live_session_goes_on() {
    let env = Env::new();
    let proxy = proxy_argv("example", &[example_server()]);
    let mut cmd = env.mcptape([
        "record",
        "/dev/full",
        "--",
        &python(),
        &peer("py_client.py"),
        "echo",
        "--message",
        "still here",
        "--",
    ]);
    cmd.args(proxy);
    let out = run(&mut cmd);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("Echo: still here"),
        "{}",
        text(&out)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("cannot write to tape `/dev/full`").count(),
        2,
        "{stderr}"
    );
    assert!(stderr.contains("No space left on device"), "{stderr}");
    assert!(
        stderr.contains("the recording of server `example` is incomplete"),
        "{stderr}"
    );
}

#[test]
fn a_torn_tape_loads_with_a_warning_and_a_corrupt_one_names_file_and_line() {
    let env = Env::new();
    let good = r#"{"jsonrpc":"2.0","id":1,"method":"ping","_meta":{"dir":"send","server":"s","ts":"2026-11-30T04:35:01.266Z","conn":"c-1"}}"#;
    let torn = env.path("torn.ndjson");
    std::fs::write(
        &torn,
        format!("{good}\n{{\"jsonrpc\":\"2.0\",\"id\":2,\"meth"),
    )
    .expect("write");
    let out = run(env.mcptape(["show", "--full"]).arg(&torn));
    assert!(out.status.success(), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("torn.ndjson` line 2: torn last line ignored"),
        "{stderr}"
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("→ ping #1"),
        "{}",
        text(&out)
    );

    let corrupt = env.path("corrupt.ndjson");
    std::fs::write(&corrupt, format!("{good}\nnot json at all\n{good}\n")).expect("write");
    let out = run(env.mcptape(["show"]).arg(&corrupt));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("corrupt.ndjson` line 2: not a JSON object"),
        "{stderr}"
    );

    let out = run(&mut env.mcptape(["show", "nosuch"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no tape `"),
        "{}",
        text(&out)
    );
}
