//! A shared tape with a torn line: a proxy killed mid-write left the start of its line,
//! and another proxy's writer ended it and went on. The torn line is skipped with a
//! warning naming it; only the connection that lost it fails its replay; show, replay
//! and redact work for everything else.

use std::process::Output;

use crate::support::*;

/// Records the Python client's `echo` scenario against the example server as `name`.
fn record(env: &Env, session: &str, name: &str) -> Vec<String> {
    let out = run(env
        .mcptape([
            "record",
            session,
            "--",
            &python(),
            &peer("py_client.py"),
            "echo",
            "--",
        ])
        .args(proxy_argv(name, &[example_server()])));
    assert!(out.status.success(), "{}", text(&out));
    std::fs::read_to_string(env.tape(session))
        .expect("tape")
        .lines()
        .map(|l| format!("{l}\n"))
        .collect()
}

/// `mcptape replay TAPE --server NAME -- py_client echo -- proxy NAME (no server)`.
fn replay(env: &Env, tape: &std::path::Path, name: &str) -> Output {
    let absent = vec!["/nonexistent/server-that-must-not-start".to_owned()];
    run(env
        .mcptape(["replay"])
        .arg(tape)
        .args([
            "--server",
            name,
            "--",
            &python(),
            &peer("py_client.py"),
            "echo",
            "--",
        ])
        .args(proxy_argv(name, &absent)))
}

/// The tape as a killed `beta` proxy and a live `alpha` proxy leave it: alpha's first
/// half, beta's whole connection but its last line, which is torn in the middle; then
/// alpha's writer (the real one) ends the torn line and appends the rest of alpha.
/// Returns the tape and the torn line's number.
fn shared_tape(env: &Env) -> (std::path::PathBuf, usize) {
    let alpha = record(env, "a", "alpha");
    let beta = record(env, "b", "beta");
    let half = alpha.len() / 2;
    let last = beta.last().expect("beta's close");
    assert!(last.contains("$transport/close"), "{last}");
    let mut text: String = alpha[..half].concat();
    text.push_str(&beta[..beta.len() - 1].concat());
    text.push_str(&last[..last.len() / 2]);
    let torn_line = half + beta.len();
    let path = env.path("shared.ndjson");
    std::fs::write(&path, &text).expect("write");
    let mut writer = mcptape::TapeWriter::open(&path).expect("open");
    for line in &alpha[half..] {
        writer.append(line.as_bytes()).expect("append");
    }
    (path, torn_line)
}

#[test]
fn a_torn_line_from_a_killed_writer_fails_only_its_own_connection() {
    let env = Env::new();
    let (tape, torn) = shared_tape(&env);
    let skipped = format!("shared.ndjson` line {torn}: torn line skipped");

    // show: every connection, with a warning naming the line and whose it may be.
    let out = run(env.mcptape(["show", "--full"]).arg(&tape));
    assert!(out.status.success(), "{}", text(&out));
    let err = stderr(&out);
    assert!(err.contains(&skipped), "{err}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("alpha") && stdout.contains("beta"),
        "{stdout}"
    );
    let beta_conn = mcptape::Tape::load(&tape).expect("load").connections()[1]
        .id
        .clone();
    assert!(
        err.contains(&format!(
            "server `beta` connection `{beta_conn}`, whose replay fails"
        )),
        "{err}"
    );

    // list: the tape is readable, both connections counted.
    std::fs::copy(&tape, env.tape("shared")).expect("copy");
    let out = run(env.mcptape(["list", "--json"]));
    assert!(out.status.success(), "{}", text(&out));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let row = rows
        .as_array()
        .and_then(|r| r.iter().find(|r| r["session"] == "shared"))
        .expect("the shared tape is listed");
    assert_eq!(row["connections"], 2, "{row}");
    assert_eq!(
        row["servers"],
        serde_json::json!(["alpha", "beta"]),
        "{row}"
    );

    // replay: alpha (which went on writing) replays clean; beta, which lost its line,
    // fails, naming it.
    let out = replay(&env, &tape, "alpha");
    assert!(out.status.success(), "{}", text(&out));
    assert!(stderr(&out).contains(&skipped), "{}", text(&out));
    let out = replay(&env, &tape, "beta");
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(
        stderr(&out).contains(&format!("tape line {torn} is torn")),
        "{}",
        text(&out)
    );

    // redact --check cannot check the torn line and says so; redact keeps it torn (as
    // `{`), every other line where it was, and what it held is gone.
    let out = run(env.mcptape(["redact", "--check"]).arg(&tape));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("shared.ndjson:{torn}: (torn line")),
        "{}",
        text(&out)
    );
    let before = std::fs::read_to_string(&tape).expect("tape");
    let out = run(env.mcptape(["redact"]).arg(&tape));
    assert!(out.status.success(), "{}", text(&out));
    let after = std::fs::read_to_string(&tape).expect("tape");
    assert_eq!(after.lines().count(), before.lines().count());
    assert_eq!(after.lines().nth(torn - 1), Some("{"));
    let out = replay(&env, &tape, "beta");
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let out = replay(&env, &tape, "alpha");
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn a_line_broken_other_than_torn_is_still_an_error_naming_file_and_line() {
    let env = Env::new();
    let (tape, torn) = shared_tape(&env);
    let text_ = std::fs::read_to_string(&tape).expect("tape");
    let mut lines: Vec<&str> = text_.lines().collect();
    // Broken in the middle, not unfinished: not what a killed writer leaves.
    lines[torn - 1] = r#"{"jsonrpc":"2.0","id":}"#;
    let bad = env.path("bad.ndjson");
    std::fs::write(&bad, lines.join("\n") + "\n").expect("write");
    for args in [&["show"][..], &["replay"], &["redact", "--check"]] {
        let mut cmd = env.mcptape(args);
        cmd.arg(&bad);
        if args[0] == "replay" {
            cmd.args(["--", "true"]);
        }
        let out = run(cmd);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(
            stderr(&out).contains(&format!("bad.ndjson` line {torn}: not valid JSON")),
            "{args:?}: {}",
            text(&out)
        );
    }
}
