//! Recording through the proxy: exact bytes, every message, many proxies, `record`.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use mcptape::LifecycleKind;
use serde_json::Value;

use crate::support::*;

/// `sh -c` that tees what the server reads and writes into two files: an independent
/// witness of the exact bytes that crossed the wire between proxy and server.
fn teed(env: &Env, server: &[String]) -> Vec<String> {
    let mut argv = vec![
        "sh".to_string(),
        "-c".into(),
        r#"in="$1"; out="$2"; shift 2; tee "$in" | "$@" | tee "$out""#.into(),
        "sh".into(),
        env.path("wire-in.log").to_string_lossy().into_owned(),
        env.path("wire-out.log").to_string_lossy().into_owned(),
    ];
    argv.extend(server.iter().cloned());
    argv
}

fn wire_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .expect("wire log")
        .lines()
        .map(|l| l.trim_end_matches('\r').to_owned())
        .filter(|l| !l.is_empty())
        .collect()
}

/// Records `client SCENARIO -- mcptape proxy -- <teed server>` and checks the tape
/// against the wire, message for message and byte for byte.
fn record_and_compare(
    client: &[String],
    scenario: &str,
    server_name: &str,
    server: &[String],
) -> (Env, Vec<Value>) {
    let env = Env::new();
    let mut cmd = env.mcptape(["record", "s", "--"]);
    cmd.args(client).args([scenario, "--"]);
    cmd.arg(bin())
        .args(["proxy", "--server", server_name, "--"])
        .args(teed(&env, server));
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(r#"{"step": "closed"}"#) || stdout.contains(r#"{"step":"closed"}"#),
        "{}",
        text(&out)
    );
    // The SDK clients scrub their servers' environment: the mode came from an ancestor.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("from the environment of ancestor"),
        "{stderr}"
    );

    let tape = env.tape("s");
    let sent = tape_messages(&tape, "send");
    let received = tape_messages(&tape, "recv");
    similar_asserts::assert_eq!(sent, wire_lines(&env.path("wire-in.log")));
    similar_asserts::assert_eq!(received, wire_lines(&env.path("wire-out.log")));
    let entries = tape_entries(&tape);
    assert_eq!(lifecycle(&entries, "$transport/start").len(), 1);
    let close = lifecycle(&entries, "$transport/close");
    assert_eq!(close.len(), 1);
    assert_eq!(close[0]["params"]["exitCode"], 0, "{}", close[0]);
    assert!(entries.iter().all(|e| e["_meta"]["server"] == server_name));
    let conns: std::collections::BTreeSet<&str> = entries
        .iter()
        .filter_map(|e| e["_meta"]["conn"].as_str())
        .collect();
    assert_eq!(conns.len(), 1);
    (env, entries)
}

fn methods(entries: &[Value], dir: &str) -> Vec<String> {
    entries
        .iter()
        .filter(|e| e["_meta"]["dir"] == dir)
        .filter_map(|e| e["method"].as_str().map(String::from))
        .collect()
}

