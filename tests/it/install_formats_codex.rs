//! The real Codex CLI (npm `@openai/codex`) reads the config `mcptape install` wrote:
//! `codex mcp list --json` (offline: it only reads the config) sees every wrapped entry
//! as a stdio server started through mcptape, with its env, env_vars and timeouts, and
//! after `uninstall` sees exactly what it saw before.

use std::path::PathBuf;

use serde_json::Value;

use crate::install::{fixture, home, mcptape, place, project};
use crate::support::{Env, run, stderr};

/// The Codex CLI launcher: tests/peers' install, or `MCPTAPE_TEST_CODEX` (a private
/// install's `bin/codex.js`, for a checkout whose peers are shared).
fn codex_cli() -> PathBuf {
    if let Some(p) = std::env::var_os("MCPTAPE_TEST_CODEX") {
        return PathBuf::from(p);
    }
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/peers/node_modules/@openai/codex/bin/codex.js");
    assert!(
        p.exists(),
        "{} is missing: run tests/peers/install first (the README's test command does)",
        p.display()
    );
    p
}

/// `codex mcp list --json` in the test's HOME, by server name.
fn codex_list(env: &Env) -> serde_json::Map<String, Value> {
    let mut cmd = env.cmd(codex_cli());
    cmd.args(["mcp", "list", "--json"])
        .env("CODEX_HOME", home(env).join(".codex"))
        .current_dir(project(env));
    let out = run(cmd);
    assert!(out.status.success(), "codex mcp list: {}", stderr(&out));
    let list: Vec<Value> = serde_json::from_slice(&out.stdout).expect("codex prints JSON");
    list.into_iter()
        .map(|s| (s["name"].as_str().expect("name").to_owned(), s))
        .collect()
}

#[test]
fn real_codex_reads_wrapped_entries_as_stdio_servers_through_mcptape() {
    let env = Env::new();
    let before_text = fixture(&env, "codex.toml");
    let path = place(&env, "~/.codex/config.toml", &before_text);
    let before = codex_list(&env);
    assert_eq!(before["docs"]["transport"]["type"], "streamable_http");

    let out = run(mcptape(&env, &["install", "--agent", "codex"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let after = codex_list(&env);
    for name in ["sqlite", "memory", "github", "docs"] {
        let t = &after[name]["transport"];
        assert_eq!(t["type"], "stdio", "{name}: {t}");
        assert!(
            t["command"]
                .as_str()
                .is_some_and(|c| c.ends_with("mcptape")),
            "{name}: {t}"
        );
        assert_eq!(t["args"][0], "proxy");
        assert_eq!(t["args"][2], name);
        // What Codex does with the entry besides starting it is unchanged.
        for k in ["enabled", "startup_timeout_sec", "tool_timeout_sec"] {
            assert_eq!(after[name][k], before[name][k], "{name}.{k}");
        }
    }
    assert_eq!(
        after["github"]["transport"]["env"],
        before["github"]["transport"]["env"]
    );
    assert_eq!(after["sqlite"]["transport"]["cwd"], "/srv");
    let docs = &after["docs"]["transport"];
    assert_eq!(docs["env"]["MCPTAPE_HEADER_X_API_KEY"], "docs-SECRET");
    assert_eq!(docs["env_vars"], serde_json::json!(["DOCS_ORG"]));
    assert!(!docs["args"].to_string().contains("docs-SECRET"), "{docs}");
    assert_eq!(
        after["oauthy"], before["oauthy"],
        "a skipped entry is left alone"
    );

    let out = run(mcptape(&env, &["uninstall", "--agent", "codex"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&path).expect("read"), before_text);
    assert_eq!(codex_list(&env), before);
}
