//! `mcptape install` / `uninstall` against every JSON agent's own file shape: real files
//! in the test's HOME and project directory (tests/fixtures/install/), the real binary.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::{Env, run, stderr, stdout};

/// A fixture: its file, where it goes, the servers install wraps and those it skips.
pub(crate) struct Case {
    pub agent: &'static str,
    pub fixture: &'static str,
    /// `~/…` under HOME, else under the project (the working directory).
    pub dest: &'static str,
    pub wrapped: &'static [&'static str],
    pub skipped: &'static [&'static str],
    /// Secret values of the file: kept in it, never in an `args` after install.
    pub secrets: &'static [&'static str],
}

pub(crate) const CASES: &[Case] = &[
    Case {
        agent: "claude-code",
        fixture: "claude.json",
        dest: "~/.claude.json",
        wrapped: &["github", "linear", "db"],
        skipped: &["old-sse"],
        secrets: &["ghp_SECRETSECRETSECRET", "lin_api_SECRET123", "pg-SECRET"],
    },
    Case {
        agent: "claude-code",
        fixture: "mcp.json",
        dest: ".mcp.json",
        wrapped: &["fs"],
        skipped: &[],
        secrets: &[],
    },
    Case {
        agent: "claude-desktop",
        fixture: "claude_desktop_config.json",
        dest: "~/.config/Claude/claude_desktop_config.json",
        wrapped: &["filesystem", "brave"],
        skipped: &[],
        secrets: &["BSA-SECRET"],
    },
    Case {
        agent: "cursor",
        fixture: "cursor.json",
        dest: "~/.cursor/mcp.json",
        wrapped: &["sentry", "context7"],
        skipped: &[],
        secrets: &["sntrys_SECRET", "ctx7-SECRET"],
    },
    Case {
        agent: "cursor",
        fixture: "cursor.json",
        dest: ".cursor/mcp.json",
        wrapped: &["sentry", "context7"],
        skipped: &[],
        secrets: &["sntrys_SECRET", "ctx7-SECRET"],
    },
    Case {
        agent: "vscode",
        fixture: "vscode.jsonc",
        dest: ".vscode/mcp.json",
        wrapped: &["memory", "github"],
        skipped: &[],
        secrets: &[],
    },
    Case {
        agent: "vscode",
        fixture: "vscode.jsonc",
        dest: "~/.config/Code/User/mcp.json",
        wrapped: &["memory", "github"],
        skipped: &[],
        secrets: &[],
    },
    Case {
        agent: "windsurf",
        fixture: "windsurf.json",
        dest: "~/.codeium/windsurf/mcp_config.json",
        wrapped: &["git", "talaria"],
        skipped: &[],
        secrets: &["tal-SECRET"],
    },
    Case {
        agent: "gemini",
        fixture: "gemini.json",
        dest: "~/.gemini/settings.json",
        wrapped: &["python-tools", "github", "docs"],
        skipped: &["events"],
        secrets: &["gem-SECRET", "ghp_GEMSECRET", "gem-docs-SECRET"],
    },
    Case {
        agent: "gemini",
        fixture: "gemini.json",
        dest: ".gemini/settings.json",
        wrapped: &["python-tools", "github", "docs"],
        skipped: &["events"],
        secrets: &["gem-SECRET", "ghp_GEMSECRET", "gem-docs-SECRET"],
    },
    Case {
        agent: "zed",
        fixture: "zed.jsonc",
        dest: "~/.config/zed/settings.json",
        wrapped: &["postgres", "legacy", "remote"],
        skipped: &[],
        secrets: &["zed-SECRET", "legacy-SECRET", "zed-remote-SECRET"],
    },
    Case {
        agent: "zed",
        fixture: "zed.jsonc",
        dest: ".zed/settings.json",
        wrapped: &["postgres", "legacy", "remote"],
        skipped: &[],
        secrets: &["zed-SECRET", "legacy-SECRET", "zed-remote-SECRET"],
    },
    Case {
        agent: "cline",
        fixture: "cline.json",
        dest: "~/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
        wrapped: &["weather", "remote"],
        skipped: &[],
        secrets: &["ow-SECRET", "cline-SECRET"],
    },
];