#[test]
fn python_sdk_client_and_example_server_recorded_byte_exact() {
    let client = vec![python(), peer("py_client.py")];
    let (env, entries) = record_and_compare(&client, "example", "example", &[example_server()]);
    let sent = methods(&entries, "send");
    for m in [
        "initialize",
        "notifications/initialized",
        "tools/list",
        "tools/call",
    ] {
        assert!(sent.iter().any(|s| s == m), "{m} missing from {sent:?}");
    }
    assert_eq!(
        methods(&entries, "recv")
            .iter()
            .filter(|m| *m == "notifications/progress")
            .count(),
        3
    );
    // The hand-written answer of `exact` is in the tape as the server spelled it.
    let recv = tape_messages(&env.tape("s"), "recv");
    assert!(
        recv.iter().any(|m| m.contains(r#""result":{"z":1.0,"content":[{"type":"text","text":"caf\u00e9 \/ 1.0"}],"a":[1e2,-0.0]}"#)),
        "{recv:#?}"
    );
    // Private by default.
    let dir_mode = std::fs::metadata(env.mcptape_home().join("recordings"))
        .expect("dir")
        .permissions()
        .mode();
    let tape_mode = std::fs::metadata(env.tape("s"))
        .expect("tape")
        .permissions()
        .mode();
    assert_eq!((dir_mode & 0o777, tape_mode & 0o777), (0o700, 0o600));
}

#[test]
fn python_sdk_client_and_server_everything_recorded_byte_exact() {
    let client = vec![python(), peer("py_client.py")];
    let (_env, entries) =
        record_and_compare(&client, "everything", "everything", &everything_server());
    let sent = methods(&entries, "send");
    for m in [
        "initialize",
        "tools/list",
        "tools/call",
        "resources/list",
        "prompts/list",
    ] {
        assert!(sent.iter().any(|s| s == m), "{m} missing from {sent:?}");
    }
    // server-everything announces list changes on its own: recorded in order too.
    assert!(
        methods(&entries, "recv")
            .iter()
            .any(|m| m.starts_with("notifications/"))
    );
}

#[test]
fn typescript_sdk_client_and_server_everything_recorded_byte_exact() {
    let client = vec!["node".to_string(), peer("ts_client.mjs")];
    let (_env, entries) =
        record_and_compare(&client, "everything", "everything", &everything_server());
    // The TypeScript SDK writes `method` before `jsonrpc`; the tape keeps that order.
    let init = entries
        .iter()
        .find(|e| e["method"] == "initialize")
        .expect("initialize");
    let first_key = init.as_object().expect("object").keys().next().cloned();
    assert_eq!(first_key.as_deref(), Some("method"));
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

/// A proxy recording into `tape`, in front of `server` (teed into the env's wire logs).
pub fn proxy(env: &Env, tape: &Path, server: &[String]) -> Proc {
    let mut cmd = env.mcptape(["proxy", "--server", "ex", "--record"]);
    cmd.arg(tape).arg("--").args(server);
    Proc::spawn(&mut cmd)
}

#[test]
fn raw_bytes_pass_unchanged_both_ways_and_into_the_tape() {
    let env = Env::new();
    let tape = env.path("raw.ndjson");
    let mut p = proxy(&env, &tape, &teed(&env, &[example_server()]));
    // Odd spacing, CRLF, a float id, escapes: none of it may change.
    let odd = "{ \"jsonrpc\":\"2.0\",  \"id\":1.0, \"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"message\":\"caf\\u00e9 \\/\"}}}";
    p.write(format!("{INIT}\n{odd}\r\n").as_bytes());
    let _init = p.recv();
    let answer = p.recv_raw().expect("answer");
    assert_eq!(
        String::from_utf8(answer).expect("utf8"),
        "{\"jsonrpc\":\"2.0\",\"id\":1.0,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"Echo: café /\"}]}}\n"
    );
    p.close_stdin();
    assert!(p.wait().success());
    let wire = std::fs::read_to_string(env.path("wire-in.log")).expect("wire");
    assert_eq!(wire, format!("{INIT}\n{odd}\r\n"));
    assert_eq!(
        tape_messages(&tape, "send"),
        vec![INIT.to_string(), odd.to_string()]
    );
}

#[test]
fn a_batch_line_is_forwarded_whole_and_recorded_element_by_element() {
    let env = Env::new();
    let tape = env.path("batch.ndjson");
    let mut p = proxy(&env, &tape, &teed(&env, &[example_server()]));
    let batch = r#"[{"jsonrpc":"2.0","id":7,"method":"ping"}, {"jsonrpc":"2.0","method":"notifications/x"}]"#;
    p.send(batch);
    let answer = p.recv();
    assert_eq!(
        answer["error"]["code"], -32600,
        "the example server refuses batches: {answer}"
    );
    p.close_stdin();
    assert!(p.wait().success());
    assert_eq!(
        std::fs::read_to_string(env.path("wire-in.log")).expect("wire"),
        format!("{batch}\n")
    );
    let entries = tape_entries(&tape);
    let batched: Vec<&Value> = entries
        .iter()
        .filter(|e| e["_meta"]["batch"] == 1)
        .collect();
    assert_eq!(batched.len(), 2);
    assert_eq!(batched[0]["method"], "ping");
    assert_eq!(batched[1]["method"], "notifications/x");
    assert_eq!(
        tape_messages(&tape, "send"),
        vec![
            r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/x"}"#
        ]
    );
}

#[test]
fn eight_proxies_share_one_tape_without_interleaving() {
    const PROXIES: usize = 8;
    const CALLS: usize = 40;
    let env = Env::new();
    let tape = env.path("shared.ndjson");
    let mut procs: Vec<Proc> = (0..PROXIES)
        .map(|_| proxy(&env, &tape, &[example_server()]))
        .collect();
    // Every proxy gets its whole load at once, so that their writes race.
    for p in procs.iter_mut() {
        let mut load = format!("{INIT}\n");
        for id in 2..CALLS + 2 {
            load.push_str(&format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"{}"}}}}}}"#,
                "x".repeat(id * 50)
            ));
            load.push('\n');
        }
        p.write(load.as_bytes());
    }
    for p in procs.iter_mut() {
        for _ in 0..CALLS + 1 {
            p.recv();
        }
        p.close_stdin();
    }
    for p in procs.iter_mut() {
        assert!(p.wait().success());
    }
    let loaded = mcptape::Tape::load(&tape).expect("every line parses");
    let conns = loaded.connections();
    assert_eq!(conns.len(), PROXIES);
    for conn in conns {
        let entries: Vec<_> = conn.entries.iter().map(|&i| &loaded.entries[i]).collect();
        // start, then initialize and its answer, the calls in order, then close.
        assert_eq!(entries.len(), 2 + 2 * (CALLS + 1), "{}", conn.id);
        assert_eq!(LifecycleKind::of(entries[0]), Some(LifecycleKind::Start));
        assert_eq!(
            entries.last().and_then(|e| LifecycleKind::of(e)),
            Some(LifecycleKind::Close)
        );
        let ids = |dir: &str| -> Vec<String> {
            entries
                .iter()
                .filter(|e| e.meta.dir.as_str() == dir)
                .map(|e| e.message.id().expect("id").to_owned())
                .collect()
        };
        let expected: Vec<String> = (1..CALLS + 2).map(|i| i.to_string()).collect();
        assert_eq!(ids("send"), expected);
        assert_eq!(ids("recv"), expected);
    }
}

