//! `mcptape scan`: the sessions agents kept in a temp HOME, with MCP calls per server and
//! read-only counts from a tape that recorded the server's `tools/list`; `--json`;
//! `--import`; a bad transcript named, the rest listed, nothing imported.

use serde_json::Value;

use crate::import_codex::{agent_cmd, keep_rollouts};
use crate::support::*;

const EXAMPLE: &str = "rollout-2025-11-20T10-15-30-0199a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b.jsonl";
const DOCS: &str = "rollout-2025-11-21T08-00-00-0199a1c4-1111-7222-8333-944455566677.jsonl";

/// Records the example server's `tools/list` (with its readOnlyHint annotations), as the
/// server `name`, into the tape `tools-<name>`, through `mcptape tools` under `record`.
fn record_example_tools(env: &Env, name: &str) {
    let config = env.path("mcp.json");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {name: {"command": example_server()}}}).to_string(),
    )
    .expect("config");
    let mut cmd = env.mcptape(["record", &format!("tools-{name}"), "--"]);
    cmd.arg(bin())
        .args(["tools", name, "--config"])
        .arg(&config);
    let out = run(cmd);
    assert!(out.status.success(), "{}", text(&out));
}

/// Copies a vendored Claude Code session (transcript and the directory beside it) into
/// `$CLAUDE_CONFIG_DIR/projects/<escaped cwd>/`.
fn keep_claude_session(env: &Env, fixture: &str) {
    let from = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude-code")
        .join(fixture);
    copy_tree(&from, &env.path("claude-config/projects/-work-project"));
}

fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

#[test]
fn scan_counts_calls_per_server_and_read_only_ones_from_a_recorded_tools_list() {
    let env = Env::new();
    keep_rollouts(&env, &[EXAMPLE, DOCS]);
    let before = run(agent_cmd(&env, &["scan", "--agent", "codex"]));
    assert!(before.status.success(), "{}", text(&before));
    let table = stdout(&before);
    assert!(
        table.starts_with("AGENT  SESSION   DATE              CWD "),
        "{table}"
    );
    assert!(
        table.contains(
            "codex  0199a1b2  2025-11-20 10:15  /home/dev/shop         3  unknown    example 3\n"
        ),
        "{table}"
    );
    assert!(
        table.contains("5  unknown    docs 4, github 1\n"),
        "{table}"
    );
    assert!(
        table.contains("unknown where no tape in the recordings lists the tool"),
        "{table}"
    );

    record_example_tools(&env, "example");
    let after = run(agent_cmd(&env, &["scan", "--agent", "codex"]));
    assert!(after.status.success(), "{}", text(&after));
    // echo and greet are readOnlyHint: true, write_note false.
    assert!(
        stdout(&after).contains("3  2 of 3     example 3\n"),
        "{}",
        text(&after)
    );

    let json = run(agent_cmd(&env, &["scan", "--agent", "codex", "--json"]));
    assert!(json.status.success(), "{}", text(&json));
    let rows: Value = serde_json::from_slice(&json.stdout).expect("json");
    let first = &rows[0];
    assert_eq!(first["session"], "0199a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b");
    assert_eq!(first["started"], "2025-11-20T10:15:30.101Z");
    assert_eq!(first["cwd"], "/home/dev/shop");
    assert_eq!(first["mcp_calls"], 3);
    assert_eq!(first["other_tools"], 1);
    assert_eq!(first["tape"], "codex-0199a1b2");
    assert_eq!(
        first["servers"],
        serde_json::json!([{"server": "example", "calls": 3, "read_only": 2, "unknown": 0}])
    );
    assert_eq!(rows[1]["servers"][0]["read_only"], Value::Null);
    assert!(
        !env.tape("codex-0199a1b2").exists(),
        "scan alone writes nothing"
    );
}

#[test]
fn scan_import_writes_the_tapes_of_sessions_with_calls() {
    let env = Env::new();
    keep_rollouts(&env, &[EXAMPLE, DOCS]);
    let out = run(agent_cmd(&env, &["scan", "--agent", "codex", "--import"]));
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stdout(&out).contains("\ncodex-0199a1b2  3 calls: example 3  "),
        "{}",
        text(&out)
    );
    for tape in ["codex-0199a1b2", "codex-0199a1c4"] {
        let calls = tape_messages(&env.tape(tape), "send")
            .iter()
            .filter(|m| m.contains("\"tools/call\""))
            .count();
        assert!(calls >= 3, "{tape}: {calls}");
    }
}

