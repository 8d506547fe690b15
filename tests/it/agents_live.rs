//! Real agents through the whole round trip: their MCP servers wrapped in their own
//! config file, `mcptape record s -- AGENT mcp list` (the agent connects to every server,
//! the tape holds one connection per server), `mcptape replay s -- AGENT mcp list` with
//! the servers gone (the agent still sees them connected), then the config unwrapped.
//!
//! The agents are Claude Code (`claude mcp list`: a `server/discover` probe, `initialize`,
//! `tools/list` per server) and the Gemini CLI (`gemini mcp list`: `initialize` and a
//! `ping` per server, listed on stderr), both from npm (tests/peers/install), both
//! offline: neither needs an account for `mcp list`, and the variables below turn off
//! their update checks and telemetry. Every path either agent reads is inside the test's
//! temporary directory (HOME, CLAUDE_CONFIG_DIR, GEMINI_CLI_HOME, Gemini's system
//! settings).
//!
//! The servers' commands are symlinks in a directory of the test (the example server, and
//! `node` for server-everything), removed before the replay: a replay that started a
//! server would find nothing to run.
//!
//! Claude Code rewrites a `.claude.json` that lacks its own state (first start: it adds
//! `firstStartTime`, `userID`, `migrationVersion`… and re-indents the file); once the
//! state is there it leaves the file alone. The Claude Code round trip therefore starts
//! from a file Claude Code has already run on, as a user's is, and checks that neither
//! run under mcptape changed a byte of it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::support::*;

/// A file of an npm peer: under tests/peers/node_modules (tests/peers/install), or under
/// the `node_modules` directory `MCPTAPE_TEST_NODE_MODULES` names (a peer installed
/// elsewhere, e.g. with `npm install --prefix`).
fn npm_peer(rel: &str) -> PathBuf {
    let mut dirs = vec![PathBuf::from(peer("node_modules"))];
    dirs.extend(std::env::var_os("MCPTAPE_TEST_NODE_MODULES").map(PathBuf::from));
    dirs.iter()
        .map(|d| d.join(rel))
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("{rel} is missing from {dirs:?}: run tests/peers/install first"))
}

/// Claude Code's native binary (tests/peers/install places it over npm's placeholder).
fn claude() -> PathBuf {
    let bin = npm_peer("@anthropic-ai/claude-code/bin/claude.exe");
    let size = std::fs::metadata(&bin).map(|m| m.len()).unwrap_or(0);
    assert!(
        size > 1 << 20,
        "{} is still npm's placeholder: run tests/peers/install first",
        bin.display()
    );
    bin
}

/// The Gemini CLI's entry point (one bundled script, `#!/usr/bin/env node`).
fn gemini() -> PathBuf {
    npm_peer("@google/gemini-cli/bundle/gemini.js")
}

/// The first `name` on PATH.
fn which(name: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{name} is not on PATH"))
}

/// The two real servers, started through symlinks of the test's own so that they can be
/// taken away: `a` is the example server, `b` is server-everything under `node`.
struct Servers {
    links: Vec<PathBuf>,
    a: Vec<String>,
    b: Vec<String>,
}

impl Servers {
    fn new(env: &Env) -> Servers {
        let dir = env.path("servers");
        std::fs::create_dir_all(&dir).expect("servers dir");
        let example = dir.join("example-server");
        let node = dir.join("node");
        std::os::unix::fs::symlink(example_server(), &example).expect("link example server");
        std::os::unix::fs::symlink(which("node"), &node).expect("link node");
        let s = |p: &Path| p.to_string_lossy().into_owned();
        let mut b = vec![s(&node)];
        b.extend(everything_server().into_iter().skip(1));
        Servers {
            a: vec![s(&example)],
            b,
            links: vec![example, node],
        }
    }

    /// Removes the servers' commands: nothing configured can start any more.
    fn remove(&self) {
        for link in &self.links {
            std::fs::remove_file(link).expect("remove server link");
            assert!(!link.exists(), "{} still exists", link.display());
        }
    }
}

