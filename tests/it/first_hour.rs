//! What a newcomer's first hour ran into (issue 14's trial from the README): a mistyped
//! command under `record` loses no tape, and `-h` is short while `--help` has the lists.

use crate::support::*;

#[test]
fn a_mistyped_command_under_record_puts_the_previous_tape_back() {
    let env = Env::new();
    record_echo(&env, "first", "hi", &[]);
    record_echo(&env, "first", "hi", &[]);
    let tape = env.tape("first");
    let prev = env.mcptape_home().join("recordings/first.prev.ndjson");
    let before = std::fs::read(&tape).expect("the tape");
    let prev_before = std::fs::read(&prev).expect("the .prev of the second record");
    assert!(!before.is_empty());

    let out = run(env.mcptape(["record", "first", "--", "mcptape-typo-not-a-command"]));
    assert_eq!(out.status.code(), Some(127), "{}", text(&out));
    assert_eq!(std::fs::read(&tape).expect("the tape is back"), before);
    assert_eq!(
        std::fs::read(&prev).expect("the older .prev is back too"),
        prev_before
    );
    assert!(
        stderr(&out).contains("the previous one is back at"),
        "{}",
        text(&out)
    );

    // A shell that cannot find its command (127): the same.
    let out = run(env.mcptape(["record", "first", "--", "sh", "-c", "mcptape-typo-2"]));
    assert_eq!(out.status.code(), Some(127), "{}", text(&out));
    assert_eq!(std::fs::read(&tape).expect("the tape is back"), before);
    assert_eq!(std::fs::read(&prev).expect(".prev"), prev_before);
    let names: Vec<String> = std::fs::read_dir(env.mcptape_home().join("recordings"))
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "nothing left beside them: {names:?}");
}

#[test]
fn a_new_session_whose_command_is_mistyped_leaves_no_empty_tape() {
    let env = Env::new();
    let out = run(env.mcptape(["record", "x2", "--", "mcptape-typo-3"]));
    assert_eq!(out.status.code(), Some(127), "{}", text(&out));
    assert!(!env.tape("x2").exists(), "{}", text(&out));
    let out = run(env.mcptape(["list"]));
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("x2"),
        "{}",
        text(&out)
    );
}

#[test]
fn short_help_is_short_and_long_help_has_the_lists() {
    let env = Env::new();
    let short = run(env.mcptape(["-h"]));
    let long = run(env.mcptape(["--help"]));
    let (short, long) = (
        String::from_utf8_lossy(&short.stdout).into_owned(),
        String::from_utf8_lossy(&long.stdout).into_owned(),
    );
    assert!(!short.contains("Exit status:"), "{short}");
    assert!(short.contains("see more with '--help'"), "{short}");
    assert!(
        long.contains("Exit status:") && long.contains("Environment:"),
        "{long}"
    );
    // Bare `mcptape` shows the short one.
    let bare = run(env.mcptape(Vec::<&str>::new()));
    assert!(!text(&bare).contains("Exit status:"), "{}", text(&bare));
}

#[test]
fn redact_check_fails_a_tape_recorded_with_no_redact_until_it_is_redacted() {
    let env = Env::new();
    record_echo(&env, "nr", "hi", &["--no-redact"]);

    let check = run(env.mcptape(["redact", "--check", "nr"]));
    assert_eq!(check.status.code(), Some(1), "{}", text(&check));
    assert!(
        String::from_utf8_lossy(&check.stdout)
            .contains(":1: params.redaction (recorded with --no-redact"),
        "{}",
        text(&check)
    );
    let out = run(env.mcptape(["redact", "nr"]));
    assert!(out.status.success(), "{}", text(&out));
    let check = run(env.mcptape(["redact", "--check", "nr"]));
    assert_eq!(check.status.code(), Some(0), "{}", text(&check));
}

