//! Colour: `--color always|never|auto`, `NO_COLOR`, `CLICOLOR_FORCE`, `CLICOLOR=0`, a
//! real terminal (a pty), and escaping that still holds with colour on.

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use crate::support::*;

const RED_BOLD: &str = "\u{1b}[1m\u{1b}[31m";
const GREEN: &str = "\u{1b}[32m";
const YELLOW: &str = "\u{1b}[33m";
const RESET: &str = "\u{1b}[0m";

/// A tape of one connection of `example`: the handshake, then `tools/call echo
/// {message: "hi"}` answered `answer`.
pub(crate) fn echo_tape(path: &Path, answer: &str) {
    let entries = [
        (
            "lifecycle",
            json!({"jsonrpc": "2.0", "method": "$transport/start", "params": {"command": ["x"]}}),
        ),
        (
            "send",
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        ),
        (
            "recv",
            json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}}, "serverInfo": {"name": "e", "version": "1"}}}),
        ),
        (
            "send",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ),
        (
            "send",
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"message": "hi"}}}),
        ),
        (
            "recv",
            json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": answer}]}}),
        ),
    ];
    let text: String = entries
        .iter()
        .enumerate()
        .map(|(i, (dir, msg))| {
            let mut msg: Value = msg.clone();
            msg["_meta"] = json!({"dir": dir, "server": "example",
                "ts": format!("2026-12-01T09:00:00.{i:03}Z"), "conn": "c-1"});
            format!("{msg}\n")
        })
        .collect();
    std::fs::create_dir_all(path.parent().expect("dir")).expect("mkdir");
    std::fs::write(path, text).expect("write tape");
}

/// What a terminal would obey in `bytes` once the SGR colour codes are taken out: none.
fn assert_only_sgr(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    let sgr = regex::Regex::new("\u{1b}\\[[0-9;]*m").expect("regex");
    let rest = sgr.replace_all(&text, "");
    assert!(
        !rest
            .chars()
            .any(|c| (c < ' ' && c != '\n') || ('\u{7f}'..='\u{9f}').contains(&c)),
        "{what}: a control that is not a colour:\n{text:?}"
    );
}

fn has_esc(out: &Output) -> bool {
    out.stdout.contains(&0x1b) || out.stderr.contains(&0x1b)
}

/// `replay` of the echo tape with a client that sends another message: a divergence.
fn diverge(env: &Env, session: &str, flags: &[&str]) -> std::process::Command {
    let mut cmd = env.mcptape(["replay", session]);
    cmd.args(flags)
        .arg("--")
        .arg(bin())
        .args(["call", "example.echo", "message:something else"]);
    cmd
}