/// The variables of an agent's run: nothing of the caller's agents leaks in, every path
/// they read is in the temp dir, and nothing reaches the network.
fn agent_env(cmd: &mut Command, env: &Env) {
    for (k, _) in std::env::vars() {
        if ["ANTHROPIC_", "CLAUDE", "GEMINI_", "GOOGLE_"]
            .iter()
            .any(|p| k.starts_with(p))
        {
            cmd.env_remove(k);
        }
    }
    cmd.env("XDG_CONFIG_HOME", env.path("home/.config"))
        .env("CODEX_HOME", env.path("home/.codex"))
        .env("APPDATA", env.path("home/AppData/Roaming"))
        // Claude Code: no account is needed for `mcp list`; no update check, telemetry
        // or other traffic; a slow start on a loaded machine is not a failure.
        .env("ANTHROPIC_API_KEY", "dummy")
        .env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("MCP_TIMEOUT", "60000")
        // Gemini CLI: its home is the test's, and its system-wide files are none.
        .env("GEMINI_CLI_HOME", env.path("home"))
        .env(
            "GEMINI_CLI_SYSTEM_SETTINGS_PATH",
            env.path("etc/gemini-cli/settings.json"),
        )
        .env(
            "GEMINI_CLI_SYSTEM_DEFAULTS_PATH",
            env.path("etc/gemini-cli/system-defaults.json"),
        )
        .env(
            "GEMINI_CLI_TRUSTED_FOLDERS_PATH",
            env.path("home/.gemini/trustedFolders.json"),
        );
}

/// One agent under test.
struct Agent {
    /// The `--agent` name of `mcptape install`.
    name: &'static str,
    /// Its config file, where the servers are.
    config: PathBuf,
    /// The program and arguments that list its servers' health.
    argv: Vec<String>,
    /// Whether a line of its output says that `server` is connected.
    connected: fn(&str, &str) -> bool,
}

impl Agent {
    fn claude_code(env: &Env) -> Agent {
        Agent {
            name: "claude-code",
            config: env.path("home/.claude.json"),
            argv: vec![
                claude().to_string_lossy().into_owned(),
                "mcp".into(),
                "list".into(),
            ],
            // `a: <command line> - ✔ Connected`
            connected: |line, server| {
                line.starts_with(&format!("{server}: ")) && line.ends_with(" - ✔ Connected")
            },
        }
    }

    fn gemini(env: &Env) -> Agent {
        Agent {
            name: "gemini",
            config: env.path("home/.gemini/settings.json"),
            argv: vec![
                gemini().to_string_lossy().into_owned(),
                "mcp".into(),
                "list".into(),
            ],
            // `✓ a: <command line> (stdio) - Connected`
            connected: |line, server| {
                line.starts_with(&format!("✓ {server}: ")) && line.ends_with(" - Connected")
            },
        }
    }

    /// The agent run directly.
    fn direct(&self, env: &Env) -> Output {
        let mut cmd = env.cmd(&self.argv[0]);
        cmd.args(&self.argv[1..]);
        agent_env(&mut cmd, env);
        run(cmd)
    }

    /// `mcptape MODE s -- AGENT…`.
    fn under(&self, env: &Env, mode: &str) -> Output {
        let mut cmd = env.mcptape([mode, "s", "--"]);
        cmd.args(&self.argv);
        agent_env(&mut cmd, env);
        run(cmd)
    }

    /// Asserts that the agent said `a` and `b` are connected (Claude Code lists on
    /// stdout, the Gemini CLI on stderr).
    fn assert_connected(&self, out: &Output) {
        let all = format!("{}\n{}", stdout(out), stderr(out));
        for server in ["a", "b"] {
            assert!(
                all.lines().any(|l| (self.connected)(l.trim_end(), server)),
                "{}: server `{server}` is not connected:\n{}",
                self.name,
                text(out)
            );
        }
    }

