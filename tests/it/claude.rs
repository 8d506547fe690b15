//! Claude Code itself (npm `@anthropic-ai/claude-code`, installed by tests/peers/install)
//! as the MCP client, offline: `ANTHROPIC_BASE_URL` points at tests/peers/messages_api.mjs,
//! a stand-in for the Messages API that answers with scripted `tool_use` blocks (fresh
//! ids every run, as the real API gives), then a final text. Its MCP servers are in
//! `$HOME/.claude.json`, each behind `mcptape proxy`, with a temporary HOME.
//!
//! Claude Code puts a fresh `params._meta["claudecode/toolUseId"]` in every `tools/call`:
//! these tests fail when replay compares `_meta`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::support::*;

/// The Claude Code binary that tests/peers/install placed.
pub(crate) fn claude() -> PathBuf {
    let bin = PathBuf::from(peer(
        "node_modules/@anthropic-ai/claude-code/bin/claude.exe",
    ));
    let size = std::fs::metadata(&bin).map(|m| m.len()).unwrap_or(0);
    assert!(
        size > 1 << 20,
        "{} is missing or still npm's placeholder: run tests/peers/install first",
        bin.display()
    );
    bin
}

/// The stand-in Messages API, listening on a port-0 socket of its own.
pub(crate) struct MessagesApi {
    proc: Proc,
    pub(crate) url: String,
    log: PathBuf,
}

impl MessagesApi {
    /// Starts the stand-in with these script steps; it logs every request to `NAME.log`.
    pub(crate) fn start(env: &Env, name: &str, steps: &Value) -> MessagesApi {
        let script = env.path(&format!("{name}.script.json"));
        std::fs::write(&script, json!({ "steps": steps }).to_string()).expect("write script");
        let log = env.path(&format!("{name}.log"));
        let mut cmd = Command::new("node");
        cmd.arg(peer("messages_api.mjs")).arg(&script).arg(&log);
        let proc = Proc::spawn(&mut cmd);
        let Some(line) = proc.recv_raw() else {
            panic!("the Messages API stand-in ended: {}", proc.stderr());
        };
        let line = String::from_utf8(line).expect("utf-8");
        let port = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("not `listening on PORT`: {line}"));
        MessagesApi {
            url: format!("http://127.0.0.1:{port}"),
            proc,
            log,
        }
    }

    /// The bodies of the agent loop's `POST /v1/messages` requests, in order.
    pub(crate) fn messages_requests(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        text.lines()
            .map(|l| serde_json::from_str::<Value>(l).expect("log line is JSON"))
            .filter(|r| r["method"] == "POST" && r["path"] == "/v1/messages")
            .map(|r| r["body"].clone())
            .collect()
    }
}

impl Drop for MessagesApi {
    fn drop(&mut self) {
        self.proc.close_stdin();
    }
}

/// Writes `$HOME/.claude.json` with servers `a` (the example server) and `b`
/// (server-everything), each behind `mcptape proxy`; `live: false` points both proxies
/// at a command that does not exist (replay must not start them).
fn write_config(env: &Env, live: bool) {
    let absent = vec!["/nonexistent/server-that-must-not-start".to_owned()];
    let (a, b) = if live {
        (vec![example_server()], everything_server())
    } else {
        (absent.clone(), absent)
    };
    let server = |name: &str, cmd: &[String]| {
        let argv = proxy_argv(name, cmd);
        json!({"type": "stdio", "command": argv[0], "args": argv[1..]})
    };
    let config = json!({"mcpServers": {"a": server("a", &a), "b": server("b", &b)}});
    let home = env.path("home");
    std::fs::create_dir_all(&home).expect("home");
    std::fs::write(home.join(".claude.json"), config.to_string()).expect("write config");
}

/// `mcptape MODE SESSION -- claude ARGS...`, offline against the stand-in.
pub(crate) fn under(
    env: &Env,
    mode: &str,
    session: &str,
    api: Option<&MessagesApi>,
    args: &[&str],
) -> Output {
    let mut cmd = env.mcptape([mode, session, "--"]);
    cmd.arg(claude()).args(args);
    // Nothing of a Claude Code the tests may run under leaks in.
    for (k, _) in std::env::vars() {
        if k.starts_with("ANTHROPIC_") || k.starts_with("CLAUDE") {
            cmd.env_remove(k);
        }
    }
    cmd.env("ANTHROPIC_API_KEY", "dummy")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        // MCP tools offered to the model directly, not deferred behind ToolSearch.
        .env("ENABLE_TOOL_SEARCH", "false")
        // The first request waits until the servers are connected (by default `-p` may
        // ask the model before their tools are known).
        .env("MCP_CONNECTION_NONBLOCKING", "0")
        // A loaded machine (CI, or the whole suite on two cores) starts servers slowly:
        // generous connection and tool-call deadlines, so a slow start is not a failure.
        .env("MCP_TIMEOUT", "60000")
        .env("MCP_TOOL_TIMEOUT", "60000")
        .env(
            "ANTHROPIC_BASE_URL",
            api.map_or("http://127.0.0.1:9".to_owned(), |a| a.url.clone()),
        );
    run(cmd)
}

const PROMPT: &str = "Echo two messages, one with each server.";
const ALLOWED: &str = "mcp__a__echo,mcp__b__echo";

fn steps() -> Value {
    json!([
        {"tool_use": {"name": "mcp__a__echo", "input": {"message": "hello from claude"}}},
        {"tool_use": {"name": "mcp__b__echo", "input": {"message": "second server"}}},
        {"text": "Both echoes came back."}
    ])
}

