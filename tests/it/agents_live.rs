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
    /// Variables of every command of the round trip (install, the agent, uninstall).
    vars: Vec<(&'static str, PathBuf)>,
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
            vars: Vec::new(),
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
            vars: Vec::new(),
        }
    }

    /// Claude Code with `CLAUDE_CONFIG_DIR` set: its config is `$CLAUDE_CONFIG_DIR/.claude.json`.
    fn claude_code_in(env: &Env, dir: &str) -> Agent {
        let dir = env.path(dir);
        Agent {
            config: dir.join(".claude.json"),
            vars: vec![("CLAUDE_CONFIG_DIR", dir)],
            ..Agent::claude_code(env)
        }
    }

    /// A command of the round trip, with the agents' variables.
    fn prepare(&self, env: &Env, mut cmd: Command) -> Command {
        agent_env(&mut cmd, env);
        for (k, v) in &self.vars {
            cmd.env(k, v);
        }
        cmd
    }

    /// The agent run directly.
    fn direct(&self, env: &Env) -> Output {
        let mut cmd = env.cmd(&self.argv[0]);
        cmd.args(&self.argv[1..]);
        run(self.prepare(env, cmd))
    }

    /// `mcptape MODE s -- AGENT…`.
    fn under(&self, env: &Env, mode: &str) -> Output {
        let mut cmd = env.mcptape([mode, "s", "--"]);
        cmd.args(&self.argv);
        run(self.prepare(env, cmd))
    }

    /// `mcptape install|uninstall --agent NAME`, which must succeed.
    fn mcptape(&self, env: &Env, command: &str) -> Output {
        let out = run(self.prepare(env, env.mcptape([command, "--agent", self.name])));
        assert!(out.status.success(), "{command}: {}", text(&out));
        out
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

/// A config's text as JSON: whole-line `//` comments (the Gemini CLI allows them) left out.
fn json_of(bytes: &[u8]) -> Value {
    let text = String::from_utf8_lossy(bytes);
    let json: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

/// A JSON pointer to `server`'s entry in `container` (a path of keys).
fn pointer(container: &[&str], server: &str) -> String {
    container
        .iter()
        .chain([&server])
        .map(|k| format!("/{}", k.replace('~', "~0").replace('/', "~1")))
        .collect()
}

/// `mcptape install --agent NAME`: each entry at `entries` (JSON pointers) becomes
/// `mcptape proxy --server NAME -- <its command and args>` with its other members kept,
/// and running it again changes nothing. Returns the original bytes.
fn install(env: &Env, agent: &Agent, entries: &[(&str, String)]) -> Vec<u8> {
    let original = agent.read();
    agent.mcptape(env, "install");
    let installed = agent.read();
    let (before, after) = (json_of(&original), json_of(&installed));
    for (server, at) in entries {
        let (was, now) = (before.pointer(at), after.pointer(at));
        let (Some(was), Some(now)) = (was, now) else {
            panic!(
                "no `{server}` at {at}:\n{}",
                String::from_utf8_lossy(&installed)
            );
        };
        let mut argv = vec![
            json!("proxy"),
            json!("--server"),
            json!(server),
            json!("--"),
        ];
        argv.push(was["command"].clone());
        argv.extend(was["args"].as_array().expect("args").iter().cloned());
        assert_eq!(now["command"], json!(bin()), "{now}");
        assert_eq!(now["args"], Value::Array(argv), "{now}");
        let others = |e: &Value| {
            let mut e = e.as_object().expect("entry").clone();
            e.remove("command");
            e.remove("args");
            e
        };
        assert_eq!(
            others(now),
            others(was),
            "`{server}`'s other members are kept"
        );
    }
    let again = agent.mcptape(env, "install");
    assert!(
        agent.read() == installed,
        "a second install changed the file"
    );
    assert!(
        stderr(&again).contains("nothing to change"),
        "{}",
        text(&again)
    );
    original
}

/// `mcptape uninstall --agent NAME` gives back the original file, byte for byte.
fn uninstall(env: &Env, agent: &Agent, original: &[u8]) {
    agent.mcptape(env, "uninstall");
    let now = agent.read();
    similar_asserts::assert_eq!(
        String::from_utf8_lossy(&now),
        String::from_utf8_lossy(original)
    );
    assert!(
        now == original,
        "not byte-identical: {}",
        agent.config.display()
    );
}

/// The Claude Code round trip: `a` at the top level of its config, `b` in
/// `projects["<cwd>"]` (Claude Code's local scope).
fn claude_code_round_trip(env: &Env, agent: &Agent) {
    let servers = Servers::new(env);
    let cwd = env.dir.path().to_string_lossy().into_owned();
    let config = json!({
        "mcpServers": {"a": entry(&servers.a, json!({"type": "stdio", "env": {"GREETING": "hi"}}))},
        "projects": {cwd.as_str(): {"mcpServers": {"b": entry(&servers.b, json!({"type": "stdio"}))}}},
    });
    agent.write(config.to_string().as_bytes());
    // Claude Code's first start writes its own state into the file (a user's file has
    // it); from then on it leaves the file alone.
    let first = agent.direct(env);
    agent.assert_connected(&first);
    let state = json_of(&agent.read());
    assert_eq!(state["mcpServers"], config["mcpServers"]);
    assert_eq!(
        state["projects"][&cwd]["mcpServers"],
        config["projects"][&cwd]["mcpServers"]
    );

    let entries = [
        ("a", pointer(&["mcpServers"], "a")),
        ("b", pointer(&["projects", &cwd, "mcpServers"], "b")),
    ];
    let original = install(env, agent, &entries);
    record_and_replay(env, agent, &servers);
    uninstall(env, agent, &original);
}

/// An stdio entry of `argv` with these other members.
fn entry(argv: &[String], others: Value) -> Value {
    let mut e = json!({"command": argv[0], "args": argv[1..]});
    for (k, v) in others.as_object().expect("object") {
        e[k] = v.clone();
    }
    e
}

#[test]
fn claude_code_install_record_replay_uninstall() {
    let env = Env::new();
    claude_code_round_trip(&env, &Agent::claude_code(&env));
}

#[test]
fn claude_code_with_claude_config_dir_install_record_replay_uninstall() {
    let env = Env::new();
    let agent = Agent::claude_code_in(&env, "claude-config");
    claude_code_round_trip(&env, &agent);
    assert!(
        !env.path("home/.claude.json").exists(),
        "~/.claude.json was made although CLAUDE_CONFIG_DIR is set"
    );
}

/// The Gemini CLI's folder-trust setting, one line of the test's settings.
const TRUST_OFF: &str = r#"  "security": { "folderTrust": { "enabled": false } },"#;

#[test]
fn gemini_install_record_replay_uninstall() {
    let env = Env::new();
    let servers = Servers::new(&env);
    let agent = Agent::gemini(&env);
    let q = |s: &str| serde_json::to_string(s).expect("string");
    // A user's hand-written settings, comments and all (Gemini reads them as JSONC).
    let settings = format!(
        r#"{{
  // Untrusted folders suppress every server: folder trust is off in this home.
{TRUST_OFF}
  "general": {{ "enableAutoUpdate": false, "enableAutoUpdateNotification": false }},
  "privacy": {{ "usageStatisticsEnabled": false }},
  "telemetry": {{ "enabled": false }},
  "mcpServers": {{
    "a": {{ "command": {a}, "args": [], "env": {{ "GREETING": "hi" }}, "timeout": 30000 }},
    // server-everything, under node
    "b": {{
      "command": {node},
      "args": [{everything}, "stdio"],
      "trust": false
    }}
  }}
}}
"#,
        a = q(&servers.a[0]),
        node = q(&servers.b[0]),
        everything = q(&servers.b[1]),
    );
    agent.write(settings.as_bytes());

    let entries = [
        ("a", pointer(&["mcpServers"], "a")),
        ("b", pointer(&["mcpServers"], "b")),
    ];
    let original = install(&env, &agent, &entries);
    record_and_replay(&env, &agent, &servers);

    // Without folder trust turned off, the folder is untrusted and Gemini starts no
    // server at all: the replay fails, naming the unused connections, instead of passing
    // an agent that connected nothing. (A second Gemini home holds the wrapped settings
    // less that line; Gemini skips system settings under a world-writable /tmp.)
    let wrapped = String::from_utf8(agent.read()).expect("UTF-8");
    assert!(wrapped.contains(TRUST_OFF), "{wrapped}");
    let home = env.path("untrusted-home");
    std::fs::create_dir_all(home.join(".gemini")).expect("untrusted home");
    std::fs::write(
        home.join(".gemini/settings.json"),
        wrapped.replace(TRUST_OFF, ""),
    )
    .expect("write untrusted settings");
    let mut cmd = env.mcptape(["replay", "s", "--"]);
    cmd.args(&agent.argv);
    let out = run(agent.prepare(&env, cmd).env("GEMINI_CLI_HOME", &home));
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

    uninstall(&env, &agent, &original);
}

