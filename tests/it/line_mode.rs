//! Line mode (`MCPTAPE_RELAY=lines`): the stdio proxy drives a child server as a `Link`
//! through the stdio pump, message by message, instead of relaying bytes. What a client
//! and the tape see must be what byte mode gives them.

use std::path::Path;

use crate::support::*;

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// A client's conversation: each line waits for its answer (notifications have none).
fn conversation() -> Vec<(String, bool)> {
    let call = |id: u32, tool: &str, args: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{args}}}}}"#
        )
    };
    vec![
        (INIT.to_owned(), true),
        (INITIALIZED.to_owned(), false),
        (
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#.to_owned(),
            true,
        ),
        (call(3, "echo", r#"{"message":"caf\u00e9 \/"}"#), true),
        (call(4, "exact", "{}"), true),
        (call(5, "add", r#"{"a":1,"b":2.5}"#), true),
    ]
}

/// `mcptape proxy` with `relay` as MCPTAPE_RELAY, recording into `tape` (or replaying
/// it when `replay`), in front of `server`.
fn proxy(env: &Env, relay: &str, mode: &str, tape: &Path, server: &[String]) -> Proc {
    let mut cmd = env.mcptape(["proxy", "--server", "ex", mode]);
    cmd.arg(tape)
        .arg("--")
        .args(server)
        .env("MCPTAPE_RELAY", relay);
    Proc::spawn(&mut cmd)
}

/// Plays the conversation through `p`; returns every byte the client got, then the exit.
fn play(mut p: Proc) -> (Vec<u8>, std::process::ExitStatus) {
    let mut got = Vec::new();
    for (line, answered) in conversation() {
        p.send(&line);
        if answered {
            got.extend(p.recv_raw().expect("an answer"));
        }
    }
    p.close_stdin();
    while let Some(line) = p.recv_raw() {
        got.extend(line);
    }
    (got, p.wait())
}

#[test]
fn a_recording_in_line_mode_has_the_messages_and_the_client_the_bytes_of_byte_mode() {
    let env = Env::new();
    let (bytes_tape, lines_tape) = (env.path("bytes.ndjson"), env.path("lines.ndjson"));
    let server = [example_server()];
    let (by_bytes, status) = play(proxy(&env, "bytes", "--record", &bytes_tape, &server));
    assert!(status.success(), "{status:?}");
    let (by_lines, status) = play(proxy(&env, "lines", "--record", &lines_tape, &server));
    assert!(status.success(), "{status:?}");
    similar_asserts::assert_eq!(
        String::from_utf8_lossy(&by_lines),
        String::from_utf8_lossy(&by_bytes)
    );
    for dir in ["send", "recv"] {
        let lines = tape_messages(&lines_tape, dir);
        assert!(!lines.is_empty(), "{dir}");
        similar_asserts::assert_eq!(lines, tape_messages(&bytes_tape, dir));
    }
    let entries = tape_entries(&lines_tape);
    let start = lifecycle(&entries, "$transport/start");
    assert_eq!(start.len(), 1);
    assert!(start[0]["params"]["pid"].is_u64(), "{}", start[0]);
    let close = lifecycle(&entries, "$transport/close");
    assert_eq!(close.len(), 1);
    assert_eq!(close[0]["params"]["reason"], "client closed stdin");
    assert_eq!(close[0]["params"]["exitCode"], 0);

    // The tape made in line mode replays clean, in either mode, with the same answers.
    for relay in ["bytes", "lines"] {
        let (replayed, status) = play(proxy(&env, relay, "--replay", &lines_tape, &server));
        assert!(status.success(), "{relay}: {status:?}");
        similar_asserts::assert_eq!(
            String::from_utf8_lossy(&replayed),
            String::from_utf8_lossy(&by_bytes)
        );
    }
}

#[test]
fn the_servers_exit_status_passes_through_in_line_mode() {
    let env = Env::new();
    let tape = env.path("t.ndjson");
    let server = [example_server(), "--exit-mid-call".into(), "echo".into()];
    let mut p = proxy(&env, "lines", "--record", &tape, &server);
    p.send(INIT);
    p.recv();
    p.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}}}"#);
    assert!(
        p.recv_raw().is_none(),
        "the server exited without answering"
    );
    assert_eq!(p.wait().code(), Some(3));
    let entries = tape_entries(&tape);
    let close = lifecycle(&entries, "$transport/close");
    assert_eq!(close[0]["params"]["exitCode"], 3, "{}", close[0]);
    assert_eq!(
        close[0]["params"]["reason"], "server exited",
        "{}",
        close[0]
    );
}

