//! Replay verdicts at the edges: a recording cut before an answer (a torn last line, a
//! `$tape/truncated` entry, no close), two recorded requests with one id, and close
//! statuses no process can have. Real tapes, recorded through `mcptape proxy` with the
//! example server, then cut the way a crash or a full tape cuts them.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::*;

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

fn echo(id: &str, message: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"{message}"}}}}}}"#
    )
}

/// Records INIT, INITIALIZED, `echo a` and `echo b` (each waited for) with the example
/// server into `tape`, with `MCPTAPE_MAX_BYTES` when given; returns the proxy's status.
fn record_two_calls(env: &Env, tape: &Path, max_bytes: Option<u64>) -> Option<i32> {
    let mut cmd = env.mcptape(["proxy", "--server", "example", "--record"]);
    cmd.arg(tape).arg("--").arg(example_server());
    if let Some(max) = max_bytes {
        cmd.env("MCPTAPE_MAX_BYTES", max.to_string());
    }
    let mut p = Proc::spawn(&mut cmd);
    p.send(INIT);
    p.recv();
    p.send(INITIALIZED);
    for (id, m) in [("2", "a"), ("3", "b")] {
        p.send(&echo(id, m));
        assert_eq!(p.recv()["id"], id.parse::<u64>().expect("id"));
    }
    p.close_stdin();
    p.wait().code()
}

/// The tape's lines, each with its `\n`.
fn lines(tape: &Path) -> Vec<String> {
    std::fs::read_to_string(tape)
        .expect("read tape")
        .split_inclusive('\n')
        .map(str::to_owned)
        .collect()
}

/// The index of the tape line that answers request `id`.
fn answer_line(lines: &[String], id: u64) -> usize {
    lines
        .iter()
        .position(|l| {
            let v: Value = serde_json::from_str(l).expect("json");
            v["_meta"]["dir"] == "recv" && v["id"] == id
        })
        .expect("the answer is on the tape")
}

/// `mcptape replay TAPE -- mcptape proxy --server example -- <absent>`, driven by the
/// test over the pipes the proxy inherits.
fn replay_run(env: &Env, tape: &Path) -> Proc {
    let mut cmd = env.mcptape(["replay".as_ref(), tape.as_os_str(), "--".as_ref()]);
    cmd.args(proxy_argv(
        "example",
        &["/nonexistent/server-that-must-not-start".to_owned()],
    ));
    Proc::spawn(&mut cmd)
}

/// Plays the recorded client: `echo a` is answered, `echo b` gets the error that says
/// where the tape ends; the run then exits 3 with the connection INCOMPLETE.
fn assert_tape_ends_at_b(env: &Env, tape: &Path, why: &str) {
    let mut p = replay_run(env, tape);
    p.send(INIT);
    assert_eq!(p.recv()["id"], 1);
    p.send(INITIALIZED);
    p.send(&echo("\"a\"", "a"));
    let a = p.recv();
    assert_eq!(a["id"], "a");
    assert_eq!(a["result"]["content"][0]["text"], "Echo: a");
    p.send(&echo("\"b\"", "b"));
    let b = p.recv();
    assert_eq!(b["id"], "b", "{b}");
    assert_eq!(b["error"]["code"], -32090, "{b}");
    let message = b["error"]["message"].as_str().expect("message");
    assert!(
        message.contains("the tape ends here: it holds no answer to tools/call #3 echo"),
        "{message}"
    );
    assert!(message.contains(why), "{message}");
    // Replay of the connection stops there: a later request gets the same error.
    p.send(&echo("\"c\"", "a"));
    let c = p.recv();
    assert_eq!(
        (c["id"].as_str(), c["error"]["code"].as_i64()),
        (Some("c"), Some(-32090))
    );
    p.close_stdin();
    let status = p.wait();
    let stderr = p.stderr();
    assert_eq!(status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("INCOMPLETE server `example` connection `"),
        "{stderr}"
    );
    assert!(
        stderr.contains("the tape ends here: it holds no answer"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("never sent"),
        "no leftovers after the end: {stderr}"
    );
}

#[test]
fn a_torn_last_line_ends_the_tape_before_the_answer() {
    let env = Env::new();
    let tape = env.path("torn.ndjson");
    assert_eq!(record_two_calls(&env, &tape, None), Some(0));
    let all = lines(&tape);
    let cut = answer_line(&all, 3);
    // A crash mid-write: half of the answer's line, no newline, nothing after.
    let mut text: String = all[..cut].concat();
    text.push_str(&all[cut][..all[cut].len() / 2]);
    std::fs::write(&tape, text).expect("write");
    assert_tape_ends_at_b(&env, &tape, "no `$transport/close`");
}

#[test]
fn a_recording_without_a_close_ends_the_tape_before_the_answer() {
    let env = Env::new();
    let tape = env.path("unclosed.ndjson");
    assert_eq!(record_two_calls(&env, &tape, None), Some(0));
    let all = lines(&tape);
    let cut = answer_line(&all, 3);
    std::fs::write(&tape, all[..cut].concat()).expect("write");
    assert_tape_ends_at_b(&env, &tape, "no `$transport/close`");
}

#[test]
fn a_truncated_tape_ends_before_the_answer() {
    let env = Env::new();
    // Measure a whole recording, then record again with room for everything up to the
    // answer to `echo b`, but not for that answer.
    let whole = env.path("whole.ndjson");
    assert_eq!(record_two_calls(&env, &whole, None), Some(0));
    let all = lines(&whole);
    let cut = answer_line(&all, 3);
    let room = all[..cut].concat().len() + all[cut].len() / 2;
    let tape = env.path("truncated.ndjson");
    // (The proxy's own exit status for a cut recording is not what this test is about.)
    record_two_calls(&env, &tape, Some(room as u64));
    let entries = tape_entries(&tape);
    assert_eq!(
        lifecycle(&entries, "$tape/truncated").len(),
        1,
        "{entries:?}"
    );
    assert_tape_ends_at_b(&env, &tape, "`$tape/truncated`");
}

#[test]
fn a_cut_recording_replayed_in_full_passes() {
    // Without a close, but every request answered and every client message sent: the
    // tape holds the whole conversation the client has.
    let env = Env::new();
    let tape = env.path("unclosed.ndjson");
    assert_eq!(record_two_calls(&env, &tape, None), Some(0));
    let all = lines(&tape);
    let kept: Vec<&String> = all
        .iter()
        .filter(|l| !l.contains("$transport/close"))
        .collect();
    assert_eq!(kept.len() + 1, all.len());
    std::fs::write(&tape, kept.into_iter().cloned().collect::<String>()).expect("write");
    let mut p = replay_run(&env, &tape);
    p.send(INIT);
    p.recv();
    p.send(INITIALIZED);
    for (id, m) in [("2", "a"), ("3", "b")] {
        p.send(&echo(id, m));
        assert_eq!(
            p.recv()["result"]["content"][0]["text"],
            format!("Echo: {m}")
        );
    }
    p.close_stdin();
    let status = p.wait();
    let stderr = p.stderr();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("ok       server `example`"), "{stderr}");
}

