//! `mcptape scan`: the sessions agents kept in a temp HOME, with MCP calls per server and
//! read-only counts from a tape that recorded the server's `tools/list`; `--json`;
//! `--import`; a bad transcript named, the rest listed, nothing imported.

use serde_json::Value;

use crate::import_codex::{agent_cmd, keep_rollouts};
use crate::support::*;

const EXAMPLE: &str = "rollout-2025-11-20T10-15-30-0199a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b.jsonl";
const DOCS: &str = "rollout-2025-11-21T08-00-00-0199a1c4-1111-7222-8333-944455566677.jsonl";

/// Records the example server's `tools/list` (with its readOnlyHint annotations) into
/// the tape `ex`, through `mcptape tools` under `mcptape record`.
fn record_example_tools(env: &Env) {
    let config = env.path("mcp.json");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {"example": {"command": example_server()}}}).to_string(),
    )
    .expect("config");
    let mut cmd = env.mcptape(["record", "ex", "--"]);
    cmd.arg(bin())
        .args(["tools", "example", "--config"])
        .arg(&config);
    let out = run(cmd);
    assert!(out.status.success(), "{}", text(&out));
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

    record_example_tools(&env);
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
    assert!(stdout(&out).contains("→ "), "{}", text(&out));
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
