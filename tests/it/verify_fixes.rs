//! Fixes of issue 14's review of `verify` and `redact --check`: a failing server's stderr
//! is redacted in the reports, the reason nothing was compared comes from the tape and
//! the run, mcptape's own SIGTERM is not blamed on the server, a tape verify cannot read
//! exits 2, the github report's `::notice` stays last, and `redact --check --format json`
//! keeps what it checked when a later tape cannot be read. Servers are real processes
//! (`sh`, `bash`, the example server).

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::support::*;

const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// A tape line of the example server's connection `c-1`.
fn line(message: Value, dir: &str) -> String {
    let mut m = message;
    m["_meta"] =
        json!({"dir": dir, "server": "example", "ts": "2026-12-01T10:00:00.000Z", "conn": "c-1"});
    format!("{m}\n")
}

/// One recorded connection of the example server: the handshake, then `n` echo calls,
/// each with its answer (no tools/list: the calls are skipped without --allow-writes).
fn echo_tape(env: &Env, session: &str, n: usize) -> PathBuf {
    let mut out = line(
        json!({"jsonrpc": "2.0", "method": "$transport/start", "params": {"command": ["example-server"]}}),
        "lifecycle",
    );
    out += &line(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        "send",
    );
    out += &line(
        json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "mcptape-example", "version": "0.1.0"}}}),
        "recv",
    );
    out += &line(
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        "send",
    );
    for i in 0..n {
        let id = i + 2;
        out += &line(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "hi"}}}),
            "send",
        );
        out += &line(
            json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "Echo: hi"}]}}),
            "recv",
        );
    }
    let tape = env.tape(session);
    std::fs::create_dir_all(tape.parent().expect("dir")).expect("mkdir");
    std::fs::write(&tape, out).expect("write tape");
    tape
}