/// Records a client that sends two concurrent requests with the same id (a bug, kept
/// faithfully): `echo first` and `echo second`, both id 5.
fn record_duplicate_ids(env: &Env) -> PathBuf {
    let tape = env.path("dup.ndjson");
    let mut cmd = env.mcptape(["proxy", "--server", "example", "--record"]);
    cmd.arg(&tape).arg("--").arg(example_server());
    let mut p = Proc::spawn(&mut cmd);
    p.send(INIT);
    p.recv();
    p.send(INITIALIZED);
    p.send(&format!("{}\n{}", echo("5", "first"), echo("5", "second")));
    for m in ["first", "second"] {
        let answer = p.recv();
        assert_eq!(answer["id"], 5);
        assert_eq!(answer["result"]["content"][0]["text"], format!("Echo: {m}"));
    }
    p.close_stdin();
    assert!(p.wait().success());
    tape
}

#[test]
fn two_recorded_requests_with_one_id_each_get_their_own_answer() {
    let env = Env::new();
    let tape = record_duplicate_ids(&env);
    let mut p = replay_run(&env, &tape);
    p.send(INIT);
    p.recv();
    p.send(INITIALIZED);
    // A live client with distinct ids, sending both before reading.
    p.send(&format!(
        "{}\n{}",
        echo("10", "first"),
        echo("11", "second")
    ));
    let (one, two) = (p.recv(), p.recv());
    assert_eq!(one["id"], 10, "{one}");
    assert_eq!(one["result"]["content"][0]["text"], "Echo: first");
    assert_eq!(two["id"], 11, "{two}");
    assert_eq!(two["result"]["content"][0]["text"], "Echo: second");
    p.close_stdin();
    let status = p.wait();
    let stderr = p.stderr();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("ok       server `example`"), "{stderr}");
}

/// A hand-made connection the server ended itself, with these close params.
fn server_gone_tape(env: &Env, close: &str) -> PathBuf {
    let meta = |dir: &str| format!(r#""_meta":{{"dir":"{dir}","server":"example","conn":"c-1"}}"#);
    let body = |msg: &str| msg.strip_suffix('}').expect("object").to_owned();
    let text = [
        format!("{},{}}}", body(INIT), meta("send")),
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"protocolVersion":"2025-11-25","capabilities":{{}},"serverInfo":{{"name":"x","version":"0"}}}},{}}}"#,
            meta("recv")
        ),
        format!("{},{}}}", body(INITIALIZED), meta("send")),
        format!(
            r#"{{"jsonrpc":"2.0","method":"$transport/close","params":{close},{}}}"#,
            meta("lifecycle")
        ),
    ];
    let tape = env.path("gone.ndjson");
    std::fs::write(&tape, text.join("\n") + "\n").expect("write");
    tape
}

