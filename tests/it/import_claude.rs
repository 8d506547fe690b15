//! `mcptape import claude-code` of transcripts real Claude Code wrote: Claude Code runs
//! offline (the Messages API stand-in of `claude.rs` scripts its `tool_use` blocks) and
//! calls tools of the example server and server-everything, configured directly in
//! `$HOME/.claude.json` (no mcptape in between: the session is one mcptape never saw).
//! Its transcript is imported, then verified against the servers and replayed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::claude::{MessagesApi, claude};
use crate::support::*;

/// A fake key in the transcript's arguments: the tape must not hold it.
const SECRET: &str = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789";

/// Writes `$HOME/.claude.json` with `ex` (the example server) and `every-thing`
/// (server-everything), both run directly by Claude Code.
fn write_config(env: &Env) {
    let everything = everything_server();
    let config = json!({"mcpServers": {
        "ex": {"type": "stdio", "command": example_server(), "args": []},
        "every-thing": {"type": "stdio", "command": everything[0], "args": everything[1..]},
    }});
    let home = env.path("home");
    std::fs::create_dir_all(&home).expect("home");
    std::fs::write(home.join(".claude.json"), config.to_string()).expect("write config");
}

/// Every variable an agent path reads, inside the temp dir.
fn isolate(env: &Env, cmd: &mut Command) {
    for (k, _) in std::env::vars() {
        if k.starts_with("ANTHROPIC_") || k.starts_with("CLAUDE") || k == "CODEX_HOME" {
            cmd.env_remove(k);
        }
    }
    cmd.env("XDG_CONFIG_HOME", env.path("home/.config"))
        .env("APPDATA", env.path("home/appdata"))
        .env("CODEX_HOME", env.path("home/.codex"));
}

/// `claude -p PROMPT --allowedTools ALLOWED`, offline against `api`.
fn run_claude(env: &Env, api: &MessagesApi, allowed: &str) -> Output {
    let mut cmd = env.cmd(claude());
    isolate(env, &mut cmd);
    cmd.args(["-p", "Call the tools.", "--allowedTools", allowed])
        .env("ANTHROPIC_API_KEY", "dummy")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("ENABLE_TOOL_SEARCH", "false")
        .env("MCP_CONNECTION_NONBLOCKING", "0")
        .env("MCP_TIMEOUT", "60000")
        .env("MCP_TOOL_TIMEOUT", "60000")
        .env("ANTHROPIC_BASE_URL", &api.url);
    run(cmd)
}

/// `mcptape ARGS` with the agents' variables inside the temp dir.
fn mcptape(env: &Env, args: &[&str]) -> Output {
    let mut cmd = env.mcptape(args);
    isolate(env, &mut cmd);
    run(cmd)
}

/// The transcripts Claude Code wrote under the temp HOME.
fn transcripts(env: &Env) -> Vec<PathBuf> {
    let projects = env.path("home/.claude/projects");
    let mut out = Vec::new();
    for project in std::fs::read_dir(&projects).expect("projects").flatten() {
        for f in std::fs::read_dir(project.path())
            .expect("project")
            .flatten()
        {
            if f.path().extension().is_some_and(|x| x == "jsonl") {
                out.push(f.path());
            }
        }
    }
    out
}

/// The tape `import` says it wrote (the last word of its one stdout line).
fn imported_tape(out: &Output) -> PathBuf {
    let text = stdout(out);
    let line = text
        .lines()
        .next()
        .unwrap_or_else(|| panic!("{}", self::text(out)));
    PathBuf::from(line.split_whitespace().last().expect("a path"))
}

fn steps() -> Value {
    json!([
        {"tool_use": {"name": "mcp__ex__echo", "input": {"message": "hello from claude"}}},
        {"tool_use": {"name": "mcp__ex__fail", "input": {}}},
        {"tool_use": {"name": "mcp__ex__greet", "input": {"name": "Ann"}}},
        {"tool_use": {"name": "mcp__every-thing__echo",
                      "input": {"message": "second server", "apiKey": SECRET}}},
        {"text": "All done."}
    ])
}

const ALLOWED: &str = "mcp__ex__echo,mcp__ex__fail,mcp__ex__greet,mcp__every-thing__echo";

