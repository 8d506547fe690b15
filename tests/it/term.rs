//! Text for people never carries what a terminal obeys: a tape or a server full of ESC
//! sequences, C1 controls, bidi overrides and forged lines, through `show`, `list`,
//! replay verdicts, `verify`, `call` and the error printer.

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use crate::support::*;

/// Sets the window title, clears the screen, starts a C1 CSI, reverses the text that
/// follows, and forges a line of its own that ends in a carriage return.
const HOSTILE: &str = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m\u{202e}desrever\n  ok forged\r";

/// Fails when `bytes` hold a character a terminal obeys (other than `\n`), or a line
/// that a value forged.
fn assert_clean(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    for (i, c) in text.char_indices() {
        let bad = (c < ' ' && c != '\n')
            || ('\u{7f}'..='\u{9f}').contains(&c)
            || matches!(c, '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}');
        assert!(!bad, "{what}: a raw {c:?} at byte {i}:\n{text}");
    }
    assert!(
        !text
            .lines()
            .any(|l| l.trim_start().starts_with("ok forged")),
        "{what}: a line forged by a value:\n{text}"
    );
}

/// Like [`assert_clean`] for both streams, and the escapes of `HOSTILE` visible in one.
fn assert_escaped(what: &str, out: &Output, escapes: &[&str]) {
    assert_clean(&format!("{what} stdout"), &out.stdout);
    assert_clean(&format!("{what} stderr"), &out.stderr);
    let both = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    for e in escapes {
        assert!(both.contains(e), "{what}: no `{e}` in\n{}", text(out));
    }
}

/// The escapes [`crate::term::line`]-style text shows for `HOSTILE`'s characters.
const TEXT_ESCAPES: [&str; 2] = ["\\u{9b}31m", "\\u{202e}desrever"];
/// The escapes the JSON we print shows for them.
const JSON_ESCAPES: [&str; 3] = ["\\u001b]0;pwned\\u0007", "\\u009b31m", "\\u202edesrever"];

/// Writes a tape of one connection of `server`: each `(dir, message)` with its `_meta`.
fn write_tape(path: &Path, server: &str, entries: &[(&str, Value)]) {
    std::fs::create_dir_all(path.parent().expect("dir")).expect("mkdir");
    let text: String = entries
        .iter()
        .enumerate()
        .map(|(i, (dir, msg))| {
            let mut msg = msg.clone();
            msg["_meta"] = json!({"dir": dir, "server": server,
                "ts": format!("2026-12-01T09:00:00.{i:03}Z"), "conn": "c-1"});
            // serde_json writes C1 and bidi raw, as a careless recorder would.
            format!("{msg}\n")
        })
        .collect();
    std::fs::write(path, text).expect("write tape");
}

/// A handshake, then `tools/call echo {message: HOSTILE}` answered `answer`.
fn echo_tape(path: &Path, server: &str, answer: &str) {
    write_tape(
        path,
        server,
        &[
            (
                "lifecycle",
                json!({"jsonrpc": "2.0", "method": "$transport/start", "params": {"command": [HOSTILE]}}),
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
                "capabilities": {"tools": {}}, "serverInfo": {"name": HOSTILE, "version": "1"}}}),
            ),
            (
                "send",
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            ),
            (
                "send",
                json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"message": HOSTILE}}}),
            ),
            (
                "recv",
                json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": answer}]}}),
            ),
        ],
    );
}