/// The project directory (the commands' working directory), as the binary sees it.
pub(crate) fn project(env: &Env) -> PathBuf {
    std::fs::canonicalize(env.dir.path()).expect("canonical project dir")
}

pub(crate) fn home(env: &Env) -> PathBuf {
    env.dir.path().join("home")
}

/// `mcptape ARGS` with every variable an agent path reads inside the temp dir.
pub(crate) fn mcptape(env: &Env, args: &[&str]) -> Command {
    let mut cmd = env.mcptape(args);
    let home = home(env);
    cmd.env("XDG_CONFIG_HOME", home.join(".config"))
        .env("APPDATA", home.join("AppData/Roaming"))
        .env("CODEX_HOME", home.join(".codex"))
        .env_remove("CLAUDE_CONFIG_DIR")
        .current_dir(project(env));
    cmd
}

/// Where `dest` is.
pub(crate) fn dest_path(env: &Env, dest: &str) -> PathBuf {
    match dest.strip_prefix("~/") {
        Some(rest) => home(env).join(rest),
        None => project(env).join(dest),
    }
}

/// The fixture's text, with `@CWD@` made the project directory.
pub(crate) fn fixture(env: &Env, name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/install")
        .join(name);
    std::fs::read_to_string(path)
        .expect("fixture")
        .replace("@CWD@", &project(env).to_string_lossy())
}

/// Writes `text` at `dest` (mode 0640, to see it kept) and returns the path.
pub(crate) fn place(env: &Env, dest: &str, text: &str) -> PathBuf {
    let path = dest_path(env, dest);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(&path, text).expect("write config");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).expect("chmod");
    path
}

/// The JSONC text as a JSON value.
pub(crate) fn parse(text: &str) -> Value {
    jsonc_parser::parse_to_ast(text, &Default::default(), &Default::default())
        .expect("parses")
        .value
        .map(Value::from)
        .expect("a value")
}

/// The lines (0-based, end exclusive) of entry `name`: from its key's line to the line
/// of its closing brace.
fn entry_lines(text: &str, name: &str) -> std::ops::Range<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let key = format!("\"{name}\": {{");
    let start = lines
        .iter()
        .position(|l| l.contains(&key))
        .expect("entry's line");
    let mut depth = 0i32;
    for (i, line) in lines.iter().enumerate().skip(start) {
        let from = if i == start {
            line.find(&key).expect("key")
        } else {
            0
        };
        for c in line[from..].chars() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            if depth == 0 && c == '}' {
                return start..i + 1;
            }
        }
    }
    panic!("entry {name} does not close")
}

/// Every string of every `args` array in `v` (and of Zed's `command.args`).
fn all_args(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                if let (true, Value::Array(a)) = (k == "args", x) {
                    out.extend(a.iter().filter_map(|s| s.as_str().map(str::to_owned)));
                }
                all_args(x, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| all_args(x, out)),
        _ => {}
    }
}

/// The entry `name` anywhere in `v`, inside an object named like a container.
fn find_entry<'v>(v: &'v Value, name: &str) -> Option<&'v Value> {
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                let container = ["mcpServers", "servers", "context_servers"].contains(&k.as_str());
                if let Some(e) = x.get(name).filter(|_| container) {
                    return Some(e);
                }
                if let Some(e) = find_entry(x, name) {
                    return Some(e);
                }
            }
            None
        }
        _ => None,
    }
}

/// The members install may change in an entry.
const WRAPPER_MEMBERS: &[&str] = &[
    "command",
    "args",
    "env",
    "type",
    "url",
    "serverUrl",
    "httpUrl",
    "headers",
];

