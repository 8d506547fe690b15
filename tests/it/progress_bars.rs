//! Progress bars (issue 14): drawn on stderr only when it is a terminal — here a real pty
//! (tests/peers/pty_run.py, Python's `pty` module) — for work that takes longer than a
//! moment, cleared before anything else is printed, and never in a pipe, where stderr is
//! exactly what it was before bars existed. Servers are real: the example server's
//! `slow` tool and a FastMCP server that reports progress (tests/peers/py_progress_server.py).

use std::process::{Command, Output};

use crate::support::*;

/// The escape sequence indicatif ends each drawing with before the next: carriage
/// return, erase the line.
const CLEAR: &str = "\r\u{1b}[2K";

/// `cmd` run on a pty (stdin, stdout and stderr the terminal), with a terminal type that
/// draws; its stdout is every byte the terminal got.
fn on_pty(env: &Env, cmd: &Command) -> Output {
    let mut pty = env.cmd(python());
    pty.arg(peer("pty_run.py"))
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .env("TERM", "xterm-256color");
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => pty.env(k, v),
            None => pty.env_remove(k),
        };
    }
    run(pty)
}

/// What the terminal showed, as text (`\r\n` as the pty writes a newline).
fn screen(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A config naming the example server and the FastMCP progress server.
fn config(env: &Env) -> std::path::PathBuf {
    let path = env.path("mcp.json");
    let doc = serde_json::json!({"mcpServers": {
        "example": {"command": example_server()},
        // FastMCP's warning that logging is deprecated would go to the terminal itself.
        "prog": {"command": python(), "args": [peer("py_progress_server.py")],
            "env": {"PYTHONWARNINGS": "ignore"}},
    }});
    std::fs::write(&path, doc.to_string()).expect("write config");
    path
}

/// Records a call of the example server's `slow` tool that takes about 1.2 s.
fn slow_tape(env: &Env) -> std::path::PathBuf {
    let config = config(env);
    let out = run(env
        .mcptape([
            "call",
            "example.slow",
            "steps=4",
            "ms=300",
            "--record",
            "slow",
        ])
        .arg("--config")
        .arg(&config));
    assert!(out.status.success(), "{}", text(&out));
    env.tape("slow")
}

fn verify_slow(env: &Env, tape: &std::path::Path) -> Command {
    let mut cmd = env.mcptape(["verify"]);
    cmd.arg(tape)
        .args(["--allow-writes", "--"])
        .arg(example_server());
    cmd
}

#[test]
fn verify_on_a_terminal_shows_its_requests_done_then_clears_the_bar_before_the_report() {
    let env = Env::new();
    let tape = slow_tape(&env);
    let out = on_pty(&env, &verify_slow(&env, &tape));
    let screen = screen(&out);
    assert!(out.status.success(), "{screen}");
    // The tape's three requests are initialize, tools/list and the slow tools/call: while
    // the call runs (1.2 s, so it is drawn) the bar stands at 2/3, initialize and the
    // listing ticked. 3/3 comes as the call ends, right before the bar is cleared, and
    // whether it is drawn in between depends on the redraw rate: not asserted.
    assert!(
        screen.contains("verify `example` [")
            && screen.contains("2/3 requests (connection 1 of 1)"),
        "no bar: {screen:?}"
    );
    // After the last clear of the bar comes the report, and no bar again.
    let after = &screen[screen.rfind(CLEAR).expect("the bar is cleared") + CLEAR.len()..];
    assert!(after.starts_with("verify `"), "{after:?}");
    assert!(
        after.contains("2 same") && after.contains("0 changed"),
        "{after:?}"
    );
    assert!(!after.contains("requests"), "{after:?}");
}

#[test]
fn verify_into_a_pipe_writes_exactly_what_it_wrote_before_bars() {
    let env = Env::new();
    let tape = slow_tape(&env);
    let out = run(verify_slow(&env, &tape));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(stderr(&out), "");
    assert!(
        String::from_utf8_lossy(&out.stdout).ends_with(": 2 same, 0 changed\n"),
        "{}",
        text(&out)
    );
}

#[test]
fn mcptape_progress_0_turns_the_bar_off_on_a_terminal() {
    let env = Env::new();
    let tape = slow_tape(&env);
    let mut cmd = verify_slow(&env, &tape);
    cmd.env("MCPTAPE_PROGRESS", "0");
    let out = on_pty(&env, &cmd);
    let screen = screen(&out);
    assert!(out.status.success(), "{screen}");
    assert!(!screen.contains("requests"), "{screen:?}");
    assert!(!screen.contains(CLEAR), "{screen:?}");
}

/// `mcptape call prog.steps` with a message holding escape codes, 3 steps of `seconds`.
fn call_steps(env: &Env, seconds: &str) -> Command {
    let config = config(env);
    let mut cmd = env.mcptape(["call", "prog.steps", "n=3"]);
    cmd.arg(format!("seconds={seconds}"))
        .arg("message=step \u{1b}[31mred\u{1b}]0;pwned\u{7}")
        .arg("--config")
        .arg(&config);
    cmd
}

#[test]
fn call_on_a_terminal_draws_the_servers_progress_as_a_bar_its_message_escaped() {
    let env = Env::new();
    let out = on_pty(&env, &call_steps(&env, "0.4"));
    let screen = screen(&out);
    assert!(out.status.success(), "{screen}");
    assert!(
        screen.contains("tools/call `prog.steps` ["),
        "no bar: {screen:?}"
    );
    assert!(
        screen.contains("2.0/3.0 step \\x1b[31mred\\x1b]0;pwned\\x07"),
        "the message, escaped, in the bar: {screen:?}"
    );
    assert!(!screen.contains("\u{1b}[31m"), "a raw escape: {screen:?}");
    assert!(!screen.contains("\u{1b}]0;"), "a raw escape: {screen:?}");
    // The bar replaces the lines of a pipe, and is gone before the result.
    assert!(!screen.contains("mcptape: `prog` progress"), "{screen:?}");
    let after = &screen[screen.rfind(CLEAR).expect("the bar is cleared") + CLEAR.len()..];
    assert!(after.starts_with("done after 3 steps\r\n"), "{after:?}");
}

#[test]
fn a_log_line_during_a_bar_is_printed_on_a_line_of_its_own_with_the_bar_cleared_first() {
    let env = Env::new();
    let mut cmd = call_steps(&env, "0.4");
    cmd.arg("log=true");
    let out = on_pty(&env, &cmd);
    let screen = screen(&out);
    assert!(out.status.success(), "{screen}");
    assert!(
        screen.contains("tools/call `prog.steps` ["),
        "no bar: {screen:?}"
    );
    for n in 1..=3 {
        let log = format!("mcptape: `prog` log [info] {{\"msg\":\"log {n}\",\"extra\":null}}\r\n");
        let at = screen
            .find(&log)
            .unwrap_or_else(|| panic!("no {log:?}: {screen:?}"));
        // The bar was cleared just before (or not drawn yet, for an early line).
        let before = &screen[..at];
        assert!(
            before.is_empty() || before.ends_with(CLEAR) || before.ends_with("\r\n"),
            "{log:?} after {:?}",
            &before[before.len().saturating_sub(120)..]
        );
    }
}

#[test]
fn work_done_within_a_moment_draws_no_bar_on_a_terminal() {
    let env = Env::new();
    let config = config(&env);
    let mut cmd = env.mcptape(["call", "example.slow", "steps=2", "ms=10", "--config"]);
    cmd.arg(&config);
    let out = on_pty(&env, &cmd);
    let screen = screen(&out);
    assert!(out.status.success(), "{screen}");
    assert_eq!(screen, "done after 2 steps\r\n");
}

#[test]
fn call_into_a_pipe_prints_the_servers_progress_one_line_each_as_before() {
    let env = Env::new();
    let out = run(call_steps(&env, "0.4"));
    assert!(out.status.success(), "{}", text(&out));
    let line =
        |n: u32| format!("mcptape: `prog` progress {n}.0/3 step \\x1b[31mred\\x1b]0;pwned\\x07\n");
    assert_eq!(stderr(&out), format!("{}{}{}", line(1), line(2), line(3)));
}

/// A tape of `n` server notifications of one connection, `pad` characters of text each.
fn big_tape(env: &Env, n: usize, pad: usize) -> std::path::PathBuf {
    let line = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/message",
        "params": {"data": "word ".repeat(pad / 5)},
        "_meta": {"dir": "recv", "server": "s", "ts": "2026-11-30T04:35:01.266Z", "conn": "c1"}})
    .to_string();
    let path = env.path("big.ndjson");
    std::fs::write(&path, format!("{line}\n").repeat(n)).expect("write the tape");
    path
}