#[test]
fn a_close_status_no_process_can_have_replays_as_a_failure() {
    let env = Env::new();
    for (close, code, note) in [
        (
            r#"{"reason":"server exited","exitCode":256}"#,
            1,
            "exitCode 256",
        ),
        (
            r#"{"reason":"server exited","exitCode":-1}"#,
            1,
            "exitCode -1",
        ),
        (
            r#"{"reason":"server exited","signal":300}"#,
            1,
            "signal 300",
        ),
        (
            r#"{"reason":"server exited","exitCode":0,"signal":9}"#,
            1,
            "both",
        ),
        (r#"{"reason":"server exited","exitCode":0}"#, 0, ""),
        (r#"{"reason":"server exited","signal":9}"#, 137, ""),
    ] {
        let tape = server_gone_tape(&env, close);
        let mut p = replay_run(&env, &tape);
        p.send(INIT);
        assert_eq!(p.recv()["id"], 1);
        p.send(INITIALIZED);
        // The recorded server ended the connection here: so does the replay.
        assert!(p.recv_raw().is_none(), "{close}: stdout ends");
        let status = p.wait();
        let stderr = p.stderr();
        assert_eq!(status.code(), Some(code), "{close}: {stderr}");
        if !note.is_empty() {
            assert!(
                stderr.contains(&format!("note: the recorded close status ({note}")),
                "{close}: {stderr}"
            );
        }
    }
}

/// Records INIT, INITIALIZED and `call` (waited for) with the example server through a
/// proxy with `--max-line-bytes 1000` into `tape`.
pub(crate) fn record_oversize(env: &Env, tape: &Path, call: &str) {
    let mut cmd = env.mcptape(["proxy", "--max-line-bytes", "1000", "--server", "example"]);
    cmd.arg("--record")
        .arg(tape)
        .arg("--")
        .arg(example_server());
    let mut p = Proc::spawn(&mut cmd);
    p.send(INIT);
    p.recv();
    p.send(INITIALIZED);
    p.send(call);
    assert_eq!(p.recv()["id"], 2);
    p.close_stdin();
    assert_eq!(p.wait().code(), Some(0), "{}", p.stderr());
}

/// Replays `tape` with the recorded client: `call` gets the error that says where the
/// tape ends, with `why`; the run exits 3 with the connection INCOMPLETE.
fn assert_tape_ends_at_call(env: &Env, tape: &Path, call: &str, why: &str) {
    let mut p = replay_run(env, tape);
    p.send(INIT);
    assert_eq!(p.recv()["id"], 1);
    p.send(INITIALIZED);
    p.send(call);
    let answer = p.recv();
    assert_eq!(answer["id"], 2, "{answer}");
    assert_eq!(answer["error"]["code"], -32090, "{answer}");
    let message = answer["error"]["message"].as_str().expect("message");
    assert!(message.contains("the tape ends here: "), "{message}");
    assert!(message.contains(why), "{message}");
    p.close_stdin();
    let status = p.wait();
    let stderr = p.stderr();
    assert_eq!(status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("INCOMPLETE server `example` connection `"),
        "{stderr}"
    );
    assert!(stderr.contains(why), "{stderr}");
}

#[test]
fn an_answer_too_long_to_record_ends_the_tape_instead_of_hanging() {
    let env = Env::new();
    let tape = env.path("ov.ndjson");
    let big = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big","arguments":{"bytes":5000}}}"#;
    record_oversize(&env, &tape, big);
    let entries = tape_entries(&tape);
    let lost = lifecycle(&entries, "$transport/oversize");
    assert_eq!(lost.len(), 1, "{entries:?}");
    assert_eq!(lost[0]["params"]["dir"], "recv");
    assert_eq!(
        lifecycle(&entries, "$transport/close").len(),
        1,
        "a whole recording"
    );
    assert_tape_ends_at_call(
        &env,
        &tape,
        big,
        "the tape lost the server's message at tape line",
    );
}

#[test]
fn a_client_message_too_long_to_record_is_reported_lost() {
    let env = Env::new();
    let tape = env.path("ov.ndjson");
    // 1200 bytes of escapes that the server reads as 200 letters: the request is over
    // the limit, its answer is not.
    let message = r"\u0041".repeat(200);
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"{message}"}}}}}}"#
    );
    record_oversize(&env, &tape, &call);
    let entries = tape_entries(&tape);
    let lost = lifecycle(&entries, "$transport/oversize");
    assert_eq!(lost.len(), 1, "{entries:?}");
    assert_eq!(lost[0]["params"]["dir"], "send");
    assert_tape_ends_at_call(
        &env,
        &tape,
        &call,
        "the tape lost the client's message at tape line",
    );
}

#[test]
fn verify_plays_a_request_whose_answer_was_too_long_to_record_without_calling_it_changed() {
    let env = Env::new();
    let tape = env.path("ov.ndjson");
    let big = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big","arguments":{"bytes":5000}}}"#;
    record_oversize(&env, &tape, big);
    let mut cmd = env.mcptape(["verify", "--allow-writes"]);
    cmd.arg(&tape).arg("--").arg(example_server());
    let out = run(cmd);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(all.contains("0 changed, 1 skipped"), "{all}");
    assert!(all.contains("the tape holds no recorded answer"), "{all}");
}
