//! The habits a demanding user expects of a CLI (issue 14): a forgotten `--`, a misspelt
//! session, `record NAME` without a command, complete `--help` lists, verify's details
//! (absent vs `null`, tape order, a server that fails to start), `--timeout` that is
//! kept, and one `--no-redact` warning.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::*;

/// A tape line of the example server's connection `conn`.
fn line(message: Value, dir: &str, conn: &str) -> String {
    let mut m = message;
    m["_meta"] =
        json!({"dir": dir, "server": "example", "ts": "2026-12-01T10:00:00.000Z", "conn": conn});
    format!("{m}\n")
}

/// One recorded connection of the example server: the handshake, then `calls` (a tool
/// name, its arguments, the recorded result), each with its answer.
fn connection(conn: &str, calls: &[(&str, Value, Value)]) -> String {
    let mut out = line(
        json!({"jsonrpc": "2.0", "method": "$transport/start", "params": {"command": ["example-server"]}}),
        "lifecycle",
        conn,
    );
    out += &line(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        "send",
        conn,
    );
    out += &line(
        json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "mcptape-example", "version": "0.1.0"}}}),
        "recv",
        conn,
    );
    out += &line(
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        "send",
        conn,
    );
    for (i, (tool, args, result)) in calls.iter().enumerate() {
        let id = i + 2;
        out += &line(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": args}}),
            "send",
            conn,
        );
        out += &line(
            json!({"jsonrpc": "2.0", "id": id, "result": result}),
            "recv",
            conn,
        );
    }
    out
}

/// The echo call of the example server, as it answers it.
fn echo(message: &str) -> (&'static str, Value, Value) {
    (
        "echo",
        json!({"message": message}),
        json!({"content": [{"type": "text", "text": format!("Echo: {message}")}]}),
    )
}

/// Writes a session's tape in the test's home.
fn write_tape(env: &Env, session: &str, text: &str) -> PathBuf {
    let tape = env.tape(session);
    std::fs::create_dir_all(tape.parent().expect("dir")).expect("mkdir");
    std::fs::write(&tape, text).expect("write tape");
    tape
}

/// A config naming the example server as `example` and `hang`, a server that never
/// answers (and never reads its stdin).
fn config(env: &Env) -> PathBuf {
    let path = env.path("mcp.json");
    let text = json!({"mcpServers": {
        "example": {"command": example_server()},
        "hang": {"command": "sleep", "args": ["30"]},
    }});
    std::fs::write(&path, text.to_string()).expect("write config");
    path
}