#[test]
fn a_real_claude_code_session_imports_verifies_and_replays() {
    let env = Env::new();
    write_config(&env);
    let api = MessagesApi::start(&env, "import", &steps());
    let ran = run_claude(&env, &api, ALLOWED);
    assert!(ran.status.success(), "{}", text(&ran));
    assert!(stdout(&ran).contains("All done."), "{}", text(&ran));
    assert_eq!(transcripts(&env).len(), 1, "one session");

    // Without PATH: the sessions in ~/.claude/projects.
    let imported = mcptape(&env, &["import", "claude-code"]);
    assert!(imported.status.success(), "{}", text(&imported));
    assert!(
        stdout(&imported).contains("4 calls: ex 3, every-thing 1"),
        "{}",
        text(&imported)
    );
    let tape = imported_tape(&imported);
    let entries = tape_entries(&tape);
    let calls: Vec<(String, String)> = entries
        .iter()
        .filter(|e| e["method"] == "tools/call")
        .map(|e| {
            let s = |v: &Value| v.as_str().unwrap_or("").to_owned();
            (s(&e["_meta"]["server"]), s(&e["params"]["name"]))
        })
        .collect();
    let calls: Vec<(&str, &str)> = calls
        .iter()
        .map(|(s, t)| (s.as_str(), t.as_str()))
        .collect();
    assert_eq!(
        calls,
        [
            ("ex", "echo"),
            ("ex", "fail"),
            ("ex", "greet"),
            ("every-thing", "echo")
        ]
    );
    let answers: Vec<&Value> = entries
        .iter()
        .filter(|e| e["_meta"]["dir"] == "recv" && e["id"] != 0)
        .map(|e| &e["result"])
        .collect();
    assert_eq!(answers[0]["content"][0]["text"], "Echo: hello from claude");
    assert_eq!(answers[1]["isError"], true);
    assert_eq!(answers[2]["content"][0]["text"], "Hello, Ann!");
    assert!(
        entries
            .iter()
            .all(|e| e["_meta"]["source"]["imported"] == "claude-code")
    );
    let made_up = entries
        .iter()
        .filter(|e| e["_meta"]["source"]["synthesized"] == true)
        .count();
    // Per connection: start, initialize and its answer, initialized, close.
    assert_eq!(made_up, 10);
    let bytes = std::fs::read_to_string(&tape).expect("tape");
    assert!(!bytes.contains(SECRET), "the secret reached the tape");
    assert!(bytes.contains(r#""apiKey":"[REDACTED]""#));

    // The agent's real calls, against the server again: the same answers.
    let same = mcptape(
        &env,
        &[
            "verify",
            path_str(&tape),
            "--server",
            "ex",
            "--",
            &example_server(),
        ],
    );
    assert!(same.status.success(), "{}", text(&same));
    assert!(
        stdout(&same).contains("3 same, 0 changed"),
        "{}",
        text(&same)
    );
    let mut everything: Vec<String> = vec!["verify".into(), path_str(&tape).into()];
    everything.extend(["--server".into(), "every-thing".into(), "--".into()]);
    everything.extend(everything_server());
    let args: Vec<&str> = everything.iter().map(String::as_str).collect();
    let same = mcptape(&env, &args);
    assert!(same.status.success(), "{}", text(&same));
    assert!(
        stdout(&same).contains("1 same, 0 changed"),
        "{}",
        text(&same)
    );

    // A new build that answers differently: reported, exit 1.
    let drift = mcptape(
        &env,
        &[
            "verify",
            path_str(&tape),
            "--server",
            "ex",
            "--",
            &example_server(),
            "--drift",
        ],
    );
    assert_eq!(drift.status.code(), Some(1), "{}", text(&drift));
    let report = stdout(&drift);
    assert!(report.contains("gone-error tools/call fail"), "{report}");
    assert!(report.contains("changed    tools/call greet"), "{report}");

    // Replay answers a client from it, the server absent.
    let config = env.path("absent.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"every-thing": {"command": "/nonexistent/server"}}}).to_string(),
    )
    .expect("config");
    let replayed = mcptape(
        &env,
        &[
            "replay",
            path_str(&tape),
            "--server",
            "every-thing",
            "--",
            &bin().to_string_lossy(),
            "call",
            "--config",
            path_str(&config),
            "every-thing.echo",
            "message=second server",
            "apiKey=anything",
        ],
    );
    assert!(replayed.status.success(), "{}", text(&replayed));
    assert_eq!(stdout(&replayed).trim(), "Echo: second server");
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// The vendored real transcript of a subagent session (tests/fixtures/claude-code).
fn fixture(run: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude-code")
        .join(run);
    std::fs::read_dir(&dir)
        .expect("fixture")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .expect("a transcript")
}

#[test]
fn a_vendored_session_with_a_subagent_imports_and_says_what_is_missing() {
    let env = Env::new();
    let out = mcptape(
        &env,
        &[
            "import",
            "claude-code",
            path_str(&fixture("subagent-and-blocks")),
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let line = stdout(&out);
    assert!(
        line.starts_with("claude-code-1a84d610  6 calls: my.srv 4, every-thing 2 (1 incomplete)"),
        "{line}"
    );
    assert!(
        stderr(&out).contains("claude-code-1a84d610: read with 1 subagent transcript"),
        "{}",
        text(&out)
    );
    let entries = tape_entries(&env.tape("claude-code-1a84d610"));
    let incomplete: Vec<&Value> = entries
        .iter()
        .filter(|e| e["_meta"]["source"]["incomplete"].is_string())
        .collect();
    assert_eq!(incomplete.len(), 1);
    // Imported again, twice: the same bytes, so the tape is left alone (no `.prev`
    // rotation that would push the original out).
    let tape = env.tape("claude-code-1a84d610");
    let first = std::fs::read(&tape).expect("tape");
    let import = || {
        mcptape(
            &env,
            &[
                "import",
                "claude-code",
                path_str(&fixture("subagent-and-blocks")),
            ],
        )
    };
    for _ in 0..2 {
        let again = import();
        assert!(again.status.success(), "{}", text(&again));
        assert!(stdout(&again).contains("(unchanged)"), "{}", text(&again));
        assert!(!stderr(&again).contains(".prev"), "{}", text(&again));
        assert_eq!(std::fs::read(&tape).expect("tape"), first);
    }
    let prev = tape.with_file_name("claude-code-1a84d610.prev.ndjson");
    assert!(!prev.exists());
    // A tape that differs (edited since) is kept as `.prev` when the import rewrites it.
    let mut edited = first.clone();
    edited.extend_from_slice(b"\n");
    std::fs::write(&tape, &edited).expect("edit");
    let again = import();
    assert!(again.status.success(), "{}", text(&again));
    assert!(
        stderr(&again).contains("claude-code-1a84d610.prev.ndjson"),
        "{}",
        text(&again)
    );
    assert_eq!(std::fs::read(&prev).expect("prev"), edited);
    assert_eq!(std::fs::read(&tape).expect("tape"), first);
}

#[test]
fn a_bad_transcript_is_an_error_naming_file_and_line_and_writes_nothing() {
    let env = Env::new();
    let dir = env.path("sessions");
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::copy(fixture("refused-and-closed"), dir.join("a-good.jsonl")).expect("copy");
    std::fs::write(
        dir.join("b-bad.jsonl"),
        "{\"type\":\"user\"}\n[\"not an object\"]\n{\"type\":\"user\"}\n",
    )
    .expect("write");
    let out = mcptape(&env, &["import", "claude-code", path_str(&dir)]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = stderr(&out);
    assert!(
        err.contains("b-bad.jsonl") && err.contains("line 2 is not a JSON object"),
        "{err}"
    );
    assert!(
        !env.mcptape_home().join("recordings").exists(),
        "nothing written"
    );

    std::fs::write(dir.join("b-bad.jsonl"), "{\"type\":\n{}\n").expect("write");
    let out = mcptape(&env, &["import", "claude-code", path_str(&dir)]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("line 1 is not valid JSON"),
        "{}",
        text(&out)
    );

    let out = mcptape(
        &env,
        &["import", "claude-code", path_str(&env.path("nowhere"))],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(stderr(&out).contains("nowhere"), "{}", text(&out));
    assert!(
        !env.mcptape_home().join("recordings").exists(),
        "nothing written"
    );
}

#[test]
fn text_from_a_transcript_reaches_the_terminal_escaped() {
    let env = Env::new();
    let path = env.path("s.jsonl");
    let call = json!({"type": "assistant", "sessionId": "\u{1b}]0;x\u{7}", "message": {"content": [
        {"type": "tool_use", "id": "t1", "name": "mcp__ev\u{1b}[31mil\u{202e}__echo", "input": {}}
    ]}});
    std::fs::write(&path, format!("{call}\n")).expect("write");
    let out = mcptape(&env, &["import", "claude-code", path_str(&path)]);
    assert!(out.status.success(), "{}", text(&out));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        !all.contains('\u{1b}') && !all.contains('\u{202e}') && !all.contains('\u{7}'),
        "{all:?}"
    );
    assert!(
        stdout(&out).contains("1 call: ev\\x1b[31mil\\u{202e} 1 (1 unanswered)"),
        "{all:?}"
    );
}