/// Records `mcptape call example.echo message:MESSAGE` into `session`, with `extra` flags
/// for `record`.
fn record_echo(env: &Env, session: &str, message: &str, extra: &[&str]) {
    let config = env.path("mcp.json");
    let doc = serde_json::json!({"mcpServers": {"example": {"command": example_server()}}});
    std::fs::write(&config, doc.to_string()).expect("write config");
    let out = run(env
        .mcptape(["record", session])
        .args(extra)
        .arg("--")
        .arg(bin())
        .args([
            "call",
            "example.echo",
            &format!("message:{message}"),
            "--config",
        ])
        .arg(&config));
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn no_redact_in_the_environment_never_turns_off_redact() {
    let env = Env::new();
    record_echo(&env, "nr", "password=hunter2-not-shared", &["--no-redact"]);
    let tape = env.tape("nr");
    assert!(
        std::fs::read_to_string(&tape)
            .expect("tape")
            .contains("hunter2-not-shared")
    );
    let out = run(env.mcptape(["redact", "nr"]).env("MCPTAPE_NO_REDACT", "1"));
    assert!(out.status.success(), "{}", text(&out));
    let after = std::fs::read_to_string(&tape).expect("tape");
    assert!(!after.contains("hunter2-not-shared"), "{after}");
}

#[test]
fn the_no_redact_mark_is_read_however_it_is_spelt() {
    let env = Env::new();
    record_echo(&env, "nr", "hi", &["--no-redact"]);
    let tape = env.tape("nr");
    let text_of = std::fs::read_to_string(&tape).expect("tape");
    std::fs::write(
        &tape,
        text_of.replacen("\"redaction\":\"off\"", "\"redaction\":\"\\u006fff\"", 1),
    )
    .expect("rewrite");
    let check = run(env.mcptape(["redact", "--check", "nr"]));
    assert_eq!(check.status.code(), Some(1), "{}", text(&check));
}

#[test]
fn a_server_command_that_cannot_start_is_shown_redacted() {
    let env = Env::new();
    record_echo(&env, "keep", "hi", &[]);
    for format in ["text", "github"] {
        let out = run(env.mcptape([
            "verify",
            "keep",
            "--format",
            format,
            "--",
            "/nonexistent/srv",
            "--api-key",
            "Zq8vN2xR7pL4mK9w",
        ]));
        assert_eq!(out.status.code(), Some(3), "{}", text(&out));
        assert!(text(&out).contains("cannot start"), "{}", text(&out));
        assert!(!text(&out).contains("Zq8vN2xR7pL4mK9w"), "{}", text(&out));
    }
}

#[test]
fn a_variable_that_is_not_utf8_is_named_so_not_as_unset() {
    use std::os::unix::ffi::OsStrExt;
    let env = Env::new();
    let config = env.path("v.json");
    let doc =
        serde_json::json!({"mcpServers": {"v": {"command": example_server(), "args": ["${TOK}"]}}});
    std::fs::write(&config, doc.to_string()).expect("write config");
    let bytes = std::ffi::OsStr::from_bytes(b"s\xffx");
    let out = run(env
        .mcptape(["tools", "v", "--config"])
        .arg(&config)
        .env("TOK", bytes));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("uses `${TOK}`, which is not valid UTF-8"),
        "{}",
        text(&out)
    );
}

/// A command that ran and recorded nothing (yet) keeps its fresh tape: a proxy it started
/// in the background belongs there, never in the previous recording.
#[test]
fn a_command_that_ran_keeps_its_fresh_tape_even_empty() {
    let env = Env::new();
    record_echo(&env, "s", "hi", &[]);
    let before = std::fs::read(env.tape("s")).expect("tape");
    let out = run(env.mcptape(["record", "s", "--", "true"]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(std::fs::read(env.tape("s")).expect("tape").len(), 0);
    let prev = env.mcptape_home().join("recordings/s.prev.ndjson");
    assert_eq!(std::fs::read(prev).expect(".prev"), before);
}

#[test]
fn a_server_that_cannot_be_reached_is_one_problem_not_two() {
    let env = Env::new();
    record_echo(&env, "keep", "hi", &[]);
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let out = run(env.mcptape([
        "verify",
        "keep",
        "--url",
        &format!("http://127.0.0.1:{port}/mcp"),
    ]));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let problems = stdout(&out)
        .lines()
        .filter(|l| l.starts_with("problem"))
        .count();
    assert_eq!(problems, 1, "{}", text(&out));
}