#[test]
fn one_record_run_keeps_every_connection_and_the_previous_tape() {
    let env = Env::new();
    let client = format!("{} {} echo --message", python(), peer("py_client.py"));
    let proxy = format!(
        "{} proxy --server example -- {}",
        bin().display(),
        example_server()
    );
    let script = format!("{client} one -- {proxy} && {client} two -- {proxy}");
    let out = run(&mut env.mcptape(["record", "s", "--", "sh", "-c", &script]));
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("in 2 connections of example"),
        "{}",
        text(&out)
    );
    let first = std::fs::read(env.tape("s")).expect("tape");
    let loaded = mcptape::Tape::load(&env.tape("s")).expect("load");
    assert_eq!(loaded.connections().len(), 2);

    // Recording the session again keeps the first tape as .prev.
    std::fs::set_permissions(env.tape("s"), std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let out = run(&mut env.mcptape([
        "record",
        "s",
        "--",
        "sh",
        "-c",
        &format!("{client} three -- {proxy}"),
    ]));
    assert!(out.status.success(), "{}", text(&out));
    let prev = env.mcptape_home().join("recordings/s.prev.ndjson");
    assert_eq!(std::fs::read(prev).expect("prev"), first);
    let again = mcptape::Tape::load(&env.tape("s")).expect("load");
    assert_eq!(again.connections().len(), 1);
    let mode = std::fs::metadata(env.tape("s"))
        .expect("tape")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn record_without_a_command_prints_exports_that_work_by_hand() {
    let env = Env::new();
    let out = run(&mut env.mcptape(["record", "byhand"]));
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let tape = env.tape("byhand");
    assert!(
        stdout.contains(&format!("export MCPTAPE_RECORD='{}'", tape.display())),
        "{stdout}"
    );
    assert!(stdout.contains("unset MCPTAPE_REPLAY"), "{stdout}");

    // MCPTAPE_RECORD=<name> in a proxy's own environment records there.
    let mut cmd = env.mcptape(["proxy", "--", &example_server()]);
    cmd.env("MCPTAPE_RECORD", "byhand");
    let mut p = Proc::spawn(&mut cmd);
    p.send(INIT);
    p.recv();
    p.close_stdin();
    assert!(p.wait().success());
    assert!(p.stderr().contains("MCPTAPE_RECORD is set"));
    assert_eq!(tape_messages(&tape, "send"), vec![INIT.to_string()]);
}

#[test]
fn record_server_filter_leaves_other_servers_live_and_unrecorded() {
    let env = Env::new();
    let proxy = proxy_argv("example", &[example_server()]);
    let mut cmd = env.mcptape([
        "record",
        "s",
        "--server",
        "other",
        "--",
        &python(),
        &peer("py_client.py"),
        "echo",
        "--",
    ]);
    cmd.args(proxy);
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("Echo: hi"),
        "{}",
        text(&out)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("nothing was recorded"),
        "{}",
        text(&out)
    );
    assert_eq!(std::fs::read(env.tape("s")).expect("tape").len(), 0);
}

#[test]
fn without_a_mode_the_proxy_is_a_silent_passthrough() {
    let env = Env::new();
    let mut p = Proc::spawn(&mut env.mcptape(["proxy", "--server", "ex", "--", &example_server()]));
    p.send(INIT);
    assert_eq!(p.recv()["result"]["serverInfo"]["name"], "mcptape-example");
    p.close_stdin();
    assert!(p.wait().success());
    assert!(!p.stderr().contains("recording"));
    assert!(
        !env.mcptape_home().exists(),
        "a passthrough proxy wrote something"
    );
}

#[test]
fn an_empty_mcptape_record_turns_an_ancestor_s_recording_off() {
    let env = Env::new();
    let script = format!(
        "MCPTAPE_RECORD= exec {} {} echo -- {} proxy --server example -- {}",
        python(),
        peer("py_client.py"),
        bin().display(),
        example_server()
    );
    let out = run(&mut env.mcptape(["record", "s", "--", "sh", "-c", &script]));
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("nothing was recorded"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_tape_that_cannot_be_written_leaves_the_session_live_and_fails_record() {
    let env = Env::new();
    let script = format!(
        "MCPTAPE_RECORD='bad..name' exec {} {} echo -- {} proxy --server example -- {}",
        python(),
        peer("py_client.py"),
        bin().display(),
        example_server()
    );
    let out = run(&mut env.mcptape(["record", "s", "--", "sh", "-c", &script]));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("Echo: hi"),
        "{}",
        text(&out)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("not recording server `example`: invalid session name `bad..name`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("the recording of server `example` is incomplete"),
        "{stderr}"
    );
}
