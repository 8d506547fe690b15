//! Messages nested a million levels deep, from the client and from the server, through
//! every command: nothing crashes, everything is forwarded byte for byte, recorded
//! (redacted) with its close, replayed, verified, shown and redacted.
//!
//! Tape lines this deep are more than serde_json reads into a `Value` (128 levels): the
//! tests read them as text, or through mcptape's own tape reader.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Output};

use mcptape::{Kind, Message};

use crate::http::Front;
use crate::support::*;

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
/// The initialize answer of the hand-written tape.
const INIT_ANSWER: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"mcptape-example","version":"0"}}}"#;
/// How deep the deep messages nest.
const LEVELS: usize = 1_000_000;
/// A secret at the bottom of the client's deep arguments.
const SECRET: &str = "hunter2-deep-down-secret";

/// `levels` arrays around `leaf`, built in one allocation.
fn nested(levels: usize, leaf: &str) -> String {
    let mut s = String::with_capacity(2 * levels + leaf.len());
    s.extend(std::iter::repeat_n('[', levels));
    s.push_str(leaf);
    s.extend(std::iter::repeat_n(']', levels));
    s
}

/// A call of the example server's `deep` tool with these arguments.
fn deep_call(id: u32, args: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"deep","arguments":{args}}}}}"#
    )
}

/// The client's deep message: arguments a million levels deep, a password at the bottom.
fn client_deep(leaf_secret: &str) -> String {
    let leaf = format!(r#"{{"password":"{leaf_secret}"}}"#);
    deep_call(3, &format!(r#"{{"d":{}}}"#, nested(LEVELS, &leaf)))
}

/// The call that makes the server answer a million levels deep.
fn server_deep() -> String {
    deep_call(4, &format!(r#"{{"levels":{LEVELS}}}"#))
}

/// What the example server writes for `deep` (see examples/example-server.rs).
fn deep_answer(id: u32, levels: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"nested {levels} levels"}}],"structuredContent":{{"nested":{}}}}}}}"#,
        nested(levels, "")
    )
}

/// The client's side of the session, one message a line.
fn client_lines(secret: &str) -> Vec<String> {
    vec![
        INIT.to_owned(),
        INITIALIZED.to_owned(),
        client_deep(secret),
        server_deep(),
    ]
}

/// What the client of `mcptape MODE s -- mcptape proxy …` saw, and how the run ended.
struct Session {
    status: ExitStatus,
    stderr: String,
    answers: Vec<String>,
}

impl Session {
    /// For assertion messages: the status and stderr, long lines cut (a deep line is 2 MB).
    fn describe(&self) -> String {
        let stderr: Vec<String> = self
            .stderr
            .lines()
            .map(|l| l.chars().take(300).collect())
            .collect();
        format!(
            "status {:?}\n--- stderr\n{}",
            self.status,
            stderr.join("\n")
        )
    }
}

/// Runs `mcptape MODE s -- mcptape proxy --server example -- SERVER` as its client: sends
/// each line, waits for the answer of each request before the next one, then hangs up.
fn wrapped(env: &Env, mode: &str, lines: &[String], server: &[String]) -> Session {
    let mut cmd = env.mcptape([mode, "s", "--"]);
    cmd.args(proxy_argv("example", server));
    let mut p = Proc::spawn(&mut cmd);
    let mut answers = Vec::new();
    for line in lines {
        p.send(line);
        if Message::new(line.clone()).kind() == Kind::Request {
            let answer = p.recv_raw().expect("an answer");
            let answer = String::from_utf8(answer).expect("utf-8");
            answers.push(answer.trim_end_matches('\n').to_owned());
        }
    }
    p.close_stdin();
    let status = p.wait();
    Session {
        status,
        stderr: p.stderr(),
        answers,
    }
}

/// A server command that must not start (replay needs none).
fn absent() -> Vec<String> {
    vec!["/nonexistent/server".into()]
}

/// Records the client's lines against the example server into session `s`.
fn record(env: &Env) -> Vec<String> {
    let run = wrapped(env, "record", &client_lines(SECRET), &[example_server()]);
    assert!(run.status.success(), "{}", run.describe());
    run.answers
}