#[test]
fn show_and_list_escape_a_hostile_tape() {
    let env = Env::new();
    let server = format!("evil{HOSTILE}");
    let tape = env
        .mcptape_home()
        .join("recordings")
        .join("evil\u{1b}[2J.ndjson");
    write_tape(
        &tape,
        &server,
        &[
            (
                "send",
                json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": HOSTILE, "arguments": {"x": HOSTILE}}}),
            ),
            (
                "recv",
                json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": HOSTILE}}),
            ),
            (
                "recv",
                json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": HOSTILE}]}}),
            ),
            (
                "lifecycle",
                json!({"jsonrpc": "2.0", "method": "$transport/invalid", "params": {"text": HOSTILE}}),
            ),
        ],
    );
    let path = tape.to_string_lossy().into_owned();
    for args in [vec!["show", &path], vec!["show", "--full", &path]] {
        let out = run(env.mcptape(&args).env("COLUMNS", "400"));
        assert!(out.status.success(), "{}", text(&out));
        assert_escaped(&args.join(" "), &out, &TEXT_ESCAPES);
        assert_escaped(
            &args.join(" "),
            &out,
            &[
                "\\x1b]0;pwned\\x07\\x1b[2J",
                "evil\\x1b[2J.ndjson",
                "\\n  ok forged\\r",
            ],
        );
    }
    let out = run(&mut env.mcptape(["show", "--json", &path]));
    assert!(out.status.success(), "{}", text(&out));
    assert_escaped("show --json", &out, &JSON_ESCAPES);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("show --json is JSON");
    assert_eq!(doc["connections"][0]["server"], server.as_str());
    assert_eq!(
        doc["connections"][0]["entries"][1]["message"]["error"]["message"],
        HOSTILE
    );

    let out = run(&mut env.mcptape(["list"]));
    assert!(out.status.success(), "{}", text(&out));
    assert_escaped(
        "list",
        &out,
        &["evil\\x1b[2J", "evil\\x1b]0;pwned", "\\n  ok"],
    );
    let out = run(&mut env.mcptape(["list", "--json"]));
    assert!(out.status.success(), "{}", text(&out));
    assert_escaped("list --json", &out, &JSON_ESCAPES);
    let rows: Value = serde_json::from_slice(&out.stdout).expect("list --json is JSON");
    assert_eq!(rows[0]["servers"][0], server.as_str());
}

#[test]
fn a_diverging_replay_escapes_its_verdict_and_the_error_quoting_the_tape() {
    let env = Env::new();
    echo_tape(&env.tape("s"), "evil", HOSTILE);
    let out = run(env.mcptape(["replay", "s", "--"]).arg(bin()).args([
        "call",
        "evil.echo",
        "message:something else",
    ]));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("DIVERGED"), "{}", text(&out));
    assert!(
        err.contains("error: server `evil` answered tools/call echo with error"),
        "{}",
        text(&out)
    );
    assert_escaped("replay verdict", &out, &TEXT_ESCAPES);
}

#[test]
fn verify_escapes_its_text_and_json_reports() {
    let env = Env::new();
    echo_tape(
        &env.tape("s"),
        "example",
        &format!("Echo: old\u{85}{HOSTILE}"),
    );
    let verify = |format: &str| {
        run(env
            .mcptape(["verify", "s", "--allow-writes", "--format", format, "--"])
            .arg(example_server()))
    };
    let out = verify("text");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_escaped("verify text", &out, &TEXT_ESCAPES);
    assert_escaped("verify text", &out, &["\\u{85}"]);
    let out = verify("json");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_escaped(
        "verify json",
        &out,
        &["\\u009b31m", "\\u202edesrever", "\\u0085"],
    );
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        serde_json::from_str::<Value>(line).expect("each verify --format json line is JSON");
    }
    let out = verify("junit");
    assert_clean("verify junit", &out.stdout);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("&#x9b;31m"),
        "{}",
        text(&out)
    );
}

/// A config with the example server, and a server whose name is hostile.
fn config(env: &Env) -> String {
    let path = env.path("mcp.json");
    let text = json!({"mcpServers": {
        "example": {"command": example_server()},
        format!("evil{HOSTILE}"): {"command": "true"},
    }});
    std::fs::write(&path, text.to_string()).expect("write config");
    path.to_string_lossy().into_owned()
}

