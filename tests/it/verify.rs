//! `mcptape verify`: a tape against a new build of its server, every changed answer
//! classified, reported as text, JSON and JUnit, and re-blessed with --update.

use std::os::unix::fs::PermissionsExt;
use std::process::Output;

use crate::http::HttpServer;

use crate::support::*;

/// Records the Python SDK client's `example` scenario (which lists the tools, so their
/// read-only annotations are in the tape) against the example server.
fn record_example(env: &Env) {
    record_py(env, "s", "example", "example", &[example_server()]);
}

fn verify(env: &Env, args: &[&str], server: &[&str]) -> Output {
    let mut cmd = env.mcptape(["verify", "s"]);
    cmd.args(args).arg("--").arg(example_server()).args(server);
    run(&mut cmd)
}

#[test]
fn a_drifted_build_shows_every_class_with_its_paths() {
    let env = Env::new();
    record_example(&env);
    let same = verify(&env, &[], &[]);
    assert!(same.status.success(), "{}", text(&same));
    assert!(
        stdout(&same).contains(": 7 same, 0 changed\n"),
        "{}",
        text(&same)
    );

    let out = verify(&env, &[], &["--drift"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let report = stdout(&out);
    assert!(
        report.contains("3 same, 2 changed, 1 new-error, 1 gone-error"),
        "{report}"
    );
    assert!(
        report.contains("changed    tools/call echo (tape line"),
        "{report}"
    );
    assert!(report.contains("result.length: (absent) → 5"), "{report}");
    assert!(report.contains("new-error  tools/call add"), "{report}");
    assert!(report.contains("gone-error tools/call fail"), "{report}");
    assert!(
        report.contains(r#"result.content.0.text: "Hello, tape!" → "Hi, tape!""#),
        "{report}"
    );

    // JSON: one object per call.
    let out = verify(&env, &["--format", "json"], &["--drift"]);
    let calls: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(calls.len(), 7, "tools/list and six calls");
    let greet = calls.iter().find(|c| c["tool"] == "greet").expect("greet");
    assert_eq!(greet["class"], "changed");
    assert_eq!(greet["differences"][0]["path"], "result.content.0.text");

    // JUnit: real XML, one testcase per call, read by Python's parser.
    let junit = env.path("report.xml");
    let out = verify(
        &env,
        &[
            "--format",
            "junit",
            "--output",
            &junit.display().to_string(),
        ],
        &["--drift"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let check = "import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); \
                 print(len(r.findall('.//testcase')), len(r.findall('.//failure')))";
    let parsed = run(env.cmd(python()).args(["-c", check]).arg(&junit));
    assert_eq!(stdout(&parsed).trim(), "7 4", "{}", text(&parsed));

    // A receipt beside the tape.
    let receipt: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(env.mcptape_home().join("recordings/s.verify.json"))
            .expect("receipt"),
    )
    .expect("json");
    assert_eq!(receipt["counts"]["changed"], 2);
    assert_eq!(receipt["server"], "example");

    // --update re-blesses; the next verify is clean; the old tape is kept.
    let out = verify(&env, &["--update"], &["--drift"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stderr(&out).contains("rewrote 4 recorded answers"),
        "{}",
        text(&out)
    );
    assert!(env.mcptape_home().join("recordings/s.prev.ndjson").exists());
    let out = verify(&env, &[], &["--drift"]);
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn volatile_fields_inside_json_text_are_ignored_by_glob_and_typos_warned() {
    let env = Env::new();
    let config = serde_json::json!({"mcpServers": {"example": {"command": example_server()}}});
    std::fs::write(env.path(".mcp.json"), config.to_string()).expect("config");
    let mcptape = bin().display().to_string();
    let script = format!("{mcptape} call example.now && {mcptape} call example.write_note text:n");
    let out = run(&mut env.mcptape(["record", "s", "--", "sh", "-c", &script]));
    assert!(out.status.success(), "{}", text(&out));

    // Each call listed the tools first: `now` is read-only and played (its time
    // changed), `write_note` may write and is skipped.
    let out = verify(&env, &[], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(stdout(&out).contains("1 skipped"), "{}", text(&out));
    assert!(
        stdout(&out).contains("skipped    tools/call write_note"),
        "{}",
        text(&out)
    );

    let out = verify(&env, &["--allow-writes"], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        stdout(&out).contains("result.content.0.text.time: \""),
        "{}",
        text(&out)
    );

    let out = verify(
        &env,
        &[
            "--allow-writes",
            "--ignore",
            "result.content.*.text.time",
            "--ignore",
            "result.tpyo",
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stderr(&out).contains("--ignore `result.tpyo` matched nothing"),
        "{}",
        text(&out)
    );
    assert!(
        !stderr(&out).contains("--ignore `result.content.*.text.time` matched nothing"),
        "{}",
        text(&out)
    );
}

#[test]
fn server_everything_verifies_clean_with_sampling_answered_from_the_tape() {
    let env = Env::new();
    record_everything(&env, "s");

    let verify_everything = |args: &[&str]| {
        let mut cmd = env.mcptape(["verify", "s"]);
        cmd.args(args).arg("--").args(everything_server());
        run(&mut cmd)
    };
    // The sampling tool is not read-only by its annotations: skipped by default…
    let out = verify_everything(&[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stdout(&out).contains("skipped    tools/call trigger-sampling-request"),
        "{}",
        text(&out)
    );
    // …and played, its sampling request answered from the tape, with --allow-writes.
    let out = verify_everything(&["--allow-writes"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!stdout(&out).contains("skipped"), "{}", text(&out));
    assert!(!stdout(&out).contains("problem"), "{}", text(&out));
}

#[test]
fn a_server_that_crashes_or_stalls_is_reported() {
    let env = Env::new();
    record_example(&env);
    let out = verify(&env, &[], &["--exit-mid-call", "fail"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let report = stdout(&out);
    assert!(report.contains("new-error  tools/call fail"), "{report}");
    assert!(report.contains("not-played tools/call exact"), "{report}");
    assert!(
        report.contains("the server closed its output at tape line"),
        "{report}"
    );

    let out = verify(&env, &["--timeout", "0.02"], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        stdout(&out).contains("no answer within 0.02s (--timeout)"),
        "{}",
        text(&out)
    );

    let out = verify(&env, &[], &["--garbage"]);
    assert!(
        out.status.success(),
        "garbage is noted, not fatal: {}",
        text(&out)
    );
    assert!(
        stdout(&out).contains("not a JSON-RPC message: this is not json"),
        "{}",
        text(&out)
    );

    let out = run(&mut env.mcptape(["verify", "s", "--server", "nope", "--", "true"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("holds no connection of server `nope`; it holds: example"),
        "{}",
        text(&out)
    );

    let out = run(&mut env.mcptape(["verify", "s", "--", "/nonexistent/server"]));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(
        stdout(&out).contains("cannot start `/nonexistent/server`"),
        "{}",
        text(&out)
    );
}

#[test]
fn verify_writes_its_receipt_0600_with_the_command_redacted() {
    let env = Env::new();
    record_py(&env, "t.ndjson", "example", "example", &[example_server()]);
    let tape = env.path("t.ndjson");
    let receipt = env.path("t.verify.json");
    // An earlier receipt, readable by all: it is tightened too.
    std::fs::write(&receipt, "{}\n").expect("write");
    std::fs::set_permissions(&receipt, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    const SECRET: &str = "hunter2-do-not-keep-0123456789";
    // `sh` runs the server and ignores the flags after it; the receipt names them all.
    let out = run(env
        .mcptape(["verify"])
        .arg(&tape)
        .args(["--", "sh", "-c", "exec \"$0\""])
        .arg(example_server())
        .args(["--api-key", SECRET]));
    assert!(out.status.success(), "{}", text(&out));
    let mode = std::fs::metadata(&receipt)
        .expect("stat")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600, "receipt mode {mode:o}");
    let written = std::fs::read_to_string(&receipt).expect("receipt");
    assert!(!written.contains(SECRET), "{written}");
    assert!(written.contains("--api-key [REDACTED]"), "{written}");
    assert!(written.contains("example-server"), "{written}");
    assert!(
        !text(&out).contains(SECRET),
        "the report shows it: {}",
        text(&out)
    );
}

#[test]
fn verify_against_a_url_redacts_its_credentials_in_the_receipt() {
    let env = Env::new();
    record_everything(&env, "s");
    let server = HttpServer::start();
    const SECRET: &str = "Zq8rT3vX9kLm2Wp7Yb4Nc6Hd";
    // The server ignores both; a URL in an agent's config may well carry them.
    let url = server
        .url
        .replacen("http://", &format!("http://user:{SECRET}@"), 1)
        + &format!("?access_token={SECRET}");
    let out = run(env.mcptape(["verify", "s", "--allow-writes", "--url", &url]));
    assert!(out.status.success(), "{}", text(&out));
    let receipt = env.mcptape_home().join("recordings/s.verify.json");
    let written = std::fs::read_to_string(&receipt).expect("receipt");
    assert!(!written.contains(SECRET), "{written}");
    assert!(written.contains("127.0.0.1"), "{written}");
    let mode = std::fs::metadata(&receipt)
        .expect("stat")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600, "receipt mode {mode:o}");
}

#[test]
fn a_server_that_never_runs_fails_verify_every_time() {
    // Whether the server is gone before it reads or before it answers is timing; the run
    // is broken either way (it once exited 0 about one run in two).
    let env = Env::new();
    record_example(&env);
    for _ in 0..6 {
        let out = run(env.mcptape(["verify", "s", "--allow-writes", "--", "false"]));
        assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    }
}

#[test]
fn the_output_file_is_never_written_through_a_link_or_into_a_fifo() {
    let env = Env::new();
    record_example(&env);
    let victim = env.path("victim");
    std::fs::write(&victim, "V").expect("victim");
    let link = env.path("report.txt");
    std::os::unix::fs::symlink(&victim, &link).expect("symlink");
    let fifo = env.path("report.fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo")
            .success()
    );
    for (out, name) in [(&link, "report.txt"), (&fifo, "report.fifo")] {
        let mut cmd = env.mcptape(["verify", "s", "--output"]);
        cmd.arg(out).arg("--").arg(example_server());
        let got = run_or_hang(&mut cmd);
        assert_eq!(got.status.code(), Some(2), "{}", text(&got));
        assert!(
            String::from_utf8_lossy(&got.stderr).contains(name),
            "{}",
            text(&got)
        );
    }
    assert_eq!(std::fs::read_to_string(&victim).expect("victim"), "V");
}

#[test]
fn a_server_that_closes_its_output_and_lingers_is_stopped_and_the_run_is_broken() {
    // Its stdout ends before it exits, and closing its stdin does not end it: it is
    // stopped the MCP way (SIGTERM after the grace), not waited for without end.
    let env = Env::new();
    record_example(&env);
    let out = run(env
        .mcptape(["verify", "s", "--allow-writes", "--", "sh", "-c"])
        .arg("exec 1>&-; exec sleep 1000"));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(
        stdout(&out).contains("not played: the server closed its output at tape line"),
        "{}",
        text(&out)
    );
}