fn check_install(env: &Env, case: &Case, before: &str, after: &str) {
    // Only the wrapped entries' lines changed.
    let allowed: Vec<_> = case
        .wrapped
        .iter()
        .map(|n| entry_lines(before, n))
        .collect();
    for op in similar::TextDiff::from_lines(before, after).ops() {
        let old = op.old_range();
        if op.tag() == similar::DiffTag::Equal {
            continue;
        }
        let inside = allowed
            .iter()
            .any(|r| r.start <= old.start && old.end <= r.end);
        assert!(
            inside,
            "{}: lines {old:?} changed outside the wrapped entries:\n{after}",
            case.dest
        );
    }
    let (was, now) = (parse(before), parse(after));
    let mut args = Vec::new();
    all_args(&now, &mut args);
    for secret in case.secrets {
        assert!(
            after.contains(secret),
            "{}: secret {secret} was lost",
            case.dest
        );
        assert!(
            !args.iter().any(|a| a.contains(secret)),
            "{}: secret {secret} is in argv: {args:?}",
            case.dest
        );
    }
    for name in case.wrapped {
        let (old, new) = (
            find_entry(&was, name).expect("old"),
            find_entry(&now, name).expect("new"),
        );
        for (k, v) in old.as_object().expect("object") {
            if !WRAPPER_MEMBERS.contains(&k.as_str()) {
                assert_eq!(
                    new.get(k),
                    Some(v),
                    "{}: {name}.{k} was not kept",
                    case.dest
                );
            }
        }
        // The environment is kept whole (a remote entry's headers are added to it).
        if let Some(Value::Object(env_was)) = old.get("env") {
            for (k, v) in env_was {
                assert_eq!(new["env"].get(k), Some(v), "{}: {name}.env.{k}", case.dest);
            }
        }
        if let Some(Value::Object(headers)) = old.get("headers") {
            for (h, v) in headers {
                let var = format!(
                    "MCPTAPE_HEADER_{}",
                    h.to_ascii_uppercase().replace('-', "_")
                );
                assert_eq!(
                    new["env"].get(&var),
                    Some(v),
                    "{}: {name} header {h}",
                    case.dest
                );
            }
        }
        let line = new.get("command").expect("command");
        let text = line.to_string();
        assert!(
            text.contains("mcptape") || new["command"]["path"].to_string().contains("mcptape"),
            "{name}: {text}"
        );
    }
    for name in case.skipped {
        assert_eq!(
            find_entry(&was, name),
            find_entry(&now, name),
            "{name} skipped"
        );
    }
    let _ = env;
}

fn round_trip(case: &Case) {
    let env = Env::new();
    let before = fixture(&env, case.fixture);
    let path = place(&env, case.dest, &before);

    let out = run(mcptape(
        &env,
        &["install", "--agent", case.agent, "--dry-run"],
    ));
    assert!(out.status.success(), "{}", stderr(&out));
    let diff = stdout(&out);
    assert!(
        diff.contains("--- a/") && diff.contains("+++ b/") && diff.contains("+"),
        "{diff}"
    );
    assert_eq!(
        std::fs::read_to_string(&path).expect("read"),
        before,
        "dry-run wrote"
    );

    let out = run(mcptape(&env, &["install", "--agent", case.agent]));
    assert!(out.status.success(), "{}", stderr(&out));
    for name in case.skipped {
        assert!(
            stderr(&out).contains(&format!("warning: {name} ")),
            "{}",
            stderr(&out)
        );
    }
    let after = std::fs::read_to_string(&path).expect("read");
    assert_ne!(after, before, "{}: nothing changed", case.dest);
    check_install(&env, case, &before, &after);
    let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode, 0o640, "{}: mode", case.dest);

    let out = run(mcptape(&env, &["install", "--agent", case.agent]));
    assert!(
        out.status.success() && stderr(&out).contains("nothing to change"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(&path).expect("read"),
        after,
        "second install changed"
    );

    let out = run(mcptape(
        &env,
        &["uninstall", "--agent", case.agent, "--dry-run"],
    ));
    assert!(
        out.status.success() && stdout(&out).contains("+++ b"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(&path).expect("read"),
        after,
        "uninstall --dry-run wrote"
    );

    let out = run(mcptape(&env, &["uninstall", "--agent", case.agent]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&path).expect("read"),
        before,
        "{}: not byte-identical",
        case.dest
    );
    let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
}

#[test]
fn every_json_agent_installs_and_uninstalls_byte_exact() {
    for case in CASES {
        round_trip(case);
    }
}
