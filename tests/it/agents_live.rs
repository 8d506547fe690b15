//! Real agents through the whole round trip: `mcptape install --agent A` wraps the
//! servers of the agent's own config files, `mcptape record s -- AGENT mcp list` (the
//! agent connects to every server, the tape holds one connection per server), `mcptape
//! replay s -- AGENT mcp list` with the servers gone (the agent still sees every one
//! connected), then `mcptape uninstall --agent A` gives back every file byte for byte.
//!
//! The agents are Claude Code (`claude mcp list`: a `server/discover` probe, `initialize`,
//! `tools/list` per server, listed on stdout) and the Gemini CLI (`gemini mcp list`:
//! `initialize` and a `ping` per server, listed on stderr), both from npm
//! (tests/peers/install), both offline: neither needs an account for `mcp list`, and the
//! variables below turn off their update checks and telemetry. Every path either agent
//! reads is inside the test's temporary directory (HOME, CLAUDE_CONFIG_DIR,
//! GEMINI_CLI_HOME, Gemini's system settings). Each agent has a server in each of its
//! places: Claude Code at the top of `~/.claude.json`, in its `projects["<cwd>"]` and in
//! the project's `.mcp.json`; Gemini in `~/.gemini/settings.json` and the project's
//! `.gemini/settings.json`.
//!
//! The servers' commands are symlinks in a directory of the test (the example server, and
//! `node` for server-everything), removed before the replay: a replay that started a
//! server would find nothing to run, and the agent run live then connects to none.
//!
//! Claude Code rewrites a `.claude.json` that lacks its own state (first start: it adds
//! `firstStartTime`, `userID`, `migrationVersion`… and re-indents the file); once the
//! state is there it leaves the file alone. The round trip therefore starts from a file
//! Claude Code has already run on, as a user's is, and checks that no run under mcptape
//! changed a byte of any file; a test of its own covers the rewrite.

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

/// One agent under test, with the files its servers are in.
struct Agent {
    /// The `--agent` name of `mcptape install`.
    name: &'static str,
    /// Its config files that hold servers.
    files: Vec<PathBuf>,
    /// The servers configured in them.
    servers: Vec<&'static str>,
    /// The program and arguments that list its servers' health.
    argv: Vec<String>,
    /// Whether a line of its output says that `server` is connected.
    connected: fn(&str, &str) -> bool,
    /// Variables of every command of the round trip (install, the agent, uninstall).
    vars: Vec<(&'static str, PathBuf)>,
}

impl Agent {
    /// Claude Code, its state in `dir` (`CLAUDE_CONFIG_DIR`) or, without, in HOME.
    fn claude_code(env: &Env, dir: Option<&str>) -> Agent {
        let (state, vars) = match dir {
            Some(dir) => (env.path(dir), vec![("CLAUDE_CONFIG_DIR", env.path(dir))]),
            None => (env.path("home"), Vec::new()),
        };
        Agent {
            name: "claude-code",
            files: vec![state.join(".claude.json"), env.path(".mcp.json")],
            servers: vec!["a", "b", "c"],
            argv: vec![
                claude().to_string_lossy().into_owned(),
                "mcp".into(),
                "list".into(),
            ],
            // `a: <command line> - ✔ Connected`
            connected: |line, server| {
                line.starts_with(&format!("{server}: ")) && line.ends_with(" - ✔ Connected")
            },
            vars,
        }
    }