#[test]
fn forced_colour_paints_the_verdict_and_its_diff_and_still_escapes_the_tape() {
    let env = Env::new();
    // The recorded request is what the client diverges from; its tape text holds an ESC.
    echo_tape(&env.tape("s"), "old");
    let tape = std::fs::read_to_string(env.tape("s")).expect("tape");
    std::fs::write(
        env.tape("s"),
        tape.replace("\"message\":\"hi\"", "\"message\":\"hi\\u001b[2J\""),
    )
    .expect("rewrite");
    let forced = [
        run(&mut diverge(&env, "s", &["--color", "always"])),
        run(diverge(&env, "s", &[]).env("CLICOLOR_FORCE", "1")),
    ];
    for out in &forced {
        assert_eq!(out.status.code(), Some(3), "{}", text(out));
        let err = stderr(out);
        assert!(
            err.contains(&format!(
                "mcptape: {RED_BOLD}DIVERGED{RESET} server `example`"
            )),
            "{err:?}"
        );
        // The diff: the recorded line removed (red), the client's added (green).
        assert!(err.contains("  \u{1b}[31m-"), "{err:?}");
        assert!(err.contains(&format!("  {GREEN}+")), "{err:?}");
        // The tape's ESC is shown escaped; only our colour codes are raw.
        assert!(err.contains(r#"{"message":"hi\u001b[2J"}"#), "{err:?}");
        assert_only_sgr("replay stderr", &out.stderr);
    }
}

#[test]
fn no_color_never_and_a_pipe_show_no_colour() {
    let env = Env::new();
    echo_tape(&env.tape("s"), "old");
    let outs = [
        run(&mut diverge(&env, "s", &[])),
        run(diverge(&env, "s", &[]).env("NO_COLOR", "1")),
        run(diverge(&env, "s", &[])
            .env("NO_COLOR", "1")
            .env("CLICOLOR_FORCE", "1")),
        run(diverge(&env, "s", &["--color=never"]).env("CLICOLOR_FORCE", "1")),
        run(diverge(&env, "s", &[]).env("CLICOLOR", "0")),
    ];
    for out in &outs {
        assert_eq!(out.status.code(), Some(3), "{}", text(out));
        assert!(
            stderr(out).contains("mcptape: DIVERGED server `example`"),
            "{}",
            text(out)
        );
        assert!(!has_esc(out), "{}", text(out));
    }
    // The flag beats NO_COLOR.
    let out = run(diverge(&env, "s", &["--color", "always"]).env("NO_COLOR", "1"));
    assert!(stderr(&out).contains(RED_BOLD), "{}", text(&out));
}

#[test]
fn ok_is_green_and_unused_yellow() {
    let env = Env::new();
    echo_tape(&env.tape("s"), "Echo: hi");
    let out = run(env
        .mcptape(["replay", "s", "--color", "always", "--"])
        .arg(bin())
        .args(["call", "example.echo", "message:hi"]));
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stderr(&out).contains(&format!("mcptape: {GREEN}ok{RESET}       server `example`")),
        "{:?}",
        stderr(&out)
    );
    let out = run(&mut env.mcptape(["--color", "always", "replay", "s", "--", "true"]));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(
        stderr(&out).contains(&format!(
            "mcptape: {YELLOW}UNUSED{RESET}   server `example` connection `c-1`"
        )),
        "{:?}",
        stderr(&out)
    );
}

#[test]
fn verify_colours_its_classes_and_values_and_json_never() {
    let env = Env::new();
    echo_tape(&env.tape("s"), "old \u{1b}[2J");
    let verify = |args: &[&str]| {
        run(env
            .mcptape(["verify", "s", "--allow-writes"])
            .args(args)
            .arg("--")
            .arg(example_server()))
    };
    let out = verify(&["--color", "always"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains(&format!("{RED_BOLD}1 changed{RESET}")),
        "{report:?}"
    );
    assert!(
        report.contains(&format!(
            "\n{RED_BOLD}changed{RESET}    tools/call echo (tape line 5)"
        )),
        "{report:?}"
    );
    assert!(
        report.contains(&format!("{GREEN}\"Echo: hi\"{RESET}")),
        "{report:?}"
    );
    assert_only_sgr("verify text", &out.stdout);
    for format in ["json", "junit", "github"] {
        let out = verify(&["--color", "always", "--format", format]);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        assert!(!out.stdout.contains(&0x1b), "{format}: {}", text(&out));
    }
    let out = verify(&[]);
    assert!(!has_esc(&out), "{}", text(&out));
}

#[test]
fn show_colours_directions_when_forced() {
    let env = Env::new();
    echo_tape(&env.tape("s"), "old");
    let out = run(&mut env.mcptape(["show", "s", "--color", "always"]));
    assert!(out.status.success(), "{}", text(&out));
    let trace = String::from_utf8_lossy(&out.stdout);
    assert!(
        trace.contains("\u{1b}[36m→\u{1b}[0m initialize #0"),
        "{trace:?}"
    );
    assert!(trace.contains("\u{1b}[35m←\u{1b}[0m #1 ok"), "{trace:?}");
    assert!(trace.contains("\u{1b}[2m   +0.000s  · start"), "{trace:?}");
    let plain = run(&mut env.mcptape(["show", "s"]));
    assert!(!has_esc(&plain), "{}", text(&plain));
    // Without the codes, the coloured trace is the plain one.
    let sgr = regex::Regex::new("\u{1b}\\[[0-9;]*m").expect("regex");
    assert_eq!(
        sgr.replace_all(&trace, ""),
        String::from_utf8_lossy(&plain.stdout)
    );
}

#[test]
fn clap_help_and_errors_follow_the_flag() {
    let env = Env::new();
    let out = run(&mut env.mcptape(["--color", "always", "--help"]));
    assert!(out.status.success(), "{}", text(&out));
    assert!(out.stdout.contains(&0x1b), "{}", text(&out));
    let out = run(&mut env.mcptape(["--help"]));
    assert!(!has_esc(&out), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("--color <WHEN>"));
    // A global flag: every subcommand takes it, before or after its arguments.
    let out = run(&mut env.mcptape(["show", "--help", "--color", "always"]));
    assert!(out.stdout.contains(&0x1b), "{}", text(&out));
    let out = run(&mut env.mcptape(["show", "--bogus", "--color=always"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(out.stderr.contains(&0x1b), "{}", text(&out));
    let out = run(&mut env.mcptape(["show", "--bogus"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(!has_esc(&out), "{}", text(&out));
}

/// Runs `mcptape ARGS` with stderr (and with `both`, stdout too) on a real pty, from
/// python's `pty` module; prints what the pty showed on stderr and the pipe on stdout.
fn on_a_pty(env: &Env, both: bool, args: &[&str], var: Option<(&str, &str)>) -> Output {
    const SCRIPT: &str = r#"
import os, pty, subprocess, sys
both = sys.argv[1] == "both"
master, slave = pty.openpty()
p = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL,
                     stdout=slave if both else subprocess.PIPE, stderr=slave)
os.close(slave)
piped = b"" if both else p.stdout.read()
shown = b""
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:
        break
    if not chunk:
        break
    shown += chunk
p.wait()
sys.stdout.buffer.write(piped)
sys.stderr.buffer.write(shown)
sys.exit(p.returncode)
"#;
    let mut cmd = env.cmd(python());
    cmd.args(["-c", SCRIPT, if both { "both" } else { "stderr" }])
        .arg(bin())
        .args(args)
        .env("TERM", "xterm");
    if let Some((k, v)) = var {
        cmd.env(k, v);
    }
    run(&mut cmd)
}

#[test]
fn auto_colours_a_real_terminal_and_decides_each_stream_apart() {
    let env = Env::new();
    echo_tape(&env.tape("s"), "old");
    // stdout and stderr on the terminal: the trace is coloured.
    let out = on_a_pty(&env, true, &["show", "s"], None);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stderr(&out).contains("\u{1b}[36m→\u{1b}[0m initialize"),
        "{:?}",
        stderr(&out)
    );
    // stdout piped, stderr on the terminal: the trace is plain, the verdict coloured.
    let out = on_a_pty(&env, false, &["show", "s"], None);
    assert!(out.status.success(), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("→ initialize"));
    assert!(!out.stdout.contains(&0x1b), "{}", text(&out));
    let out = on_a_pty(&env, false, &["replay", "s", "--", "true"], None);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(
        stderr(&out).contains(&format!("{YELLOW}UNUSED{RESET}")),
        "{:?}",
        stderr(&out)
    );
    // NO_COLOR, CLICOLOR=0 and TERM=dumb turn the terminal's colour off.
    for var in [("NO_COLOR", "1"), ("CLICOLOR", "0"), ("TERM", "dumb")] {
        let out = on_a_pty(&env, true, &["show", "s"], Some(var));
        assert!(out.status.success(), "{}", text(&out));
        assert!(
            stderr(&out).contains("→ initialize"),
            "{var:?}: {}",
            text(&out)
        );
        assert!(!has_esc(&out), "{var:?}: {}", text(&out));
    }
    // And --color never, whatever the terminal.
    let out = on_a_pty(&env, true, &["show", "s", "--color", "never"], None);
    assert!(!has_esc(&out), "{}", text(&out));
}

#[test]
fn escaping_holds_with_colour_on() {
    let env = Env::new();
    // A server name with a raw ESC and C1 once the tape is read (`\u001b` in its JSON).
    echo_tape(&env.tape("s"), "old");
    let tape = std::fs::read_to_string(env.tape("s")).expect("tape");
    std::fs::write(
        env.tape("s"),
        tape.replace(
            r#""server":"example""#,
            r#""server":"evil\u001b[2J\u009b31m""#,
        ),
    )
    .expect("rewrite");
    let out = run(&mut env.mcptape(["show", "s", "--color", "always"]));
    assert!(out.status.success(), "{}", text(&out));
    let trace = String::from_utf8_lossy(&out.stdout);
    assert!(
        trace.contains("\u{1b}[1m── evil\\x1b[2J\\u{9b}31m · conn c-1"),
        "{trace:?}"
    );
    assert_only_sgr("show", &out.stdout);
    let out = run(&mut env.mcptape(["replay", "s", "--color", "always", "--", "true"]));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(
        stderr(&out).contains(&format!(
            "{YELLOW}UNUSED{RESET}   server `evil\\x1b[2J\\u{{9b}}31m` connection `c-1`"
        )),
        "{:?}",
        stderr(&out)
    );
    assert_only_sgr("replay", &out.stderr);
}

#[test]
fn a_proxy_or_call_replaying_on_its_own_colours_its_verdict() {
    let env = Env::new();
    echo_tape(&env.tape("s"), "old");
    let call = |flags: &[&str]| {
        run(env
            .mcptape(["call", "example.echo", "message:other", "--replay", "s"])
            .args(flags))
    };
    let out = call(&["--color", "always"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(
        stderr(&out).contains(&format!(
            "mcptape: {RED_BOLD}DIVERGED{RESET} server `example`"
        )),
        "{:?}",
        stderr(&out)
    );
    let out = call(&[]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(stderr(&out).contains("mcptape: DIVERGED server `example`"));
    assert!(!has_esc(&out), "{}", text(&out));
}