#[test]
fn a_failing_servers_stderr_is_redacted_in_the_text_and_junit_reports() {
    let env = Env::new();
    echo_tape(&env, "demo", 1);
    let stripe = format!("sk_live_{}", fake(ALNUM, 24, 41));
    let bare = format!("sk_live_{}", fake(ALNUM, 24, 42));
    let literal = format!("lit-{}", fake(ALNUM, 20, 43));
    // The secrets reach the server through its environment, not its command line.
    let script = "echo \"TOKEN=$STRIPE\" >&2; echo \"the key $BARE failed\" >&2; \
                  echo \"seen $MINE here\" >&2; exit 3";
    let verify = |extra: &[&str]| {
        let mut cmd = env.mcptape(["verify", "demo"]);
        cmd.args(extra)
            .args(["--", "sh", "-c", script])
            .env("STRIPE", &stripe)
            .env("BARE", &bare)
            .env("MINE", &literal)
            .env("MCPTAPE_REDACT", "MINE");
        run(cmd)
    };
    let out = verify(&[]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let report = stdout(&out);
    assert!(
        report.contains("the server exited with status 3; the last 3 lines of its stderr:"),
        "{report}"
    );
    assert!(report.contains("TOKEN=[REDACTED]"), "{report}");
    assert!(report.contains("the key [REDACTED] failed"), "{report}");
    assert!(report.contains("seen [REDACTED] here"), "{report}");
    for secret in [&stripe, &bare, &literal] {
        assert!(!report.contains(secret.as_str()), "{report}");
    }

    let junit = env.path("report.xml");
    let out = verify(&[
        "--format",
        "junit",
        "--output",
        &junit.display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let xml = std::fs::read_to_string(&junit).expect("the junit report");
    assert!(xml.contains("TOKEN=[REDACTED]"), "{xml}");
    for secret in [&stripe, &bare, &literal] {
        assert!(!xml.contains(secret.as_str()), "{xml}");
    }
    // The problem printed on stderr (formats other than text) is the redacted one too.
    let problems: String = stderr(&out)
        .lines()
        .filter(|l| l.starts_with("mcptape: "))
        .collect();
    assert!(problems.contains("TOKEN=[REDACTED]"), "{}", text(&out));
    assert!(!problems.contains(&stripe), "{}", text(&out));
}

#[test]
fn nothing_compared_after_a_server_that_cannot_start_says_the_server_failed() {
    let env = Env::new();
    echo_tape(&env, "demo", 4);
    let out = run(env.mcptape(["verify", "demo", "--", "/nonexistent/server"]));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let all = text(&out);
    assert!(
        all.contains(
            "nothing was compared: the server failed (see the run's problems); the tape holds 4 recorded requests"
        ),
        "{all}"
    );
    assert!(!all.contains("no request past the handshake"), "{all}");

    // A tape that truly holds none past the handshake still says so.
    echo_tape(&env, "bare", 0);
    let out = run(env.mcptape(["verify", "bare", "--", &example_server()]));
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stderr(&out).contains(
            "warning: nothing was compared: the tape holds no request past the handshake"
        ),
        "{}",
        text(&out)
    );
}

#[test]
fn a_server_that_closes_its_output_and_lingers_is_said_to_be_stopped_by_mcptape() {
    let env = Env::new();
    echo_tape(&env, "demo", 1);
    let out = run(env.mcptape([
        "verify",
        "demo",
        "--",
        "bash",
        "-c",
        "read l; exec 1>&-; sleep 30",
    ]));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let report = stdout(&out);
    assert!(
        report.contains(
            "the server did not exit by itself: it was stopped by mcptape (SIGTERM) after its grace"
        ),
        "{report}"
    );
    assert!(!report.contains("killed by signal 15"), "{report}");
}

#[test]
fn a_tape_verify_cannot_find_or_read_exits_2_like_every_command() {
    let env = Env::new();
    let missing = env.path("missing.ndjson");
    let out = run(env.mcptape(["verify"]).arg(&missing).args(["--", "true"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(stderr(&out).contains("no tape `missing`"), "{}", text(&out));
    // A tape that is there but cannot be read (a directory).
    let dir = env.path("dir.ndjson");
    std::fs::create_dir(&dir).expect("mkdir");
    let out = run(env.mcptape(["verify"]).arg(&dir).args(["--", "true"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let show = run(env.mcptape(["show"]).arg(&missing));
    assert_eq!(show.status.code(), Some(2), "{}", text(&show));

    // A line broken other than torn (not the last one) is an error of the tape's too.
    let tape = echo_tape(&env, "broken", 1);
    let mut lines: Vec<String> = std::fs::read_to_string(&tape)
        .expect("tape")
        .lines()
        .map(str::to_owned)
        .collect();
    lines[2] = "{\"jsonrpc\": not json}".to_owned();
    std::fs::write(&tape, lines.join("\n") + "\n").expect("write");
    let out = run(env.mcptape(["verify", "broken", "--", "true"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));

    // The help no longer lists an unreadable tape under exit 3.
    let help = run(env.mcptape(["verify", "--help"]));
    let help = stdout(&help);
    let three = help
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("3 "))
        .take_while(|l| !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    assert!(three.contains("could not be completed"), "{help}");
    assert!(!three.contains("unreadable"), "{help}");
}

#[test]
fn the_github_report_puts_the_nothing_compared_warning_before_the_notice() {
    let env = Env::new();
    echo_tape(&env, "demo", 2);
    let out = run(env.mcptape([
        "verify",
        "demo",
        "--format",
        "github",
        "--",
        &example_server(),
    ]));
    assert!(out.status.success(), "{}", text(&out));
    let report = stdout(&out);
    let lines: Vec<&str> = report.lines().collect();
    assert_eq!(lines.len(), 4, "{report}");
    assert!(lines[0].starts_with("::warning ") && lines[0].contains("skipped"));
    assert!(
        lines[2].starts_with("::warning ")
            && lines[2].contains("title=mcptape verify%3A nothing compared::"),
        "{report}"
    );
    assert!(
        lines[3].starts_with("::notice ") && lines[3].ends_with("::0 same, 0 changed, 2 skipped"),
        "{report}"
    );
}

#[test]
fn redact_check_json_prints_what_it_checked_and_the_error_when_a_later_tape_is_missing() {
    let env = Env::new();
    let key = format!("sk_live_{}", fake(ALNUM, 24, 44));
    let dirty = env.path("a.ndjson");
    let entry = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": key}},
        "_meta": {"dir": "send", "server": "example", "ts": "2026-12-01T10:00:00.000Z", "conn": "c-1"}});
    std::fs::write(&dirty, format!("{entry}\n")).expect("write");
    let missing = env.path("missing.ndjson");
    let out = run(env
        .mcptape(["redact", "--check", "--format", "json"])
        .arg(&dirty)
        .arg(&missing));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    let findings = doc["findings"].as_array().expect("findings");
    assert_eq!(findings.len(), 1, "{doc}");
    assert_eq!(findings[0]["line"], 1, "{doc}");
    assert_eq!(findings[0]["path"], "params.arguments.message", "{doc}");
    assert_eq!(doc["summary"]["tapes"], 1, "{doc}");
    assert_eq!(doc["summary"]["clean"], false, "{doc}");
    let errors = doc["errors"].as_array().expect("errors");
    assert_eq!(errors.len(), 1, "{doc}");
    assert_eq!(errors[0]["file"], missing.display().to_string(), "{doc}");
    assert!(
        errors[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("no tape `missing`")),
        "{doc}"
    );
    // The error is still printed on stderr.
    assert!(stderr(&out).contains("error: "), "{}", text(&out));
}