/// Claude Code's first start rewrites a `.claude.json` that lacks its state (adds
/// `firstStartTime`, `userID`, `migrationVersion`…, re-indents every line). When that
/// happens between install and uninstall, uninstall puts each entry's original bytes
/// back and keeps the rest of what Claude Code wrote.
#[test]
fn claude_code_rewriting_its_file_between_install_and_uninstall() {
    let env = Env::new();
    let servers = Servers::new(&env);
    let agent = Agent::claude_code(&env);
    let q = |s: &str| serde_json::to_string(s).expect("string");
    let a = format!(
        r#"{{"type": "stdio", "command": {}, "args": [], "env": {{"GREETING": "hi"}}}}"#,
        q(&servers.a[0])
    );
    let b = format!(
        r#"{{"type": "stdio", "command": {}, "args": [{}, "stdio"]}}"#,
        q(&servers.b[0]),
        q(&servers.b[1])
    );
    let original = format!(r#"{{"mcpServers": {{"a": {a}, "b": {b}}}}}"#) + "\n";
    agent.write(original.as_bytes());
    let entries = [
        ("a", pointer(&["mcpServers"], "a")),
        ("b", pointer(&["mcpServers"], "b")),
    ];
    install(&env, &agent, &entries);
    let installed = agent.read();

    let recorded = agent.under(&env, "record");
    assert!(recorded.status.success(), "{}", text(&recorded));
    agent.assert_connected(&recorded);
    let rewritten = agent.read();
    assert!(
        rewritten != installed,
        "Claude Code no longer rewrites a fresh file"
    );
    let claude_state = json_of(&rewritten);
    assert!(claude_state["userID"].is_string(), "{claude_state}");

    agent.mcptape(&env, "uninstall");
    let after = agent.read();
    let after_text = String::from_utf8_lossy(&after);
    // The entries: the original bytes, each.
    for (name, e) in [("a", &a), ("b", &b)] {
        assert!(
            after_text.contains(&format!("\"{name}\": {e}")),
            "`{name}` is not restored byte for byte:\n{after_text}"
        );
    }
    // The rest: what Claude Code wrote, as it wrote it.
    let mut expected = claude_state.clone();
    expected["mcpServers"] = json_of(original.as_bytes())["mcpServers"].clone();
    assert_eq!(json_of(&after), expected);
    let tail = |t: &str| t[t.find("\"firstStartTime\"").expect("state")..].to_owned();
    assert_eq!(
        tail(&after_text),
        tail(&String::from_utf8_lossy(&rewritten)),
        "Claude Code's own lines are kept as it wrote them"
    );
}