#[test]
fn call_text_output_escapes_controls_and_keeps_newlines() {
    let env = Env::new();
    let config = config(&env);
    let message = format!("message:{HOSTILE}");
    let out = run(&mut env.mcptape(["call", "--config", &config, "example.echo", &message]));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Echo: \\x1b]0;pwned\\x07\\x1b[2J\\u{9b}31m\\u{202e}desrever\n  ok forged\\r\n"
    );
    assert_clean("call stderr", &out.stderr);
    let out = run(&mut env.mcptape([
        "call",
        "--config",
        &config,
        "--output",
        "json",
        "example.echo",
        &message,
    ]));
    assert!(out.status.success(), "{}", text(&out));
    assert_escaped("call --output json", &out, &JSON_ESCAPES);
    let result: Value = serde_json::from_slice(&out.stdout).expect("call --output json");
    assert_eq!(
        result["content"][0]["text"],
        format!("Echo: {HOSTILE}").as_str()
    );
}

#[test]
fn the_error_printer_escapes_what_it_quotes() {
    let env = Env::new();
    let config = config(&env);
    let out = run(&mut env.mcptape(["call", "--config", &config, "nosuch.tool"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).starts_with("error: "),
        "{}",
        text(&out)
    );
    assert_escaped("config error", &out, &TEXT_ESCAPES);
    assert_escaped("config error", &out, &["evil\\x1b]0;pwned\\x07"]);
}

#[test]
fn tools_and_the_notifications_shown_meanwhile_are_escaped() {
    let env = Env::new();
    let tape = env.tape("t");
    let tool = json!({"name": format!("evil{HOSTILE}"), "description": HOSTILE,
        "inputSchema": {"type": "object", "properties": {HOSTILE: {"type": "string", "description": HOSTILE}}}});
    write_tape(
        &tape,
        "evil",
        &[
            (
                "send",
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}),
            ),
            (
                "recv",
                json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}}, "serverInfo": {"name": "evil", "version": "1"}}}),
            ),
            (
                "send",
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            ),
            (
                "send",
                json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}),
            ),
            (
                "recv",
                json!({"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": HOSTILE, "data": HOSTILE}}),
            ),
            (
                "recv",
                json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [tool]}}),
            ),
        ],
    );
    let path = tape.to_string_lossy().into_owned();
    let out = run(&mut env.mcptape(["tools", "evil", "--replay", &path]));
    assert!(out.status.success(), "{}", text(&out));
    assert_escaped("tools", &out, &TEXT_ESCAPES);
    assert_escaped(
        "tools",
        &out,
        &["evil\\x1b]0;pwned\\x07", "log [\\x1b]0;pwned"],
    );
    let out = run(&mut env.mcptape(["tools", "evil", "--json", "--replay", &path]));
    assert!(out.status.success(), "{}", text(&out));
    assert_escaped("tools --json", &out, &JSON_ESCAPES);
    let tools: Value = serde_json::from_slice(&out.stdout).expect("tools --json is JSON");
    assert_eq!(tools[0]["description"], HOSTILE);
}

#[test]
fn a_hostile_tape_path_is_escaped_in_every_message_and_export_line() {
    let env = Env::new();
    let dir = env.path("d\u{1b}]0;X\u{7}\u{9b}");
    std::fs::create_dir_all(&dir).expect("dir");
    let tape = dir.join("a.ndjson");
    let tape = tape.to_str().expect("utf8");
    // The export lines of `record` without a command.
    let out = run(env.mcptape(["record", tape]));
    assert!(out.status.success(), "{}", text(&out));
    assert_clean("record's export lines", &out.stdout);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(r"$'"),
        "{}",
        text(&out)
    );
    // A proxy recording there, then replaying from there.
    for mode in ["--record", "--replay"] {
        let mut cmd = env.mcptape([
            "proxy",
            mode,
            tape,
            "--server",
            "ex",
            "--",
            &example_server(),
        ]);
        cmd.stdin(std::process::Stdio::null());
        let out = run(cmd);
        assert_clean(&format!("proxy {mode}'s messages"), &out.stderr);
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(r"\x1b"),
            "{}",
            text(&out)
        );
    }
}