/// The answers the example server gives to [`client_lines`].
fn answers() -> Vec<String> {
    vec![
        INIT_ANSWER.to_owned(),
        deep_answer(3, LEVELS + 2),
        deep_answer(4, LEVELS),
    ]
}

/// Session `s` written by hand as a recording of [`client_lines`] would be (the secret
/// redacted), so that replay, verify, show and the front are tested on their own.
fn handmade_tape(env: &Env) -> PathBuf {
    let entry = |message: &str, dir: &str| {
        let body = message.strip_suffix('}').expect("an object");
        format!(r#"{body},"_meta":{{"dir":"{dir}","server":"example","conn":"c-1"}}}}"#)
    };
    let [init, deep, levels] = answers().try_into().expect("three answers");
    let lines = [
        entry(
            r#"{"jsonrpc":"2.0","method":"$transport/start","params":{}}"#,
            "lifecycle",
        ),
        entry(INIT, "send"),
        entry(&init, "recv"),
        entry(INITIALIZED, "send"),
        entry(&client_deep("[REDACTED]"), "send"),
        entry(&deep, "recv"),
        entry(&server_deep(), "send"),
        entry(&levels, "recv"),
        entry(
            r#"{"jsonrpc":"2.0","method":"$transport/close","params":{"exitCode":0}}"#,
            "lifecycle",
        ),
    ];
    let tape = env.tape("s");
    std::fs::create_dir_all(tape.parent().expect("dir")).expect("mkdir");
    std::fs::write(&tape, lines.join("\n") + "\n").expect("write the tape");
    tape
}

/// [`text`], with long lines cut: a deep line is 2 MB.
fn short(out: &Output) -> String {
    text(out)
        .lines()
        .map(|l| l.chars().take(300).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Checks a tape against the client's lines and the answers: both deep messages and their
/// answers are there, the secret redacted and nothing else changed, and the close.
fn assert_tape_holds_the_deep_session(tape: &Path, answers: &[String]) {
    let sent = tape_messages(tape, "send");
    let received = tape_messages(tape, "recv");
    assert!(
        sent.contains(&client_deep("[REDACTED]")),
        "the deep request, redacted"
    );
    assert!(sent.contains(&server_deep()));
    for answer in &answers[1..] {
        assert!(received.contains(answer), "the deep answers, byte for byte");
    }
    let text = std::fs::read_to_string(tape).expect("tape");
    assert!(!text.contains(SECRET), "the secret deep down is redacted");
    let close: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(r#""method":"$transport/close""#))
        .collect();
    assert_eq!(close.len(), 1, "one close");
    let close: serde_json::Value = serde_json::from_str(close[0]).expect("close entry");
    assert_eq!(close["params"]["exitCode"], 0, "{close}");
}

#[test]
fn record_forwards_and_keeps_a_million_levels_from_both_sides() {
    let env = Env::new();
    let answers = record(&env);
    assert_eq!(answers.len(), 3, "initialize and both deep calls answered");
    assert_eq!(
        answers[1],
        deep_answer(3, LEVELS + 2),
        "the client got its answer"
    );
    assert_eq!(answers[2], deep_answer(4, LEVELS), "byte for byte");
    assert_tape_holds_the_deep_session(&env.tape("s"), &answers);
}

#[test]
fn replay_serves_deep_messages_and_refuses_a_changed_one() {
    let env = Env::new();
    handmade_tape(&env);
    let recorded = answers();
    let replayed = wrapped(&env, "replay", &client_lines(SECRET), &absent());
    assert!(replayed.status.success(), "{}", replayed.describe());
    assert_eq!(
        replayed.answers, recorded,
        "the same answers, byte for byte"
    );

    let other = wrapped(&env, "replay", &client_lines("another-secret"), &absent());
    assert!(
        other.status.success(),
        "a secret deep down matches what was redacted there: {}",
        other.describe()
    );
    assert_eq!(other.answers, recorded);

    let mut changed = client_lines(SECRET);
    changed[2] = deep_call(3, &format!(r#"{{"d":{}}}"#, nested(LEVELS - 1, "7")));
    changed.truncate(3);
    let diverged = wrapped(&env, "replay", &changed, &absent());
    assert_eq!(diverged.status.code(), Some(3), "{}", diverged.describe());
    assert!(
        diverged.answers[1].contains("-32090"),
        "the client got the mismatch as an error"
    );
    assert!(
        diverged.stderr.contains("[too deep: "),
        "the diff names the deep part by its marker: {}",
        diverged.describe()
    );
}

#[test]
fn verify_compares_deep_answers_by_their_bytes() {
    let env = Env::new();
    let tape = handmade_tape(&env);
    let out = run(env
        .mcptape(["verify", "--allow-writes"])
        .arg(&tape)
        .arg("--")
        .arg(example_server()));
    assert!(out.status.success(), "{}", short(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("2 same, 0 changed"), "{}", short(&out));

    // One level less in the recorded answer: a change, found below the depth limit.
    let text = std::fs::read_to_string(&tape).expect("tape");
    let answer = deep_answer(4, LEVELS);
    let older = deep_answer(4, LEVELS - 1);
    let edited = text.replace(&answer[..answer.len() - 1], &older[..older.len() - 1]);
    assert_ne!(edited, text);
    let old_tape = env.path("older.ndjson");
    std::fs::write(&old_tape, edited).expect("write");
    let out = run(env
        .mcptape(["verify", "--allow-writes"])
        .arg(&old_tape)
        .arg("--")
        .arg(example_server()));
    assert_eq!(out.status.code(), Some(1), "{}", short(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("1 same, 1 changed"), "{}", short(&out));
    assert!(
        stdout.contains("result.structuredContent.nested.0.0.0"),
        "{}",
        short(&out)
    );
}

#[test]
fn show_and_list_print_deep_messages_without_expanding_them() {
    let env = Env::new();
    handmade_tape(&env);
    let out = run(env.mcptape(["show", "--full", "s"]));
    assert!(out.status.success(), "{}", short(&out));
    let trace = String::from_utf8_lossy(&out.stdout);
    let call = trace
        .lines()
        .find(|l| l.contains("tools/call #3 deep"))
        .unwrap_or_else(|| panic!("the deep call by name: {}", short(&out)));
    assert!(call.contains("[too deep: "), "{call}");
    assert!(
        call.len() < 1000,
        "shown without expansion: {} bytes",
        call.len()
    );

    // A message of no known kind is printed as its text: bounded the same way.
    let other = format!(
        r#"{{"a":{},"_meta":{{"dir":"recv","server":"example","conn":"c-1"}}}}"#,
        nested(LEVELS, "")
    );
    let tape = env.tape("s");
    let mut text = std::fs::read_to_string(&tape).expect("tape");
    text.push_str(&other);
    text.push('\n');
    let odd = env.path("odd.ndjson");
    std::fs::write(&odd, text).expect("write");
    let out = run(env.mcptape(["show", "--full"]).arg(&odd));
    assert!(out.status.success(), "{}", short(&out));
    let trace = String::from_utf8_lossy(&out.stdout);
    let line = trace
        .lines()
        .find(|l| l.contains(r#"← {"a":[["#))
        .unwrap_or_else(|| panic!("the odd message: {}", short(&out)));
    assert!(
        line.len() < 1000 && line.contains("[too deep: "),
        "{line:.300}"
    );

    let out = run(env.mcptape(["show", "--json", "s"]));
    assert!(out.status.success(), "{}", short(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("show --json");
    let entries = doc["connections"][0]["entries"]
        .as_array()
        .expect("entries");
    let deep = entries
        .iter()
        .find(|e| e["message"]["id"] == 3 && e["dir"] == "send")
        .expect("the deep call is a message, not null");
    assert_eq!(deep["message"]["params"]["name"], "deep");

    let out = run(env.mcptape(["list", "--json"]));
    assert!(out.status.success(), "{}", short(&out));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("list --json");
    assert_eq!(rows[0]["session"], "s");
    assert_eq!(rows[0]["connections"], 1);
    assert_eq!(rows[0]["servers"], serde_json::json!(["example"]));
}

/// A tape whose deep lines hold secrets, written with --no-redact.
fn unredacted_tape(env: &Env) -> PathBuf {
    let bearer = "Bearer abcdefghijklmnopqrstuvwx0123";
    let lines = vec![
        INIT.to_owned(),
        deep_call(
            2,
            &format!(
                r#"{{"d":{}}}"#,
                nested(
                    LEVELS,
                    &format!(r#"{{"apiKey":"k-123456789","note":"{bearer}"}}"#)
                )
            ),
        ),
    ];
    let tape = env.path("raw.ndjson");
    let mut cmd = env.mcptape(["proxy", "--server", "example", "--no-redact", "--record"]);
    cmd.arg(&tape).arg("--").arg(example_server());
    let mut p = Proc::spawn(&mut cmd);
    for line in &lines {
        p.send(line);
        p.recv_raw().expect("an answer");
    }
    p.close_stdin();
    assert!(p.wait().success());
    assert!(
        std::fs::read_to_string(&tape)
            .expect("tape")
            .contains(bearer)
    );
    tape
}

#[test]
fn redact_and_check_find_secrets_a_million_levels_down() {
    let env = Env::new();
    let tape = unredacted_tape(&env);
    let before = std::fs::read_to_string(&tape).expect("tape");
    let out = run(env.mcptape(["redact", "--check"]).arg(&tape));
    assert_eq!(out.status.code(), Some(1), "{}", short(&out));
    let found =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        found.contains("params.arguments.d[0][0]"),
        "{}",
        short(&out)
    );
    assert!(found.contains("…"), "a capped path: {}", short(&out));

    let out = run(env.mcptape(["redact"]).arg(&tape));
    assert!(out.status.success(), "{}", short(&out));
    let after = std::fs::read_to_string(&tape).expect("tape");
    let expected: Vec<String> = before
        .lines()
        .map(|l| {
            l.replace("abcdefghijklmnopqrstuvwx0123", "[REDACTED]")
                .replace("k-123456789", "[REDACTED]")
        })
        .collect();
    // The start entry loses its `redaction: off` mark; every other line only its secrets.
    assert_eq!(after.lines().count(), expected.len());
    for (got, want) in after.lines().zip(&expected).skip(1) {
        assert!(
            got == want,
            "nothing else changed in line of {} bytes",
            want.len()
        );
    }
    let out = run(env.mcptape(["redact", "--check"]).arg(&tape));
    assert!(out.status.success(), "{}", short(&out));
}

/// A minimal HTTP/1.1 exchange over one connection: the status line, the session id the
/// answer carries, and its body (de-chunked).
fn post(authority: &str, session: Option<&str>, body: &str) -> (String, Option<String>, String) {
    let mut s = std::net::TcpStream::connect(authority).expect("connect to the front");
    s.set_read_timeout(Some(DEADLINE)).expect("timeout");
    let session = session
        .map(|id| format!("Mcp-Session-Id: {id}\r\n"))
        .unwrap_or_default();
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{session}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .expect("write the request");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read the answer");
    let raw = String::from_utf8(raw).expect("utf-8");
    let (head, mut rest) = raw.split_once("\r\n\r\n").expect("a head");
    let header = |name: &str| {
        head.lines()
            .find_map(|l| {
                l.split_once(':')
                    .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            })
            .map(|(_, v)| v.trim().to_owned())
    };
    let mut body = String::new();
    if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        while let Some((size, after)) = rest.split_once("\r\n") {
            let n = usize::from_str_radix(size.trim(), 16).expect("a chunk size");
            if n == 0 {
                break;
            }
            body.push_str(&after[..n]);
            rest = &after[n + 2..];
        }
    } else {
        body.push_str(rest);
    }
    let status = head.lines().next().unwrap_or("").to_owned();
    (status, header("mcp-session-id"), body)
}

/// The JSON-RPC message of an SSE answer (the last `data:` line), or the body itself.
fn answer_of(body: &str) -> String {
    body.lines()
        .rev()
        .find_map(|l| l.strip_prefix("data: "))
        .unwrap_or(body)
        .to_owned()
}

#[test]
fn the_http_front_records_deep_messages_from_both_sides() {
    let env = Env::new();
    handmade_tape(&env);
    let answers = answers();
    // The server side: a replaying front. The front under test records what it forwards.
    let replay_tape = env.tape("s").display().to_string();
    let server = Front::start_as(&env, "example", &["--replay", &replay_tape]);
    let tape = env.path("front.ndjson").display().to_string();
    let recorder = Front::start_as(&env, "example", &["--url", &server.url, "--record", &tape]);
    let authority = recorder
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();

    let (status, session, _) = post(&authority, None, INIT);
    assert!(status.contains("200"), "{status}");
    let session = session.expect("a session id");
    let (status, _, _) = post(&authority, Some(&session), INITIALIZED);
    assert!(status.contains("202"), "{status}");
    let lines = client_lines(SECRET);
    for (line, answer) in lines[2..].iter().zip(&answers[1..]) {
        let (status, _, body) = post(&authority, Some(&session), line);
        assert!(status.contains("200"), "{status}");
        assert_eq!(
            &answer_of(&body),
            answer,
            "answered byte for byte over HTTP"
        );
    }
    assert!(recorder.stop().success(), "the recording front survived");
    assert!(
        server.stop().success(),
        "the replaying front matched every message"
    );
    let tape = PathBuf::from(tape);
    let sent = tape_messages(&tape, "send");
    let received = tape_messages(&tape, "recv");
    assert!(sent.contains(&client_deep("[REDACTED]")));
    assert!(sent.contains(&server_deep()));
    assert!(received.contains(&answers[1]) && received.contains(&answers[2]));
}

#[test]
fn call_records_and_replays_a_deep_answer() {
    let env = Env::new();
    let config = serde_json::json!({"mcpServers": {"example": {"command": example_server()}}});
    std::fs::write(env.path(".mcp.json"), config.to_string()).expect("config");
    let levels = format!("levels:{LEVELS}");
    let out = run(env.mcptape(["call", "--record", "c", "example.deep", &levels]));
    assert!(out.status.success(), "{}", short(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with(&format!("nested {LEVELS} levels\n")),
        "{}",
        short(&out)
    );
    let tape = env.tape("c");
    let received = tape_messages(&tape, "recv");
    assert!(
        received.iter().any(|m| m.len() > 2 * LEVELS),
        "the deep answer is recorded"
    );
    let text = std::fs::read_to_string(&tape).expect("tape");
    assert!(
        text.lines()
            .last()
            .is_some_and(|l| l.contains("$transport/close"))
    );

    let answer = received
        .iter()
        .find(|m| m.len() > 2 * LEVELS)
        .expect("the deep answer");
    let out = run(env.mcptape([
        "call",
        "--replay",
        "c",
        "--output",
        "raw",
        "example.deep",
        &levels,
    ]));
    assert!(out.status.success(), "{}", short(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout) == format!("{answer}\n"),
        "replayed byte for byte: {}",
        short(&out)
    );

    // `--args` is read into a value: past serde_json's 128 levels, a usage error (10,000
    // levels: an argument of a command line holds at most 128 KiB).
    let args = format!(r#"{{"d":{}}}"#, nested(10_000, ""));
    let out = run(env.mcptape(["call", "example.deep", "--args", &args]));
    assert_eq!(out.status.code(), Some(2), "{}", short(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--args"));
}

#[test]
fn a_config_file_nested_a_million_levels_is_an_error_naming_it() {
    let env = Env::new();
    let path = env.path("deep.json");
    std::fs::write(&path, format!(r#"{{"mcpServers":{}}}"#, nested(LEVELS, ""))).expect("write");
    let out = run(env.mcptape(["servers", "--config"]).arg(&path));
    assert_eq!(out.status.code(), Some(2), "{}", short(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("deep.json"),
        "{}",
        short(&out)
    );
}