/// Every verdict line of a replay's stderr is `ok`, and there is one per server.
fn assert_all_ok(out: &Output, servers: &[&str]) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}", text(out));
    for bad in ["DIVERGED", "INCOMPLETE", "FAILED", "UNUSED"] {
        assert!(!err.contains(bad), "{}", text(out));
    }
    for s in servers {
        assert!(
            err.contains(&format!("ok       server `{s}`")),
            "{}",
            text(out)
        );
    }
}

/// The tool results in a Messages API request's conversation, as text.
pub(crate) fn tool_results(body: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for m in body["messages"].as_array().into_iter().flatten() {
        for block in m["content"].as_array().into_iter().flatten() {
            if block["type"] == "tool_result" {
                let text = match &block["content"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                out.push((block["tool_use_id"].as_str().unwrap_or("").to_owned(), text));
            }
        }
    }
    out
}

/// The tape's `tools/call` sends, as (server, tool, `claudecode/toolUseId`).
fn tool_calls(tape: &Path) -> Vec<(String, String, String)> {
    tape_entries(tape)
        .iter()
        .filter(|e| e["_meta"]["dir"] == "send" && e["method"] == "tools/call")
        .map(|e| {
            let s = |v: &Value| v.as_str().unwrap_or("").to_owned();
            (
                s(&e["_meta"]["server"]),
                s(&e["params"]["name"]),
                s(&e["params"]["_meta"]["claudecode/toolUseId"]),
            )
        })
        .collect()
}

#[test]
fn a_claude_code_run_with_two_servers_records_and_replays_clean() {
    let env = Env::new();
    write_config(&env, true);
    let api = MessagesApi::start(&env, "record", &steps());
    let args = ["-p", PROMPT, "--allowedTools", ALLOWED];
    let recorded = under(&env, "record", "cc", Some(&api), &args);
    assert!(recorded.status.success(), "{}", text(&recorded));
    assert!(
        String::from_utf8_lossy(&recorded.stdout).contains("Both echoes came back."),
        "{}",
        text(&recorded)
    );

    // The tape holds a tools/call of each server, each with Claude Code's own id.
    let calls = tool_calls(&env.tape("cc"));
    let servers: Vec<(&str, &str)> = calls
        .iter()
        .map(|(s, t, _)| (s.as_str(), t.as_str()))
        .collect();
    assert_eq!(servers, [("a", "echo"), ("b", "echo")], "{calls:?}");
    assert!(
        calls.iter().all(|(_, _, id)| id.starts_with("toolu_")),
        "{calls:?}"
    );
    // The servers' answers reached the model in the next request, under those ids.
    let requests = api.messages_requests();
    let last = requests.last().expect("a Messages API request");
    let results = tool_results(last);
    assert_eq!(results.len(), 2, "{results:?}");
    for (i, expected) in ["Echo: hello from claude", "Echo: second server"]
        .iter()
        .enumerate()
    {
        assert_eq!(calls[i].2, results[i].0, "{calls:?} {results:?}");
        assert!(results[i].1.contains(expected), "{results:?}");
    }

    // Replay with the servers absent: the stand-in gives fresh tool_use ids, so Claude
    // Code's `claudecode/toolUseId` differs from the tape's in every call.
    write_config(&env, false);
    let api = MessagesApi::start(&env, "replay", &steps());
    let replayed = under(&env, "replay", "cc", Some(&api), &args);
    assert_all_ok(&replayed, &["a", "b"]);
    assert!(
        String::from_utf8_lossy(&replayed.stdout).contains("Both echoes came back."),
        "{}",
        text(&replayed)
    );
    let results = tool_results(api.messages_requests().last().expect("a request"));
    let texts: Vec<&str> = results.iter().map(|(_, t)| t.as_str()).collect();
    assert!(
        texts[0].contains("Echo: hello from claude") && texts[1].contains("Echo: second server"),
        "the tape's answers reached the model: {texts:?}"
    );
    let replayed_ids: Vec<&str> = results.iter().map(|(id, _)| id.as_str()).collect();
    assert!(
        calls
            .iter()
            .all(|(_, _, id)| !replayed_ids.contains(&id.as_str())),
        "the replay's tool use ids are new ones: {replayed_ids:?} {calls:?}"
    );
}

#[test]
fn claude_mcp_list_records_and_replays_clean() {
    let env = Env::new();
    write_config(&env, true);
    let recorded = under(&env, "record", "list", None, &["mcp", "list"]);
    assert!(recorded.status.success(), "{}", text(&recorded));
    let out = String::from_utf8_lossy(&recorded.stdout);
    let connected = |out: &str, name: &str| {
        out.lines()
            .any(|l| l.starts_with(&format!("{name}: ")) && l.contains("Connected"))
    };
    assert!(
        connected(&out, "a") && connected(&out, "b"),
        "{}",
        text(&recorded)
    );
    let inits: Vec<String> = tape_entries(&env.tape("list"))
        .iter()
        .filter(|e| e["_meta"]["dir"] == "send" && e["method"] == "initialize")
        .map(|e| e["_meta"]["server"].as_str().unwrap_or("").to_owned())
        .collect();
    assert!(
        inits.contains(&"a".to_owned()) && inits.contains(&"b".to_owned()),
        "{inits:?}"
    );

    write_config(&env, false);
    let replayed = under(&env, "replay", "list", None, &["mcp", "list"]);
    assert_all_ok(&replayed, &["a", "b"]);
    let out = String::from_utf8_lossy(&replayed.stdout);
    assert!(
        connected(&out, "a") && connected(&out, "b"),
        "{}",
        text(&replayed)
    );
}