    fn gemini(env: &Env) -> Agent {
        Agent {
            name: "gemini",
            files: vec![
                env.path("home/.gemini/settings.json"),
                env.path(".gemini/settings.json"),
            ],
            servers: vec!["a", "b", "c"],
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

    /// The lines of the agent's listing (Claude Code's on stdout, Gemini's on stderr).
    fn listing(out: &Output) -> Vec<String> {
        format!("{}\n{}", stdout(out), stderr(out))
            .lines()
            .map(|l| l.trim_end().to_owned())
            .collect()
    }

    /// Asserts that the agent said every server is connected.
    fn assert_connected(&self, out: &Output) {
        let lines = Agent::listing(out);
        for server in &self.servers {
            assert!(
                lines.iter().any(|l| (self.connected)(l, server)),
                "{}: server `{server}` is not connected:\n{}",
                self.name,
                text(out)
            );
        }
    }

    /// Asserts that the agent listed every server and said none is connected (both
    /// agents exit 0 either way).
    fn assert_none_connected(&self, out: &Output) {
        let lines = Agent::listing(out);
        for server in &self.servers {
            assert!(
                !lines.iter().any(|l| (self.connected)(l, server)),
                "{}: server `{server}` is connected:\n{}",
                self.name,
                text(out)
            );
            assert!(
                lines.iter().any(|l| l.contains(&format!("{server}: "))),
                "{}: server `{server}` is not listed:\n{}",
                self.name,
                text(out)
            );
        }
    }

    /// The bytes of each of its files.
    fn read(&self) -> Vec<Vec<u8>> {
        self.files.iter().map(|f| read(f)).collect()
    }
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().expect("a directory")).expect("config dir");
    std::fs::write(path, bytes).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// JSON text of a string.
fn q(s: &str) -> String {
    serde_json::to_string(s).expect("string")
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

/// A JSON pointer to `server`'s entry under `container` (a path of keys).
fn pointer(container: &[&str], server: &str) -> String {
    container
        .iter()
        .chain([&server])
        .map(|k| format!("/{}", k.replace('~', "~0").replace('/', "~1")))
        .collect()
}

/// Where one server's entry is: the index of its file in `Agent::files`, a JSON pointer.
struct At {
    server: &'static str,
    file: usize,
    pointer: String,
}

/// `mcptape install --agent NAME`: each entry becomes `mcptape proxy --server NAME --
/// <its command and args>` with its other members kept, and running it again changes
/// nothing. Returns the original bytes of every file.
fn install(env: &Env, agent: &Agent, entries: &[At]) -> Vec<Vec<u8>> {
    let original = agent.read();
    agent.mcptape(env, "install");
    let installed = agent.read();
    for At {
        server,
        file,
        pointer,
    } in entries
    {
        let (before, after) = (json_of(&original[*file]), json_of(&installed[*file]));
        let (Some(was), Some(now)) = (before.pointer(pointer), after.pointer(pointer)) else {
            panic!(
                "no `{server}` at {pointer} in {}",
                agent.files[*file].display()
            );
        };
        let mut argv = vec![
            json!("proxy"),
            json!("--server"),
            json!(server),
            json!("--"),
        ];
        argv.push(was["command"].clone());
        argv.extend(was["args"].as_array().into_iter().flatten().cloned());
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
    assert!(agent.read() == installed, "a second install changed a file");
    assert!(
        stderr(&again).contains("nothing to change"),
        "{}",
        text(&again)
    );
    original
}

/// `mcptape uninstall --agent NAME` gives back every original file, byte for byte.
fn uninstall(env: &Env, agent: &Agent, original: &[Vec<u8>]) {
    agent.mcptape(env, "uninstall");
    for (path, was) in agent.files.iter().zip(original) {
        let now = read(path);
        similar_asserts::assert_eq!(String::from_utf8_lossy(&now), String::from_utf8_lossy(was));
        assert!(now == *was, "not byte-identical: {}", path.display());
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

/// The tape holds exactly one connection of each server, each with its `initialize`
/// request and the server's answer to it.
fn assert_one_connection_each(tape: &Path, servers: &[&str]) {
    let conns = connections(tape);
    let mut names: Vec<&str> = conns.iter().map(|(s, _)| s.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, servers, "{conns:#?}");
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

/// The replay's verdicts: exit 0, and `ok` for every server.
fn assert_replayed_ok(out: &Output, servers: &[&str]) {
    assert!(out.status.success(), "{}", text(out));
    let err = stderr(out);
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

/// record → (servers gone: `gone`) replay, with the agent's files wrapped; neither run
/// touches a byte of them.
fn record_and_replay(env: &Env, agent: &Agent, gone: impl FnOnce()) {
    let wrapped = agent.read();
    let recorded = agent.under(env, "record");
    assert!(recorded.status.success(), "{}", text(&recorded));
    agent.assert_connected(&recorded);
    assert_one_connection_each(&env.tape("s"), &agent.servers);
    assert!(
        agent.read() == wrapped,
        "{} changed its files while recording",
        agent.name
    );

    // Gone: run live, the agent cannot connect to any.
    gone();
    agent.assert_none_connected(&agent.direct(env));
    let replayed = agent.under(env, "replay");
    assert_replayed_ok(&replayed, &agent.servers);
    agent.assert_connected(&replayed);
    assert!(
        agent.read() == wrapped,
        "{} changed its files while replaying",
        agent.name
    );
}

/// The Claude Code round trip: `a` at the top of its `.claude.json`, `b` in
/// `projects["<cwd>"]` (its local scope), `c` in the project's `.mcp.json` (approved in
/// its user settings, as `claude` does when asked).
fn claude_code_round_trip(env: &Env, agent: &Agent) {
    let servers = Servers::new(env);
    let cwd = env.dir.path().to_string_lossy().into_owned();
    let a =
        json!({"type": "stdio", "command": servers.a[0], "args": [], "env": {"GREETING": "hi"}});
    let b = json!({"type": "stdio", "command": servers.b[0], "args": servers.b[1..]});
    let state = json!({
        "mcpServers": {"a": a},
        "projects": {cwd.as_str(): {"mcpServers": {"b": b}}},
    });
    let state_file = &agent.files[0];
    write(state_file, state.to_string().as_bytes());
    // Claude Code's user settings: `$CLAUDE_CONFIG_DIR/settings.json`, else `~/.claude/`.
    let settings = match agent.vars.iter().find(|(k, _)| *k == "CLAUDE_CONFIG_DIR") {
        Some((_, dir)) => dir.join("settings.json"),
        None => env.path("home/.claude/settings.json"),
    };
    write(&settings, b"{\n  \"enabledMcpjsonServers\": [\"c\"]\n}\n");
    let mcp_json = format!(
        "{{\n  \"mcpServers\": {{\n    \"c\": {{\n      \"command\": {},\n      \"args\": []\n    }}\n  }}\n}}\n",
        q(&servers.a[0])
    );
    write(&agent.files[1], mcp_json.as_bytes());
    // Claude Code's first start writes its own state into the file (a user's file has
    // it); from then on it leaves the file alone.
    let first = agent.direct(env);
    agent.assert_connected(&first);
    let started = json_of(&read(state_file));
    assert_eq!(started["mcpServers"], state["mcpServers"]);
    assert_eq!(
        started["projects"][&cwd]["mcpServers"],
        state["projects"][&cwd]["mcpServers"]
    );

    let entries = [
        At {
            server: "a",
            file: 0,
            pointer: pointer(&["mcpServers"], "a"),
        },
        At {
            server: "b",
            file: 0,
            pointer: pointer(&["projects", &cwd, "mcpServers"], "b"),
        },
        At {
            server: "c",
            file: 1,
            pointer: pointer(&["mcpServers"], "c"),
        },
    ];
    let original = install(env, agent, &entries);
    record_and_replay(env, agent, || servers.remove());
    uninstall(env, agent, &original);
}

#[test]
fn claude_code_install_record_replay_uninstall() {
    let env = Env::new();
    claude_code_round_trip(&env, &Agent::claude_code(&env, None));
}

#[test]
fn claude_code_with_claude_config_dir_install_record_replay_uninstall() {
    let env = Env::new();
    claude_code_round_trip(&env, &Agent::claude_code(&env, Some("claude-config")));
    assert!(
        !env.path("home/.claude.json").exists(),
        "~/.claude.json was made although CLAUDE_CONFIG_DIR is set"
    );
}

/// The Gemini CLI's folder-trust setting, one line of the test's settings.
const TRUST_OFF: &str = r#"  "security": { "folderTrust": { "enabled": false } },"#;

/// The Gemini round trip: `a` and `b` in `~/.gemini/settings.json`, hand-written with
/// comments (Gemini reads JSONC); `c` in the project's `.gemini/settings.json`. Each
/// entry has a generous `timeout`: `gemini mcp list` gives a server 5 s by default, which
/// a loaded machine can miss.
#[test]
fn gemini_install_record_replay_uninstall() {
    let env = Env::new();
    let servers = Servers::new(&env);
    let agent = Agent::gemini(&env);
    let user = format!(
        r#"{{
  // Untrusted folders suppress every server: folder trust is off in this home.
{TRUST_OFF}
  "general": {{ "enableAutoUpdate": false, "enableAutoUpdateNotification": false }},
  "privacy": {{ "usageStatisticsEnabled": false }},
  "telemetry": {{ "enabled": false }},
  "mcpServers": {{
    "a": {{ "command": {a}, "args": [], "env": {{ "GREETING": "hi" }}, "timeout": 60000 }},
    // server-everything, under node
    "b": {{
      "command": {node},
      "args": [{everything}, "stdio"],
      "timeout": 60000,
      "trust": false
    }}
  }}
}}
"#,
        a = q(&servers.a[0]),
        node = q(&servers.b[0]),
        everything = q(&servers.b[1]),
    );
    write(&agent.files[0], user.as_bytes());
    let project = format!(
        "{{\"mcpServers\": {{\"c\": {{\"command\": {}, \"timeout\": 60000, \"description\": \"the project's\"}}}}}}",
        q(&servers.a[0])
    );
    write(&agent.files[1], project.as_bytes());

    let at = |server, file| At {
        server,
        file,
        pointer: pointer(&["mcpServers"], server),
    };
    let original = install(&env, &agent, &[at("a", 0), at("b", 0), at("c", 1)]);
    record_and_replay(&env, &agent, || servers.remove());

    // Without folder trust turned off, the folder is untrusted and Gemini starts no
    // server at all: the replay fails, naming the unused connections, instead of passing
    // an agent that connected nothing. (A second Gemini home holds the wrapped settings
    // less that line; Gemini skips system settings under a world-writable /tmp.)
    let wrapped = String::from_utf8(read(&agent.files[0])).expect("UTF-8");
    assert!(wrapped.contains(TRUST_OFF), "{wrapped}");
    let home = env.path("untrusted-home");
    write(
        &home.join(".gemini/settings.json"),
        wrapped.replace(TRUST_OFF, "").as_bytes(),
    );
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
    for s in &agent.servers {
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
    let mut agent = Agent::claude_code(&env, None);
    agent.files.truncate(1);
    agent.servers = vec!["a", "b"];
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
    write(&agent.files[0], original.as_bytes());
    let at = |server| At {
        server,
        file: 0,
        pointer: pointer(&["mcpServers"], server),
    };
    install(&env, &agent, &[at("a"), at("b")]);
    let installed = read(&agent.files[0]);

    let recorded = agent.under(&env, "record");
    assert!(recorded.status.success(), "{}", text(&recorded));
    agent.assert_connected(&recorded);
    let rewritten = read(&agent.files[0]);
    assert!(
        rewritten != installed,
        "Claude Code no longer rewrites a fresh file"
    );
    let claude_state = json_of(&rewritten);
    assert!(claude_state["userID"].is_string(), "{claude_state}");

    agent.mcptape(&env, "uninstall");
    let after = read(&agent.files[0]);
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

/// A remote server in an agent's file: server-everything over Streamable HTTP, with an
/// `Authorization` header. Install makes it a stdio front (`mcptape proxy --url`) whose
/// header comes from the entry's env, never argv; the agent records through it, and
/// replays with the HTTP server stopped.
fn remote_round_trip(env: &Env, agent: &mut Agent, entry: impl FnOnce(&str, &str) -> Value) {
    let server = crate::http::HttpServer::start();
    let secret = format!(
        "Bearer {}",
        fake("abcdefghijklmnopqrstuvwxyz0123456789", 32, 15)
    );
    agent.files.truncate(1);
    agent.servers = vec!["r"];
    let mut config = if agent.name == "gemini" {
        json!({"security": {"folderTrust": {"enabled": false}}})
    } else {
        json!({})
    };
    config["mcpServers"] = json!({"r": entry(&server.url, &secret)});
    write(
        &agent.files[0],
        serde_json::to_string_pretty(&config)
            .expect("JSON")
            .as_bytes(),
    );
    if agent.name == "claude-code" {
        // A file Claude Code has already run on (it rewrites a fresh one).
        agent.assert_connected(&agent.direct(env));
    }
    let original = agent.read();
    agent.mcptape(env, "install");
    let wrapped = json_of(&read(&agent.files[0]))["mcpServers"]["r"].clone();
    let args: Vec<&str> = wrapped["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|a| a.as_str().expect("arg"))
        .collect();
    assert_eq!(wrapped["command"], json!(bin()), "{wrapped}");
    assert_eq!(
        args[..5],
        ["proxy", "--server", "r", "--url", server.url.as_str()],
        "{wrapped}"
    );
    assert!(
        !wrapped["args"].to_string().contains(&secret),
        "secret in argv: {wrapped}"
    );
    assert!(wrapped["env"].to_string().contains(&secret), "{wrapped}");

    record_and_replay(env, agent, || drop(server));
    let tape = std::fs::read_to_string(env.tape("s")).expect("tape");
    assert!(!tape.contains(&secret), "the header is in the tape");
    uninstall(env, agent, &original);
}

#[test]
fn claude_code_remote_entry_install_record_replay_uninstall() {
    let env = Env::new();
    let mut agent = Agent::claude_code(&env, None);
    remote_round_trip(
        &env,
        &mut agent,
        |url, secret| json!({"type": "http", "url": url, "headers": {"Authorization": secret}}),
    );
}

#[test]
fn gemini_remote_entry_install_record_replay_uninstall() {
    let env = Env::new();
    let mut agent = Agent::gemini(&env);
    remote_round_trip(
        &env,
        &mut agent,
        |url, secret| json!({"httpUrl": url, "headers": {"Authorization": secret}, "timeout": 60000}),
    );
}

/// Gemini's current remote form: `url` with `"type": "http"` (Streamable HTTP).
#[test]
fn gemini_remote_url_entry_install_record_replay_uninstall() {
    let env = Env::new();
    let mut agent = Agent::gemini(&env);
    remote_round_trip(
        &env,
        &mut agent,
        |url, secret| json!({"url": url, "type": "http", "headers": {"Authorization": secret}, "timeout": 60000}),
    );
}