#[test]
fn a_command_without_dashdash_is_told_where_to_put_it() {
    let env = Env::new();
    for (args, fixed) in [
        (
            &["record", "demo", "python", "agent.py"][..],
            "`mcptape record demo -- python agent.py`",
        ),
        (
            &["replay", "demo", "npm", "test"][..],
            "`mcptape replay demo -- npm test`",
        ),
        (
            &["verify", "demo", "node", "server.js", "--port", "1"][..],
            "`mcptape verify demo -- node server.js --port 1`",
        ),
        (
            &["proxy", "--server", "x", "uvx", "mcp-server-git"][..],
            "`mcptape proxy --server x -- uvx mcp-server-git`",
        ),
    ] {
        let out = run(env.mcptape(args));
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        let err = stderr(&out);
        assert!(err.contains("put `--` before the command it runs"), "{err}");
        assert!(err.contains(fixed), "{err}");
    }
    // Nothing ran and nothing was written.
    assert!(!env.tape("demo").exists());
    // Other refusals keep clap's own words.
    let out = run(env.mcptape(["record", "demo", "--nope"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("unexpected argument '--nope'"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_misspelt_session_gets_the_nearest_name_from_every_command_that_reads_it() {
    let env = Env::new();
    write_tape(&env, "demo", &connection("c-1", &[echo("hi")]));
    let dir = env.mcptape_home().join("recordings");
    let want = format!(
        "no tape `demp` in `{}`; did you mean `demo`?",
        dir.display()
    );
    let mut proxy = env.mcptape(["proxy", "--", "true"]);
    proxy.env("MCPTAPE_REPLAY", "demp");
    for (what, cmd) in [
        ("replay", env.mcptape(["replay", "demp", "--", "true"])),
        ("show", env.mcptape(["show", "demp"])),
        ("redact", env.mcptape(["redact", "demp"])),
        ("verify", env.mcptape(["verify", "demp", "--", "true"])),
        ("proxy", proxy),
    ] {
        let out = run(cmd);
        assert!(!out.status.success(), "{what}: {}", text(&out));
        assert!(stderr(&out).contains(&want), "{what}: {}", text(&out));
    }
    // Nothing near: a few of the sessions there.
    let out = run(env.mcptape(["show", "zzzz"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("it holds `demo` (`mcptape list` shows the recorded sessions)"),
        "{}",
        text(&out)
    );
}

#[test]
fn record_without_a_command_touches_no_tape_and_its_exports_append() {
    let env = Env::new();
    let cfg = config(&env);
    // A fresh name: nothing is created.
    let out = run(env.mcptape(["record", "fresh"]));
    assert!(out.status.success(), "{}", text(&out));
    assert!(!env.tape("fresh").exists(), "{}", text(&out));
    assert!(
        stderr(&out).contains("the first proxy that records with these variables creates"),
        "{}",
        text(&out)
    );

    // An existing tape: neither rotated nor emptied.
    let before = connection("old-1", &[echo("kept")]);
    let tape = write_tape(&env, "demo", &before);
    let out = run(env.mcptape(["record", "demo"]));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&tape).expect("tape"), before);
    assert!(
        !env.mcptape_home()
            .join("recordings/demo.prev.ndjson")
            .exists()
    );
    let said = stderr(&out);
    assert!(said.contains("append to `"), "{said}");
    assert!(said.contains("to start afresh"), "{said}");

    // What is exported appends: the old connection stays, the new one follows it.
    let exported = stdout(&out);
    let path = exported
        .lines()
        .find_map(|l| l.strip_prefix("export MCPTAPE_RECORD='"))
        .and_then(|l| l.strip_suffix('\''))
        .expect("an export line");
    let mut call = env.mcptape(["call", "example.echo", "message:new", "--config"]);
    call.arg(&cfg).env("MCPTAPE_RECORD", path);
    let out = run(call);
    assert!(out.status.success(), "{}", text(&out));
    let tape = mcptape::Tape::load(Path::new(path)).expect("load");
    assert_eq!(tape.connections().len(), 2);
    assert_eq!(tape.connections()[0].id, "old-1");
}

#[test]
fn help_lists_every_exit_status_and_variable_and_record_says_how_to_replay() {
    let env = Env::new();
    let out = run(env.mcptape(["--help"]));
    assert!(out.status.success(), "{}", text(&out));
    let help = stdout(&out);
    for code in ["0", "1", "N", "2", "3", "124", "126", "127"] {
        assert!(help.contains(&format!("\n  {code} ")), "{code}:\n{help}");
    }
    for var in [
        "MCPTAPE_HOME",
        "MCPTAPE_CONFIG",
        "MCPTAPE_REDACT",
        "MCPTAPE_NO_REDACT",
        "MCPTAPE_MAX_BYTES",
        "MCPTAPE_MAX_LINE_BYTES",
        "MCPTAPE_RELAY",
        "MCPTAPE_SESSION_IDLE",
    ] {
        assert!(help.contains(var), "{var}:\n{help}");
    }

    let record = stdout(&run(env.mcptape(["record", "--help"])));
    assert!(
        record.contains("`mcptape replay SESSION -- CMD`"),
        "{record}"
    );
    assert!(record.contains("`mcptape verify"), "{record}");
    // A subcommand lists what concerns it.
    let verify = stdout(&run(env.mcptape(["verify", "--help"])));
    assert!(verify.contains("Exit status:"), "{verify}");
    assert!(!verify.contains("124"), "{verify}");
    let tools = stdout(&run(env.mcptape(["tools", "--help"])));
    assert!(
        tools.contains("  124  no answer within --timeout"),
        "{tools}"
    );
}

#[test]
fn verify_json_tells_an_absent_member_from_null() {
    let env = Env::new();
    let mut answer = echo("hi");
    answer.2["extra"] = Value::Null;
    write_tape(&env, "nulls", &connection("c-1", &[answer]));
    let out = run(env.mcptape([
        "verify",
        "nulls",
        "--allow-writes",
        "--format",
        "json",
        "--",
        &example_server(),
        "--drift",
    ]));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let report: Value = serde_json::from_str(stdout(&out).trim()).expect("one JSON line");
    let diffs = report["differences"].as_array().expect("differences");
    let at = |path: &str| {
        diffs
            .iter()
            .find(|d| d["path"] == path)
            .unwrap_or_else(|| panic!("no {path} in {report}"))
            .as_object()
            .expect("object")
            .clone()
    };
    // Recorded `null`, absent live: `old` is null, `new` is left out.
    let extra = at("result.extra");
    assert_eq!(extra.get("old"), Some(&Value::Null), "{report}");
    assert!(!extra.contains_key("new"), "{report}");
    // Absent on the tape, there live (--drift adds it): `old` is left out.
    let added = diffs
        .iter()
        .find(|d| d.get("old").is_none())
        .unwrap_or_else(|| panic!("no added member in {report}"));
    assert!(added.get("new").is_some_and(|v| !v.is_null()), "{report}");
}

#[test]
fn verify_text_goes_connection_by_connection_in_tape_order() {
    let env = Env::new();
    let greet = (
        "greet",
        json!({"name": "tape"}),
        json!({"content": [{"type": "text", "text": "Hello, tape!"}]}),
    );
    let tape =
        connection("first-1", std::slice::from_ref(&greet)) + &connection("second-1", &[greet]);
    write_tape(&env, "two", &tape);
    // --drift changes greet; --garbage gives each connection a problem.
    let out = run(env.mcptape([
        "verify",
        "two",
        "--allow-writes",
        "--",
        &example_server(),
        "--drift",
        "--garbage",
    ]));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let report = stdout(&out);
    let heads: Vec<&str> = report
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with(' '))
        .collect();
    assert_eq!(heads.len(), 4, "{report}");
    assert!(
        heads[0].starts_with("changed    tools/call greet (tape line 5)"),
        "{report}"
    );
    assert!(
        heads[1].starts_with("problem    connection `first-1`"),
        "{report}"
    );
    assert!(
        heads[2].starts_with("changed    tools/call greet (tape line 11)"),
        "{report}"
    );
    assert!(
        heads[3].starts_with("problem    connection `second-1`"),
        "{report}"
    );
}

#[test]
fn a_server_that_fails_to_start_shows_its_status_and_last_stderr_lines() {
    let env = Env::new();
    write_tape(&env, "demo", &connection("c-1", &[echo("hi")]));
    let script = "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo \"noise $i\" >&2; done; \
                  printf 'cannot bind \\033]0;pwned\\007\\n' >&2; exit 7";
    let out = run(env.mcptape(["verify", "demo", "--", "sh", "-c", script]));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let report = stdout(&out);
    assert!(
        report.contains("the server exited with status 7; the last 10 lines of its stderr:"),
        "{report}"
    );
    // The last ten, escaped, in order; the first three are gone.
    assert!(report.contains("\n             noise 4\n"), "{report}");
    assert!(!report.contains("noise 3\n"), "{report}");
    assert!(
        report.contains("cannot bind \\x1b]0;pwned\\x07"),
        "{report}"
    );
    assert!(!report.contains('\u{1b}'), "{report}");
    // Its stderr still passed through as it came.
    assert!(stderr(&out).contains("noise 1\n"), "{}", text(&out));

    let out = run(env.mcptape(["verify", "demo", "--", "sh", "-c", "kill -SEGV $$"]));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(
        stdout(&out)
            .contains("the server was killed by signal 11 (SIGSEGV); it wrote nothing on stderr"),
        "{}",
        text(&out)
    );

    // A healthy server's stderr passes through, and no problem is made of it.
    let out = run(env.mcptape([
        "verify",
        "demo",
        "--allow-writes",
        "--",
        &example_server(),
        "--log",
    ]));
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stderr(&out).contains("example-server: tools/call"),
        "{}",
        text(&out)
    );
    assert!(!stdout(&out).contains("problem"), "{}", text(&out));
}

/// Runs `cmd`, which must time out (exit 124): how long it took.
fn timed_out(cmd: std::process::Command) -> Duration {
    let start = Instant::now();
    let out = run(cmd);
    let took = start.elapsed();
    assert_eq!(out.status.code(), Some(124), "{}", text(&out));
    assert!(
        stderr(&out).contains("within 1s (--timeout)"),
        "{}",
        text(&out)
    );
    took
}

#[test]
fn call_and_tools_timeout_return_soon_after_the_limit() {
    let env = Env::new();
    let cfg = config(&env);
    // The server sleeps without reading its stdin: closing it does not end it. The stop
    // after a timeout must not add the 2 s grace of a client that is done (it took 3 s).
    let mut call = env.mcptape([
        "call",
        "example.slow",
        "ms:30000",
        "steps:1",
        "--timeout",
        "1",
    ]);
    call.arg("--config").arg(&cfg);
    let took = timed_out(call);
    assert!(took < Duration::from_millis(2500), "call took {took:?}");

    let mut tools = env.mcptape(["tools", "hang", "--timeout", "1", "--config"]);
    tools.arg(&cfg);
    let took = timed_out(tools);
    assert!(took < Duration::from_millis(2500), "tools took {took:?}");
}

#[test]
fn no_redact_warns_once_naming_the_tape() {
    let env = Env::new();
    let proxy = format!(
        "exec '{}' proxy --server example -- '{}' </dev/null",
        bin().display(),
        example_server()
    );
    let out = run(env.mcptape(["record", "raw", "--no-redact", "--", "sh", "-c", &proxy]));
    assert!(out.status.success(), "{}", text(&out));
    let err = stderr(&out);
    assert_eq!(err.matches("without redaction").count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "recording into `{}` without redaction (--no-redact)",
            env.tape("raw").display()
        )),
        "{err}"
    );

    // A proxy on its own says it once too.
    let mut cmd = env.mcptape(["proxy", "--no-redact", "--record", "alone", "--"]);
    cmd.arg(example_server());
    let out = run(cmd);
    assert!(out.status.success(), "{}", text(&out));
    let err = stderr(&out);
    assert_eq!(err.matches("without redaction").count(), 1, "{err}");
    assert!(
        err.contains(&env.tape("alone").display().to_string()),
        "{err}"
    );
}
