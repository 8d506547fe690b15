//! Claude Code (offline, against the scripted Messages API stand-in, as in claude.rs) with
//! its MCP server behind `mcptape proxy --policy`: it calls a denied tool, the model is
//! given the refusal as the tool's result, the next call goes through, and the run
//! finishes; the server's own log shows the denied call never reached it.

use serde_json::{Value, json};

use crate::claude::{MessagesApi, tool_results, under};
use crate::support::*;

#[test]
fn claude_code_receives_a_denied_calls_refusal_and_finishes_its_run() {
    let env = Env::new();
    let policy = env.path("policy.toml");
    std::fs::write(&policy, crate::policy::POLICY).expect("write policy");
    let log = env.path("server.log");
    let mut argv = proxy_argv(
        "fs",
        &[
            python(),
            peer("py_policy_server.py"),
            "stdio".into(),
            log.display().to_string(),
        ],
    );
    argv.splice(2..2, ["--policy".to_owned(), policy.display().to_string()]);
    let config =
        json!({"mcpServers": {"fs": {"type": "stdio", "command": argv[0], "args": argv[1..]}}});
    let home = env.path("home");
    std::fs::create_dir_all(&home).expect("home");
    std::fs::write(home.join(".claude.json"), config.to_string()).expect("write config");

    let steps = json!([
        {"tool_use": {"name": "mcp__fs__delete_file", "input": {"path": "/important"}}},
        {"tool_use": {"name": "mcp__fs__echo", "input": {"message": "still here"}}},
        {"text": "The delete was refused; the echo worked."}
    ]);
    let args = [
        "-p",
        "Delete /important, then echo.",
        "--allowedTools",
        "mcp__fs__delete_file,mcp__fs__echo",
    ];
    // On a loaded machine Claude Code may ask the model before the Python server's tools
    // are listed (it then never offers them, and the stand-in can only say "ok"): such a
    // run did not test the gate at all, so it is run once more; a run that offered the
    // tools is judged as it is.
    let mut attempt = 0;
    let (api, out) = loop {
        attempt += 1;
        let api = MessagesApi::start(&env, &format!("policy{attempt}"), &steps);
        let out = under(&env, "record", "cc-policy", Some(&api), &args);
        let offered = api.messages_requests().first().is_some_and(|first| {
            first["tools"]
                .as_array()
                .is_some_and(|t| t.iter().any(|t| t["name"] == "mcp__fs__delete_file"))
        });
        if offered || attempt == 2 {
            break (api, out);
        }
        eprintln!("Claude Code asked the model before the MCP tools were listed; once more");
        let _ = std::fs::remove_file(&log);
    };
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("The delete was refused; the echo worked."),
        "{}",
        text(&out)
    );
    // The model was given the refusal as the delete's result, then the echo's answer.
    let requests = api.messages_requests();
    let results = tool_results(requests.last().expect("a Messages API request"));
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(
        results[0]
            .1
            .contains("Tool call blocked by policy: no-destructive"),
        "{results:?}"
    );
    assert!(results[1].1.contains("Echo: still here"), "{results:?}");
    let served: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a log line"))
        .collect();
    assert_eq!(served.len(), 1, "{served:?}");
    assert_eq!(served[0]["tool"], "echo");
    let entries = tape_entries(&env.tape("cc-policy"));
    let decisions = lifecycle(&entries, "$policy/decision");
    assert_eq!(decisions.len(), 2, "{entries:?}");
    assert_eq!(decisions[0]["params"]["resolution"], "refused");
}