    /// Asserts that the agent said neither `a` nor `b` is connected (and still listed
    /// them: both agents exit 0 either way).
    fn assert_none_connected(&self, out: &Output) {
        let all = format!("{}\n{}", stdout(out), stderr(out));
        for server in ["a", "b"] {
            assert!(
                !all.lines().any(|l| (self.connected)(l.trim_end(), server)),
                "{}: server `{server}` is connected:\n{}",
                self.name,
                text(out)
            );
            assert!(
                all.lines().any(|l| l.contains(&format!("{server}: "))),
                "{}: server `{server}` is not listed:\n{}",
                self.name,
                text(out)
            );
        }
    }

    fn read(&self) -> Vec<u8> {
        std::fs::read(&self.config)
            .unwrap_or_else(|e| panic!("read {}: {e}", self.config.display()))
    }

    fn write(&self, bytes: &[u8]) {
        std::fs::create_dir_all(self.config.parent().expect("config dir")).expect("config dir");
        std::fs::write(&self.config, bytes)
            .unwrap_or_else(|e| panic!("write {}: {e}", self.config.display()));
    }
}

/// An stdio entry of `command` and `args`, with the members a user's entry has beside
/// them (kept by the wrapping).
fn entry(argv: &[String], extra: Value) -> Value {
    let mut e = json!({"command": argv[0], "args": argv[1..]});
    for (k, v) in extra.as_object().expect("object") {
        e[k] = v.clone();
    }
    e
}

/// Wraps each server of the config in `mcptape proxy --server NAME -- …`, by hand.
fn hand_wrap(agent: &Agent) {
    let mut config: Value = serde_json::from_slice(&agent.read()).expect("config is JSON");
    let servers = config["mcpServers"]
        .as_object_mut()
        .expect("mcpServers is an object");
    for (name, e) in servers.iter_mut() {
        let mut real = vec![e["command"].as_str().expect("command").to_owned()];
        for a in e["args"].as_array().expect("args") {
            real.push(a.as_str().expect("arg").to_owned());
        }
        let argv = proxy_argv(name, &real);
        e["command"] = json!(argv[0]);
        e["args"] = json!(argv[1..]);
    }
    let mut bytes = serde_json::to_vec_pretty(&config).expect("serialize");
    bytes.push(b'\n');
    agent.write(&bytes);
}

/// The tape's connections, in order of first appearance: (server, its entries).
fn connections(tape: &Path) -> Vec<(String, Vec<Value>)> {
    let mut out: Vec<(String, String, Vec<Value>)> = Vec::new();
    for e in tape_entries(tape) {
        let conn = e["_meta"]["conn"].as_str().expect("conn").to_owned();
        let server = e["_meta"]["server"].as_str().expect("server").to_owned();
        match out.iter_mut().find(|(c, _, _)| *c == conn) {
            Some((_, _, entries)) => entries.push(e),
            None => out.push((conn, server, vec![e])),
        }
    }
    out.into_iter().map(|(_, s, e)| (s, e)).collect()
}

/// The tape holds exactly one connection of each of `a` and `b`, each with its
/// `initialize` request and the server's answer to it.
fn assert_one_connection_each(tape: &Path) {
    let conns = connections(tape);
    let mut servers: Vec<&str> = conns.iter().map(|(s, _)| s.as_str()).collect();
    servers.sort_unstable();
    assert_eq!(servers, ["a", "b"], "{conns:#?}");
    for (server, entries) in &conns {
        let init = entries
            .iter()
            .find(|e| e["_meta"]["dir"] == "send" && e["method"] == "initialize")
            .unwrap_or_else(|| panic!("no initialize in `{server}`'s connection"));
        assert!(
            entries.iter().any(|e| e["_meta"]["dir"] == "recv"
                && e["id"] == init["id"]
                && e["result"]["serverInfo"].is_object()),
            "no answer to `{server}`'s initialize: {entries:#?}"
        );
    }
}

/// The replay's verdicts: exit 0, and `ok` for `a` and `b`.
fn assert_replayed_ok(out: &Output) {
    assert!(out.status.success(), "{}", text(out));
    let err = stderr(out);
    for bad in ["DIVERGED", "INCOMPLETE", "FAILED", "UNUSED"] {
        assert!(!err.contains(bad), "{}", text(out));
    }
    for s in ["a", "b"] {
        assert!(
            err.contains(&format!("ok       server `{s}`")),
            "{}",
            text(out)
        );
    }
}

