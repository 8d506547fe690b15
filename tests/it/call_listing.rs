//! A CI check that checks: `mcptape call` lists the server's tools before it calls, so
//! `verify` knows which recorded calls are read-only and plays them; an unknown tool is
//! named with the server's tools; `verify` says loudly when it compared nothing, and
//! `--fail-on-skip` fails such a run.

use std::path::Path;

use serde_json::Value;

use crate::support::*;

fn with_example_config(env: &Env) {
    let config = serde_json::json!({"mcpServers": {"example": {"command": example_server()}}});
    std::fs::write(env.path(".mcp.json"), config.to_string()).expect("config");
}

fn methods(tape: &Path) -> Vec<String> {
    tape_messages(tape, "send")
        .iter()
        .map(|s| {
            let v: Value = serde_json::from_str(s).expect("json");
            v["method"].as_str().unwrap_or("(answer)").to_owned()
        })
        .collect()
}

fn verify(env: &Env, session: &str, flags: &[&str], server_flags: &[&str]) -> std::process::Output {
    let mut cmd = env.mcptape(["verify", session]);
    cmd.args(flags)
        .arg("--")
        .arg(example_server())
        .args(server_flags);
    run(cmd)
}

#[test]
fn a_call_tape_lists_the_tools_so_verify_plays_it_and_fails_on_a_changed_answer() {
    let env = Env::new();
    with_example_config(&env);
    let out = run(env.mcptape(["call", "--record", "f", "example.greet", "name:Ada"]));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        methods(&env.tape("f")),
        [
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/call"
        ]
    );

    let out = verify(&env, "f", &["--fail-on-skip"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stdout(&out).contains(": 2 same, 0 changed\n"),
        "{}",
        text(&out)
    );
    assert!(
        !text(&out).contains("nothing was compared"),
        "{}",
        text(&out)
    );

    let out = verify(&env, "f", &["--fail-on-skip"], &["--variant"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        stdout(&out).contains("changed    tools/call greet (tape line 7)"),
        "{}",
        text(&out)
    );
}

#[test]
fn an_unknown_tool_is_named_with_the_servers_tools_and_the_closest_one() {
    let env = Env::new();
    with_example_config(&env);
    let out = run(env.mcptape(["call", "example.ecoh", "message:hi"]));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = stderr(&out);
    assert!(
        err.contains("error: server `example` has no tool `ecoh`; did you mean `echo`? (its tools: `echo`, `add`,"),
        "{err}"
    );
    assert!(err.contains("`write_note`)"), "{err}");
    assert!(
        err.contains("caused by: server `example` answered tools/call ecoh with error -32602: unknown tool: ecoh"),
        "{err}"
    );
}

#[test]
fn fail_on_skip_fails_a_run_that_skipped_a_call_that_may_write() {
    let env = Env::new();
    with_example_config(&env);
    // write_note is listed as not read-only: verify skips its call.
    let out = run(env.mcptape(["call", "--record", "w", "example.write_note", "text:n"]));
    assert!(out.status.success(), "{}", text(&out));

    // The listing was compared: something was checked, so no warning, and exit 0.
    let out = verify(&env, "w", &[], &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stdout(&out).contains(": 1 same, 0 changed, 1 skipped\n"),
        "{}",
        text(&out)
    );
    assert!(
        !text(&out).contains("nothing was compared"),
        "{}",
        text(&out)
    );

    let out = verify(&env, "w", &["--fail-on-skip"], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        stdout(&out).contains("skipped    tools/call write_note"),
        "{}",
        text(&out)
    );
}

/// A tape of one connection whose client did only the handshake, then a `tools/call` of
/// a tool that may write.
fn unlisted_tape(env: &Env) -> std::path::PathBuf {
    let meta = |dir: &str| {
        format!(
            r#""_meta":{{"dir":"{dir}","server":"example","ts":"2026-12-01T00:00:00.000Z","conn":"c-1"}}"#
        )
    };
    let lines = [
        format!(
            r#"{{"jsonrpc":"2.0","method":"$transport/start","params":{{"command":["example-server"]}},{}}}"#,
            meta("lifecycle")
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}},{}}}"#,
            meta("send")
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":0,"result":{{"protocolVersion":"2025-11-25","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"mcptape-example","version":"0.1.0"}}}},{}}}"#,
            meta("recv")
        ),
        format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/initialized",{}}}"#,
            meta("send")
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"hi"}}}},{}}}"#,
            meta("send")
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"content":[{{"type":"text","text":"Echo: hi"}}]}},{}}}"#,
            meta("recv")
        ),
        format!(
            r#"{{"jsonrpc":"2.0","method":"$transport/close","params":{{"reason":"client done"}},{}}}"#,
            meta("lifecycle")
        ),
    ];
    let path = env.path("old-call.ndjson");
    std::fs::write(&path, lines.join("\n") + "\n").expect("write");
    path
}

#[test]
fn verify_of_a_tape_without_a_listing_warns_on_stderr_in_the_summary_and_in_json() {
    let env = Env::new();
    let tape = unlisted_tape(&env);
    let tape = tape.to_str().expect("utf-8");

    let out = verify(&env, tape, &[], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let summary = stdout(&out).lines().next().unwrap_or("").to_owned();
    assert!(
        summary.contains(": 0 same, 0 changed, 1 skipped; WARNING: nothing was compared: 1 recorded request skipped"),
        "{summary}"
    );
    assert!(
        stderr(&out).contains("mcptape: warning: nothing was compared: 1 recorded request skipped"),
        "{}",
        text(&out)
    );

    let out = verify(&env, tape, &["--format", "json"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let last: Value =
        serde_json::from_str(stdout(&out).lines().last().unwrap_or("")).expect("a JSON line");
    assert_eq!(last["compared"], 0, "{last}");
    assert_eq!(last["skipped"], 1, "{last}");
    assert!(
        last["warning"]
            .as_str()
            .unwrap_or("")
            .starts_with("nothing was compared")
    );

    let out = verify(&env, tape, &["--fail-on-skip"], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let out = verify(&env, tape, &["--fail-on-skip", "--allow-writes"], &[]);
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn an_old_call_tape_without_a_listing_still_replays_with_mcptape_call() {
    let env = Env::new();
    let tape = unlisted_tape(&env);
    let out = run(env
        .mcptape(["call", "--replay"])
        .arg(&tape)
        .args(["example.echo", "message:hi"]));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(stdout(&out), "Echo: hi\n");
}