#[test]
fn a_bad_transcript_is_named_the_rest_listed_and_nothing_imported() {
    let env = Env::new();
    keep_rollouts(&env, &[EXAMPLE]);
    let bad = crate::import_codex::codex_home(&env)
        .join("sessions/2025/11/20/rollout-2025-11-20T12-00-00-bad.jsonl");
    std::fs::write(&bad, "{\"type\":\"session_meta\",\"payload\":{\"id\":7}}\n").expect("write");
    let out = run(agent_cmd(&env, &["scan", "--agent", "codex", "--import"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "transcript `{}` line 1: session_meta: invalid type: integer `7`",
            bad.display()
        )),
        "{err}"
    );
    assert!(
        err.contains("1 transcript could not be read; nothing was imported"),
        "{err}"
    );
    assert!(stdout(&out).contains("example 3"), "{}", text(&out));
    assert!(!env.tape("codex-0199a1b2").exists(), "nothing imported");
}

#[test]
fn scan_with_no_sessions_says_so() {
    let env = Env::new();
    let out = run(agent_cmd(&env, &["scan", "--agent", "codex"]));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(stdout(&out), "no sessions found\n");
}

#[test]
fn scan_lists_claude_code_and_codex_sessions_with_read_only_counts_per_server() {
    let env = Env::new();
    keep_rollouts(&env, &[EXAMPLE]);
    keep_claude_session(&env, "structured-and-stored");
    // The Claude Code session's server `ex` is the example server.
    record_example_tools(&env, "ex");
    let out = run(agent_cmd(&env, &["scan", "--json"]));
    assert!(out.status.success(), "{}", text(&out));
    let rows: Value = serde_json::from_slice(&out.stdout).expect("json");
    let agents: Vec<&str> = rows
        .as_array()
        .expect("array")
        .iter()
        .map(|r| r["agent"].as_str().expect("agent"))
        .collect();
    assert_eq!(agents, ["claude-code", "codex"]);
    let claude = &rows[0];
    assert_eq!(claude["session"], "d212bf5d-9bcf-4cef-845f-9b9df0a8abab");
    assert_eq!(
        claude["servers"],
        serde_json::json!([
            {"server": "ex", "calls": 4, "read_only": 4, "unknown": 0},
            {"server": "every-thing", "calls": 2, "read_only": null, "unknown": 2},
        ])
    );
    assert_eq!(
        rows[1]["servers"][0]["unknown"], 3,
        "no tape lists the server `example`"
    );

    let only = run(agent_cmd(&env, &["scan", "--agent", "claude-code"]));
    assert!(only.status.success(), "{}", text(&only));
    let table = stdout(&only);
    assert!(table.contains("claude-code  d212bf5d  "), "{table}");
    assert!(
        table.contains("6  4 of 6 (2 unknown)  ex 4, every-thing 2\n"),
        "{table}"
    );
    assert!(!table.contains("codex "), "{table}");
}

#[test]
fn what_scan_prints_from_a_transcript_is_escaped() {
    let env = Env::new();
    let day = crate::import_codex::codex_home(&env).join("sessions/2025/11/20");
    std::fs::create_dir_all(&day).expect("mkdir");
    std::fs::write(
        day.join("rollout-2025-11-20T12-00-00-x.jsonl"),
        "{\"type\":\"session_meta\",\"payload\":{\"id\":\"s\\u001b]0;pwned\\u0007\",\"cwd\":\"/w\\u001b[2J\"}}\n{\"type\":\"event_msg\",\"payload\":{\"type\":\"mcp_tool_call_end\",\"call_id\":\"c\",\"invocation\":{\"server\":\"ev\\u001b[31mil\",\"tool\":\"t\"},\"result\":{\"Ok\":{\"content\":[]}}}}\n",
    )
    .expect("write");
    let out = run(agent_cmd(&env, &["scan", "--agent", "codex"]));
    assert!(out.status.success(), "{}", text(&out));
    let shown = stdout(&out);
    assert!(
        !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
        "{shown:?}"
    );
    assert!(shown.contains("codex  s"), "{shown}");
}