#[test]
fn redact_check_of_a_big_tape_on_a_terminal_shows_the_bytes_checked() {
    let env = Env::new();
    // About 8 MiB of long lines: seconds of work in a debug build.
    let tape = big_tape(&env, 7_000, 1_000);
    let mut cmd = env.mcptape(["redact", "--check"]);
    cmd.arg(&tape);
    let out = on_pty(&env, &cmd);
    let screen = screen(&out);
    assert!(out.status.success(), "{screen}");
    assert!(
        screen.contains("check `big.ndjson` [") && screen.contains(" MiB/7."),
        "no bar: {screen:?}"
    );
    let after = &screen[screen.rfind(CLEAR).expect("the bar is cleared") + CLEAR.len()..];
    assert!(after.starts_with("mcptape: nothing in `"), "{after:?}");
}

#[test]
fn redact_of_a_big_tape_on_a_terminal_shows_the_bytes_rewritten() {
    let env = Env::new();
    let tape = big_tape(&env, 7_000, 1_000);
    let before = std::fs::read(&tape).expect("read");
    let mut cmd = env.mcptape(["redact"]);
    cmd.arg(&tape);
    let out = on_pty(&env, &cmd);
    let screen = screen(&out);
    assert!(out.status.success(), "{screen}");
    assert!(
        screen.contains("redact `big.ndjson` ["),
        "no bar: {screen:?}"
    );
    assert_eq!(
        std::fs::read(&tape).expect("read"),
        before,
        "nothing to redact"
    );
}

#[test]
fn loading_a_big_tape_on_a_terminal_shows_the_bytes_read_and_parsed() {
    let env = Env::new();
    // 150,000 short lines (about 19 MiB): parsing them takes a while in a debug build.
    let tape = big_tape(&env, 150_000, 0);
    // `verify` and `show` load a tape the same way (`Tape::load_warning`).
    let mut cmd = env.mcptape(["verify"]);
    cmd.arg(&tape).arg("--").arg(example_server());
    let out = on_pty(&env, &cmd);
    let screen = screen(&out);
    assert!(out.status.success(), "{screen}");
    assert!(
        screen.contains("loading `big.ndjson` ["),
        "no bar: {screen:?}"
    );
    assert!(screen.contains(" MiB/21.74 MiB parsing"), "{screen:?}");
    // A connection with no request to play draws no bar of requests.
    assert!(!screen.contains("requests"), "{screen:?}");
    let after = &screen[screen.rfind(CLEAR).expect("the bar is cleared") + CLEAR.len()..];
    assert!(after.starts_with("verify `"), "{after:?}");
}