/// record → (servers gone) replay, with the agent's config wrapped; the config is not
/// touched by either run.
fn record_and_replay(env: &Env, agent: &Agent, servers: &Servers) {
    let wrapped = agent.read();
    let recorded = agent.under(env, "record");
    assert!(recorded.status.success(), "{}", text(&recorded));
    agent.assert_connected(&recorded);
    assert_one_connection_each(&env.tape("s"));
    assert!(
        agent.read() == wrapped,
        "{} changed {} while recording",
        agent.name,
        agent.config.display()
    );

    // Gone: run live, the agent cannot connect to either.
    servers.remove();
    agent.assert_none_connected(&agent.direct(env));
    let replayed = agent.under(env, "replay");
    assert_replayed_ok(&replayed);
    agent.assert_connected(&replayed);
    assert!(
        agent.read() == wrapped,
        "{} changed {} while replaying",
        agent.name,
        agent.config.display()
    );
}

#[test]
fn claude_code_mcp_list_records_and_replays_with_the_servers_gone() {
    let env = Env::new();
    let servers = Servers::new(&env);
    let agent = Agent::claude_code(&env);
    let config = json!({"mcpServers": {
        "a": entry(&servers.a, json!({"type": "stdio", "env": {"GREETING": "hi"}})),
        "b": entry(&servers.b, json!({"type": "stdio"})),
    }});
    agent.write(config.to_string().as_bytes());
    // Claude Code's first start writes its own state into the file; a user's file has it.
    let first = agent.direct(&env);
    agent.assert_connected(&first);
    let original = agent.read();
    let state: Value = serde_json::from_slice(&original).expect("JSON");
    assert_eq!(
        state["mcpServers"], config["mcpServers"],
        "first start kept the servers"
    );

    hand_wrap(&agent);
    record_and_replay(&env, &agent, &servers);
}

#[test]
fn gemini_mcp_list_records_and_replays_with_the_servers_gone() {
    let env = Env::new();
    let servers = Servers::new(&env);
    let agent = Agent::gemini(&env);
    // Untrusted folders suppress every server: folder trust is off in the test home.
    let settings = json!({
        "security": {"folderTrust": {"enabled": false}},
        "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
        "mcpServers": {
            "a": entry(&servers.a, json!({"env": {"GREETING": "hi"}, "timeout": 30000})),
            "b": entry(&servers.b, json!({"trust": false})),
        }
    });
    let mut bytes = serde_json::to_vec_pretty(&settings).expect("serialize");
    bytes.push(b'\n');
    agent.write(&bytes);

    hand_wrap(&agent);
    record_and_replay(&env, &agent, &servers);

    // Without folder trust turned off, the folder is untrusted and Gemini starts no
    // server at all: the replay fails, naming the unused connections, instead of passing
    // an agent that connected nothing. (A second Gemini home, the wrapped settings less
    // `security`; Gemini skips system settings under a world-writable /tmp.)
    let mut untrusted: Value = serde_json::from_slice(&agent.read()).expect("JSON");
    untrusted
        .as_object_mut()
        .expect("object")
        .remove("security");
    let home = env.path("untrusted-home");
    std::fs::create_dir_all(home.join(".gemini")).expect("untrusted home");
    std::fs::write(home.join(".gemini/settings.json"), untrusted.to_string())
        .expect("write untrusted settings");
    let mut cmd = env.mcptape(["replay", "s", "--"]);
    cmd.args(&agent.argv);
    agent_env(&mut cmd, &env);
    let out = run(cmd.env("GEMINI_CLI_HOME", &home));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    agent.assert_none_connected(&out);
    assert!(
        stderr(&out).contains("folder is untrusted"),
        "{}",
        text(&out)
    );
    for s in ["a", "b"] {
        let unused = format!("UNUSED   server `{s}`");
        assert!(stderr(&out).contains(&unused), "{}", text(&out));
    }
}