#[test]
fn a_client_that_hangs_up_makes_the_server_exit_in_line_mode() {
    let env = Env::new();
    let tape = env.path("t.ndjson");
    let mut p = proxy(&env, "lines", "--record", &tape, &[example_server()]);
    p.send(INIT);
    p.recv();
    p.close_stdin();
    assert_eq!(p.wait().code(), Some(0));
    p.stderr(); // the server, which shares our stderr, is gone too
    let entries = tape_entries(&tape);
    let close = lifecycle(&entries, "$transport/close");
    assert_eq!(close[0]["params"]["reason"], "client closed stdin");
    assert_eq!(close[0]["params"]["exitCode"], 0);
}

#[test]
fn a_server_that_ignores_stdin_closing_gets_sigterm_in_line_mode() {
    let env = Env::new();
    let tape = env.path("t.ndjson");
    let server = [example_server(), "--ignore-stdin-eof".into()];
    let mut p = proxy(&env, "lines", "--record", &tape, &server);
    p.send(INIT);
    p.recv();
    p.close_stdin();
    assert_eq!(p.wait().code(), Some(143));
    p.stderr();
    let entries = tape_entries(&tape);
    let close = lifecycle(&entries, "$transport/close");
    assert_eq!(close[0]["params"]["signalName"], "SIGTERM");
    assert_eq!(close[0]["params"]["reason"], "client closed stdin");
}

#[test]
fn sigterm_to_the_proxy_reaches_the_server_in_line_mode() {
    let env = Env::new();
    let tape = env.path("t.ndjson");
    let mut p = proxy(&env, "lines", "--record", &tape, &[example_server()]);
    p.send(INIT);
    p.recv();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(p.child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("SIGTERM the proxy");
    assert_eq!(p.wait().code(), Some(143));
    p.stderr();
    let entries = tape_entries(&tape);
    let close = lifecycle(&entries, "$transport/close");
    assert_eq!(close[0]["params"]["reason"], "SIGTERM");
    assert_eq!(close[0]["params"]["signalName"], "SIGTERM");
}

#[test]
fn an_unknown_relay_mode_is_a_usage_error() {
    let env = Env::new();
    let out = run(env
        .mcptape(["proxy", "--", "true"])
        .env("MCPTAPE_RELAY", "packets"));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("packets"), "{}", text(&out));
}

/// The one difference line mode has, and what shows it is on: a server line over the
/// maximum cannot be passed on as a message, so it is said on stderr and recorded as its
/// length and prefix, as byte mode records it (byte mode also forwards it).
#[test]
fn a_server_line_over_the_maximum_is_recorded_and_said_but_not_passed_on_in_line_mode() {
    let env = Env::new();
    let tape = env.path("t.ndjson");
    let server = [example_server(), "--long-line".into(), "5000".into()];
    let mut cmd = env.mcptape(["proxy", "--server", "ex", "--max-line-bytes", "3000"]);
    cmd.arg("--record")
        .arg(&tape)
        .arg("--")
        .args(server)
        .env("MCPTAPE_RELAY", "lines");
    let mut p = Proc::spawn(&mut cmd);
    p.send(INIT);
    p.recv();
    p.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    assert_eq!(p.recv()["id"], 2, "the long line was not passed on");
    p.close_stdin();
    assert!(p.wait().success());
    let stderr = p.stderr();
    assert!(
        stderr.contains("wrote a line of 5000 bytes, longer than the maximum"),
        "{stderr}"
    );
    let entries = tape_entries(&tape);
    let oversize = lifecycle(&entries, "$transport/oversize");
    assert_eq!(oversize.len(), 1, "{entries:?}");
    assert_eq!(oversize[0]["params"]["dir"], "recv");
    assert_eq!(oversize[0]["params"]["bytes"], 5000);
}

/// A client line over `--max-line-bytes` cannot be sent whole line by line: it is said on
/// stderr and recorded as its length and prefix, and the conversation goes on.
#[test]
fn a_client_line_over_the_maximum_is_recorded_and_said_but_not_sent_in_line_mode() {
    let env = Env::new();
    let tape = env.path("t.ndjson");
    let mut cmd = env.mcptape(["proxy", "--server", "ex", "--max-line-bytes", "3000"]);
    cmd.arg("--record")
        .arg(&tape)
        .arg("--")
        .arg(example_server())
        .env("MCPTAPE_RELAY", "lines");
    let mut p = Proc::spawn(&mut cmd);
    p.send(INIT);
    p.recv();
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"{}"}}}}}}"#,
        "x".repeat(5000)
    );
    p.send(&long);
    p.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#);
    assert_eq!(p.recv()["id"], 3, "the long line was not sent");
    p.close_stdin();
    assert!(p.wait().success());
    let stderr = p.stderr();
    assert!(
        stderr.contains(&format!("a client line of {} bytes", long.len())),
        "{stderr}"
    );
    let entries = tape_entries(&tape);
    let oversize = lifecycle(&entries, "$transport/oversize");
    assert_eq!(oversize.len(), 1, "{entries:?}");
    assert_eq!(oversize[0]["params"]["dir"], "send");
}
