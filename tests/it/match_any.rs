//! `--match any` (the mock) through the Python SDK client (tests/peers/py_calls.py) and
//! the example server: calls in another order than recorded, a call repeated more often
//! than recorded, a call that matches nothing, unused requests with and without
//! `--fail-on-unused`, two clients under one `replay`, and the HTTP front.

use std::io::{BufRead, BufReader};
use std::process::{Child, Output, Stdio};
use std::sync::mpsc;

use crate::support::*;

const ECHO_HI: &str = r#"echo:{"message":"hi"}"#;
const ADD: &str = r#"add:{"a":1,"b":2}"#;
const SLOW: &str = r#"slow:{"steps":2,"ms":10}"#;
const GREET: &str = r#"greet:{"name":"tape"}"#;

/// `python py_calls.py CALLS... --`, as argv (the server command follows).
fn client(calls: &[&str]) -> Vec<String> {
    let mut argv = vec![python(), peer("py_calls.py")];
    argv.extend(calls.iter().map(|c| (*c).to_owned()));
    argv.push("--".into());
    argv
}

/// The client's argv, then a proxy of server `ex` in front of `server`, quoted for `sh`.
fn shell(calls: &[&str], server: &[String]) -> String {
    client(calls)
        .into_iter()
        .chain(proxy_argv("ex", server))
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Records one client per element of `runs` (in order, each its own connection).
fn record(env: &Env, runs: &[&[&str]]) {
    let script: Vec<String> = runs
        .iter()
        .map(|calls| shell(calls, &[example_server()]))
        .collect();
    let out = run(env.mcptape(["record", "s", "--", "sh", "-c", &script.join(" && ")]));
    assert!(out.status.success(), "{}", text(&out));
}

/// Replays with `flags`, one client per element of `runs`, with no server.
fn replay(env: &Env, flags: &[&str], runs: &[&[&str]]) -> Output {
    let absent = vec!["/nonexistent/server-that-must-not-start".to_owned()];
    let script: Vec<String> = runs.iter().map(|calls| shell(calls, &absent)).collect();
    let mut cmd = env.mcptape(["replay", "s"]);
    cmd.args(flags)
        .args(["--", "sh", "-c", &script.join(" && ")]);
    run(cmd)
}

/// The client's steps, one JSON value each.
fn steps(out: &Output) -> Vec<serde_json::Value> {
    stdout(out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON step"))
        .collect()
}

#[test]
fn any_answers_calls_in_another_order_repeats_the_last_and_names_the_closest_for_a_miss() {
    let env = Env::new();
    record(&env, &[&[ECHO_HI, ADD, SLOW]]);
    let miss = r#"echo:{"message":"bye"}"#;
    let out = replay(
        &env,
        &["--match", "any"],
        &[&[SLOW, ADD, ADD, miss, ECHO_HI]],
    );
    let got = steps(&out);
    let all = text(&out);
    // Slow first, with its recorded progress.
    assert_eq!(got[0]["step"], "progress", "{all}");
    assert_eq!(got[1]["step"], "progress", "{all}");
    assert_eq!(got[2]["text"], "done after 2 steps", "{all}");
    // Add twice: recorded once, the last used given again.
    assert_eq!(got[3]["text"], "3", "{all}");
    assert_eq!(got[4]["text"], "3", "{all}");
    // The miss: McpError -32090 naming the closest recorded request.
    assert_eq!(got[5]["step"], "error", "{all}");
    assert_eq!(got[5]["code"], -32090, "{all}");
    let message = got[5]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(r#"the closest is tools/call #2 echo {"message":"hi"}"#),
        "{message}"
    );
    // The replay went on after it.
    assert_eq!(got[6]["text"], "Echo: hi", "{all}");
    assert_eq!(
        out.status.code(),
        Some(3),
        "a miss fails the verdict: {all}"
    );
    let err = stderr(&out);
    assert!(err.contains("DIVERGED server `ex`"), "{err}");
    assert!(err.contains(r#"-      "message": "hi""#), "a diff: {err}");
    assert!(err.contains(r#"+      "message": "bye""#), "a diff: {err}");

    // Without the miss the same run passes; strict fails it at the first call.
    let ok = replay(&env, &["--match", "any"], &[&[SLOW, ADD, ADD, ECHO_HI]]);
    assert!(ok.status.success(), "{}", text(&ok));
    let strict = replay(&env, &[], &[&[SLOW, ADD, ADD, ECHO_HI]]);
    assert_eq!(strict.status.code(), Some(3), "{}", text(&strict));
}

#[test]
fn unused_requests_are_listed_and_fail_only_with_fail_on_unused() {
    let env = Env::new();
    record(&env, &[&[ECHO_HI, ADD, SLOW]]);
    let out = replay(&env, &["--match", "any"], &[&[ADD]]);
    assert!(out.status.success(), "{}", text(&out));
    let err = stderr(&out);
    assert!(err.contains("ok       server `ex`"), "{err}");
    assert!(
        err.contains(r#"): tools/call #2 echo {"message":"hi"}"#)
            && err.contains("  unused (tape line "),
        "{err}"
    );
    assert!(err.contains("slow"), "{err}");

    let strict = replay(&env, &["--match", "any", "--fail-on-unused"], &[&[ADD]]);
    assert_eq!(strict.status.code(), Some(3), "{}", text(&strict));
    let err = stderr(&strict);
    assert!(err.contains("INCOMPLETE server `ex`"), "{err}");
    assert!(err.contains(r#"never sent (tape line "#), "{err}");
}

#[test]
fn two_clients_replay_in_the_other_order_and_share_where_none_fits_whole() {
    let env = Env::new();
    // Recorded: one client echoes and adds, then another greets.
    record(&env, &[&[ECHO_HI, ADD], &[GREET]]);
    // Replayed: the first client greets and echoes, the second adds: no recorded
    // connection fits either whole.
    let runs: &[&[&str]] = &[&[GREET, ECHO_HI], &[ADD]];
    let out = replay(&env, &["--match", "any"], runs);
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    let texts: Vec<String> = steps(&out)
        .iter()
        .map(|s| s["text"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(texts, vec!["Hello, tape!", "Echo: hi", "3"], "{all}");
    let err = stderr(&out);
    assert_eq!(err.matches("ok       server `ex`").count(), 2, "{err}");
    assert!(!err.contains("UNUSED"), "{err}");
    // Strict cannot serve them.
    let strict = replay(&env, &[], runs);
    assert_eq!(strict.status.code(), Some(3), "{}", text(&strict));
}

#[test]
fn a_recorded_connection_no_client_used_is_listed_and_fails_only_with_fail_on_unused() {
    let env = Env::new();
    record(&env, &[&[ECHO_HI], &[GREET]]);
    let out = replay(&env, &["--match", "any"], &[&[ECHO_HI]]);
    assert!(out.status.success(), "{}", text(&out));
    let err = stderr(&out);
    assert!(
        err.contains("mcptape: unused   server `ex` connection"),
        "{err}"
    );
    let strict = replay(&env, &["--match", "any", "--fail-on-unused"], &[&[ECHO_HI]]);
    assert_eq!(strict.status.code(), Some(3), "{}", text(&strict));
    assert!(stderr(&strict).contains("UNUSED"), "{}", text(&strict));
}

/// `mcptape proxy --server ex --listen 127.0.0.1:0 ARGS`, its stderr lines on a channel.
struct Front {
    child: Child,
    url: String,
    lines: mpsc::Receiver<String>,
}

impl Front {
    fn start(env: &Env, args: &[&str]) -> Front {
        let mut child = env
            .mcptape(["proxy", "--server", "ex", "--listen", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the front");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let url = loop {
            let line = lines
                .recv_timeout(DEADLINE)
                .expect("the front says `listening on`");
            if let Some(rest) = line.split("listening on ").nth(1) {
                break rest.split_whitespace().next().unwrap_or("").to_owned();
            }
        };
        Front { child, url, lines }
    }

    /// SIGTERM; its exit status and the rest of its stderr.
    fn stop(mut self) -> (std::process::ExitStatus, String) {
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        )
        .expect("kill");
        let status = wait_child(&mut self.child);
        let rest: Vec<String> = self.lines.iter().collect();
        (status, rest.join("\n"))
    }
}

#[test]
fn the_http_front_replays_any_order_per_session_with_misses_and_fail_on_unused() {
    let env = Env::new();
    record(&env, &[&[ECHO_HI, ADD, SLOW]]);
    let tape = env.mcptape_home().join("recordings").join("s.ndjson");
    let tape = tape.to_string_lossy().into_owned();
    let front = Front::start(&env, &["--replay", &tape, "--match", "any"]);
    let call = |url: &str, calls: &[&str]| {
        let mut cmd = env.cmd(python());
        cmd.arg(peer("py_calls.py")).args(calls).arg("--").arg(url);
        run(cmd)
    };
    let first = call(&front.url, &[ADD, ADD, ECHO_HI]);
    assert!(first.status.success(), "{}", text(&first));
    let texts: Vec<String> = steps(&first)
        .iter()
        .map(|s| s["text"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(texts, vec!["3", "3", "Echo: hi"], "{}", text(&first));
    let second = call(&front.url, &[SLOW, GREET]);
    let got = steps(&second);
    assert_eq!(
        got.last().map(|s| s["code"].clone()),
        Some((-32090).into()),
        "{}",
        text(&second)
    );
    assert!(
        got.iter().any(|s| s["text"] == "done after 2 steps"),
        "a second session is served too: {}",
        text(&second)
    );
    let (status, err) = front.stop();
    assert!(
        !status.success(),
        "the miss fails the front's verdict: {err}"
    );
    assert!(err.contains("DIVERGED server `ex`"), "{err}");
    assert!(
        err.contains(r#"got      tools/call #"#) && err.contains("greet"),
        "{err}"
    );

    // Unused requests fail a session's verdict with --fail-on-unused.
    let flags = ["--replay", &tape, "--match", "any", "--fail-on-unused"];
    let front = Front::start(&env, &flags);
    let partial = call(&front.url, &[ECHO_HI, ADD]);
    assert!(partial.status.success(), "{}", text(&partial));
    let (status, err) = front.stop();
    assert!(!status.success(), "{err}");
    assert!(
        err.contains("never sent (tape line") && err.contains("slow"),
        "{err}"
    );

    let front = Front::start(&env, &["--replay", &tape, "--match", "any"]);
    let again = call(&front.url, &[SLOW, ECHO_HI, ADD]);
    assert!(again.status.success(), "{}", text(&again));
    let (status, err) = front.stop();
    assert!(status.success(), "every exchange matched: {err}");
}

#[test]
fn any_gives_server_requests_progress_and_errors_with_their_exchange() {
    let env = Env::new();
    record_everything(&env, "s");
    let client = [
        python(),
        peer("py_client.py"),
        "replayable".into(),
        "--".into(),
    ];
    let mut cmd = env.mcptape(["replay", "s", "--match", "any", "--"]);
    cmd.args(client).args(proxy_argv(
        "everything",
        &["/nonexistent/server".to_owned()],
    ));
    let out = run(cmd);
    assert!(out.status.success(), "{}", text(&out));
    let got = stdout(&out);
    // The sampling request came with its call, and the client's answer to it was taken.
    assert!(got.contains(r#""step": "sampling""#), "{got}");
    assert_eq!(got.matches(r#""step": "progress""#).count(), 3, "{got}");
    assert!(got.contains("Tool no-such-tool not found"), "{got}");
    assert!(
        stderr(&out).contains("ok       server `everything`"),
        "{}",
        text(&out)
    );
}

#[test]
fn any_answers_the_unrecorded_discover_probe_of_mcptape_call() {
    // `mcptape call` probes with `server/discover` first, and the recorded tape holds no
    // probe: under `any` it must be optional, as in strict replay.
    let env = Env::new();
    let config = env.path("mcp.json");
    let conf = serde_json::json!({"mcpServers": {"example": {"command": example_server()}}});
    std::fs::write(&config, conf.to_string()).expect("write");
    let tape = env.path("cx.ndjson");
    let mut rec = env.mcptape(["call", "--config"]);
    rec.arg(&config)
        .arg("--record")
        .arg(&tape)
        .args(["example.echo", "message=hi"]);
    let out = run(rec);
    assert!(out.status.success(), "{}", text(&out));
    let mut replay = env.mcptape(["call", "--replay"]);
    replay
        .arg(&tape)
        .args(["example.echo", "message=hi"])
        .env("MCPTAPE_MATCH", "any");
    let out = run(replay);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(stdout(&out).contains("Echo: hi"), "{}", text(&out));
    assert!(!stderr(&out).contains("DIVERGED"), "{}", text(&out));
}
