//! `mcptape install` / `uninstall` for the agents whose configs are not JSON: Codex CLI
//! (TOML, `[mcp_servers.NAME]`) and Goose (YAML, `extensions:`). Real files in the
//! test's HOME and project, in each agent's own shape (tests/fixtures/install/codex.toml,
//! goose.yaml: comments, env secrets, timeouts, unknown keys, remote entries), and the
//! real binary.

use std::ops::Range;
use std::path::Path;

use serde_json::{Map, Value, json};

use crate::install::{fixture, home, mcptape, place};
use crate::support::{Env, run, stderr, stdout};

/// One agent file: where it goes, what install wraps and skips, its secrets.
struct Case {
    agent: &'static str,
    fixture: &'static str,
    dest: &'static str,
    wrapped: &'static [&'static str],
    skipped: &'static [&'static str],
    secrets: &'static [&'static str],
}

const CODEX: Case = Case {
    agent: "codex",
    fixture: "codex.toml",
    dest: "~/.codex/config.toml",
    wrapped: &["sqlite", "memory", "github", "docs"],
    skipped: &["oauthy"],
    secrets: &["ghp_CODEXSECRET", "docs-SECRET"],
};

const CODEX_PROJECT: Case = Case {
    dest: ".codex/config.toml",
    ..CODEX
};

const GOOSE: Case = Case {
    agent: "goose",
    fixture: "goose.yaml",
    dest: "~/.config/goose/config.yaml",
    wrapped: &["github", "linear"],
    skipped: &["developer", "events"],
    secrets: &["ghp_GOOSESECRET", "lin_GOOSESECRET"],
};

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).expect("read config")
}

/// The 0-based lines of entry `name` in `text`, by the agent's own layout.
fn entry_lines(agent: &str, text: &str, name: &str) -> Range<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let trim_end = |start: usize, mut end: usize| {
        while end > start + 1 && lines[end - 1].trim().is_empty() {
            end -= 1;
        }
        start..end
    };
    if agent == "goose" {
        let head = format!("  {name}:");
        let start = lines.iter().position(|l| *l == head).expect("entry line");
        let end = (start + 1..lines.len())
            .find(|&i| {
                let l = lines[i];
                !l.trim().is_empty() && l.len() - l.trim_start().len() <= 2
            })
            .unwrap_or(lines.len());
        return trim_end(start, end);
    }
    let header = format!("[mcp_servers.{name}]");
    if let Some(start) = lines.iter().position(|l| *l == header) {
        let sub = format!("[mcp_servers.{name}.");
        let end = (start + 1..lines.len())
            .find(|&i| lines[i].starts_with('[') && !lines[i].starts_with(&sub))
            .unwrap_or(lines.len());
        return trim_end(start, end);
    }
    let inline = format!("{name} = {{");
    let dotted = format!("{name}.");
    let hits: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].starts_with(&inline) || lines[i].starts_with(&dotted))
        .collect();
    let (first, last) = (hits.first().expect("entry"), hits.last().expect("entry"));
    *first..last + 1
}

/// Checks that only the wrapped entries' lines changed between `before` and `after`.
fn only_entries_changed(case: &Case, before: &str, after: &str) {
    let allowed: Vec<Range<usize>> = case
        .wrapped
        .iter()
        .map(|n| entry_lines(case.agent, before, n))
        .collect();
    for op in similar::TextDiff::from_lines(before, after).ops() {
        if op.tag() == similar::DiffTag::Equal {
            continue;
        }
        let old = op.old_range();
        // Every changed line is an entry's; an insertion goes inside or right after one.
        let inside = old.clone().all(|i| allowed.iter().any(|r| r.contains(&i)));
        let appended = old.is_empty()
            && allowed
                .iter()
                .any(|r| r.start <= old.start && old.start <= r.end);
        assert!(
            (!old.is_empty() && inside) || appended,
            "{}: lines {old:?} changed outside the wrapped entries:\n{after}",
            case.dest
        );
    }
}

/// A TOML item as JSON, for comparing members.
fn toml_json(item: &toml_edit::Item) -> Value {
    use toml_edit::{Item, Value as V};
    fn value(v: &V) -> Value {
        match v {
            V::String(s) => json!(s.value()),
            V::Integer(i) => json!(i.value()),
            V::Float(f) => json!(f.value()),
            V::Boolean(b) => json!(b.value()),
            V::Datetime(d) => json!(d.value().to_string()),
            V::Array(a) => Value::Array(a.iter().map(value).collect()),
            V::InlineTable(t) => {
                Value::Object(t.iter().map(|(k, v)| (k.to_owned(), value(v))).collect())
            }
        }
    }
    match item {
        Item::None => Value::Null,
        Item::Value(v) => value(v),
        Item::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_owned(), toml_json(v)))
                .collect::<Map<_, _>>(),
        ),
        Item::ArrayOfTables(a) => Value::Array(
            a.iter()
                .map(|t| toml_json(&Item::Table(t.clone())))
                .collect(),
        ),
    }
}

fn codex_servers(text: &str) -> Map<String, Value> {
    let doc: toml_edit::DocumentMut = text.parse().expect("the TOML parses");
    match toml_json(doc.as_item())["mcp_servers"].clone() {
        Value::Object(m) => m,
        other => panic!("mcp_servers: {other}"),
    }
}

/// The TOML members a wrap may change.
const CODEX_WRAPPER: &[&str] = &[
    "command",
    "args",
    "env",
    "url",
    "http_headers",
    "env_http_headers",
    "env_vars",
];

fn check_codex(before: &str, after: &str) {
    let (was, now) = (codex_servers(before), codex_servers(after));
    for name in CODEX.wrapped {
        let (old, new) = (&was[*name], &now[*name]);
        for (k, v) in old.as_object().expect("entry") {
            if !CODEX_WRAPPER.contains(&k.as_str()) {
                assert_eq!(new.get(k), Some(v), "{name}.{k} was not kept");
            }
        }
        if let Some(Value::Object(env)) = old.get("env") {
            for (k, v) in env {
                assert_eq!(new["env"].get(k), Some(v), "{name}.env.{k} was not kept");
            }
        }
        assert!(
            new["command"]
                .as_str()
                .is_some_and(|c| c.contains("mcptape"))
        );
        let args: Vec<&str> = new["args"]
            .as_array()
            .expect("args")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        for secret in CODEX.secrets {
            assert!(
                !args.iter().any(|a| a.contains(secret)),
                "{secret} in argv: {args:?}"
            );
        }
        assert_eq!(&args[..3], ["proxy", "--server", name]);
    }
    // A stdio entry Codex accepts: no member of a remote one is left.
    let docs = &now["docs"];
    for gone in ["url", "http_headers", "env_http_headers"] {
        assert!(
            docs.get(gone).is_none(),
            "docs.{gone} is still there: {docs}"
        );
    }
    assert_eq!(docs["env"]["MCPTAPE_HEADER_X_API_KEY"], "docs-SECRET");
    assert_eq!(docs["env_vars"], json!(["DOCS_ORG"]));
    let args = docs["args"].to_string();
    assert!(
        args.contains("\"--url\",\"https://docs.example.com/mcp\""),
        "{args}"
    );
    assert!(
        args.contains("\"X-Api-Key=MCPTAPE_HEADER_X_API_KEY\""),
        "{args}"
    );
    assert!(args.contains("\"X-Org=DOCS_ORG\""), "{args}");
    assert_eq!(was["oauthy"], now["oauthy"]);
    // Comments and the file's own formatting outside the entries.
    for kept in [
        "# Codex CLI settings, edited by hand.\n",
        "approval_policy = \"on-request\"   # ask before running commands\n",
        "# GitHub's reference server\n",
        "future_knob = { level = 3 }  # a key Codex may add later\n",
        "[profiles.fast]\nmodel = \"o4-mini\"\n",
    ] {
        assert!(after.contains(kept), "lost {kept:?}:\n{after}");
    }
    // Each entry keeps its own style: dotted keys stay dotted, inline stays inline,
    // the multi-line array stays multi-line, literal strings stay literal.
    assert!(after.contains("memory.command = '"), "{after}");
    assert!(after.contains("memory.args = ['proxy', '--server', 'memory', '--', 'npx', '-y', '@modelcontextprotocol/server-memory']\n"), "{after}");
    assert!(after.contains("sqlite = { command = \""), "{after}");
    assert!(
        after.contains("args = [\n    \"proxy\",\n    \"--server\",\n    \"github\",\n"),
        "{after}"
    );
}

/// The YAML lines a wrap may change or remove (trimmed starts).
const GOOSE_WRAPPER: &[&str] = &[
    "cmd:",
    "args:",
    "- ",
    "type:",
    "uri:",
    "headers:",
    "Authorization:",
    "envs:",
];

fn check_goose(before: &str, after: &str) {
    for op in similar::TextDiff::from_lines(before, after).ops() {
        for line in &before.lines().collect::<Vec<_>>()[op.old_range()] {
            if op.tag() == similar::DiffTag::Equal {
                continue;
            }
            let t = line.trim_start();
            assert!(
                GOOSE_WRAPPER.iter().any(|w| t.starts_with(w)),
                "a line that is not the wrapper's changed: {line:?}\n{after}"
            );
        }
    }
    for line in after.lines() {
        let t = line.trim_start();
        for secret in GOOSE.secrets {
            if line.contains(secret) {
                assert!(
                    !t.starts_with("- ") && !t.starts_with("args:"),
                    "{secret} in argv: {line}"
                );
            }
        }
    }
    for kept in [
        "# Goose configuration (edited by hand as well as by `goose configure`)\n",
        "    # GitHub's reference server\n",
        "      GITHUB_PERSONAL_ACCESS_TOKEN: ghp_GOOSESECRET\n",
        "    future_knob: {level: 3}\n",
        "    description: Linear issues\n",
        "    enabled: false\n    timeout: 120\n",
        "GOOSE_MODE: smart_approve   # trailing comment\n",
        "    - -y\n    - '@modelcontextprotocol/server-github'\n",
    ] {
        assert!(after.contains(kept), "lost {kept:?}:\n{after}");
    }
    // The remote extension is a stdio front with its header in `envs`.
    assert!(
        after.contains("    type: stdio\n    name: linear\n"),
        "{after}"
    );
    assert!(
        after.contains("    envs: {MCPTAPE_HEADER_AUTHORIZATION: Bearer lin_GOOSESECRET}\n"),
        "{after}"
    );
    assert!(
        !after.contains("uri: https://mcp.linear.example/mcp"),
        "{after}"
    );
    assert!(after.contains("    - --url\n    - https://mcp.linear.example/mcp\n    - --header-env\n    - Authorization=MCPTAPE_HEADER_AUTHORIZATION\n"), "{after}");
    // The github extension: `cmd` is the launcher, `args` a block sequence as before.
    assert!(
        after.contains(
            "    args:\n    - proxy\n    - --server\n    - github\n    - --\n    - npx\n    - -y\n"
        ),
        "{after}"
    );
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
    assert!(diff.contains("--- a/") && diff.contains("+++ b/"), "{diff}");
    assert_eq!(read(&path), before, "--dry-run wrote");

    let out = run(mcptape(&env, &["install", "--agent", case.agent]));
    assert!(out.status.success(), "{}", stderr(&out));
    for name in case.skipped {
        assert!(
            stderr(&out).contains(&format!("warning: {name} ")),
            "{}",
            stderr(&out)
        );
    }
    let after = read(&path);
    assert_ne!(after, before, "{}: nothing changed", case.dest);
    only_entries_changed(case, &before, &after);
    match case.agent {
        "codex" => check_codex(&before, &after),
        _ => check_goose(&before, &after),
    }
    // The dry run showed exactly what install then wrote.
    for line in similar::TextDiff::from_lines(&before, &after)
        .unified_diff()
        .to_string()
        .lines()
        .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
    {
        assert!(diff.contains(line), "the dry run lacked {line:?}:\n{diff}");
    }

    let out = run(mcptape(&env, &["install", "--agent", case.agent]));
    assert!(
        out.status.success() && stderr(&out).contains("nothing to change"),
        "{}",
        stderr(&out)
    );
    assert_eq!(read(&path), after, "a second install changed the file");

    let out = run(mcptape(&env, &["uninstall", "--agent", case.agent]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(read(&path), before, "{}: not byte-identical", case.dest);
}

#[test]
fn codex_config_toml_installs_and_uninstalls_byte_exact() {
    round_trip(&CODEX);
    round_trip(&CODEX_PROJECT);
}

#[test]
fn goose_config_yaml_installs_and_uninstalls_byte_exact() {
    round_trip(&GOOSE);
}

#[test]
fn codex_home_and_xdg_config_home_are_honoured() {
    let env = Env::new();
    let codex = env.dir.path().join("elsewhere/codex");
    let xdg = env.dir.path().join("elsewhere/xdg");
    for (dir, file, text) in [
        (
            &codex,
            "config.toml",
            "[mcp_servers.a]\ncommand = \"srv\"\n",
        ),
        (
            &xdg,
            "goose/config.yaml",
            "extensions:\n  b:\n    type: stdio\n    cmd: srv\n    args: []\n",
        ),
    ] {
        let path = dir.join(file);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
    }
    let out = run(mcptape(
        &env,
        &["install", "--list", "--agent", "codex", "--agent", "goose"],
    )
    .env("CODEX_HOME", &codex)
    .env("XDG_CONFIG_HOME", &xdg));
    assert!(out.status.success(), "{}", stderr(&out));
    let table = stdout(&out);
    let rows: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert!(
        rows.iter()
            .any(|r| r.len() == 5 && r[0] == "codex" && r[3] == "a" && r[4] == "no"),
        "{table}"
    );
    assert!(
        rows.iter()
            .any(|r| r.len() == 5 && r[0] == "goose" && r[3] == "b" && r[4] == "no"),
        "{table}"
    );
    let out = run(
        mcptape(&env, &["install", "--agent", "codex", "--agent", "goose"])
            .env("CODEX_HOME", &codex)
            .env("XDG_CONFIG_HOME", &xdg),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        read(&codex.join("config.toml"))
            .contains("args = [\"proxy\", \"--server\", \"a\", \"--\", \"srv\"]\n")
    );
    assert!(read(&xdg.join("goose/config.yaml")).contains("    cmd: "));
    assert!(
        !home(&env).join(".codex").exists(),
        "the default place was used"
    );
    let out =
        run(mcptape(&env, &["install", "--list", "--agent", "codex"]).env("CODEX_HOME", &codex));
    assert!(
        stdout(&out)
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()
                == [
                    "codex",
                    "user",
                    &codex.join("config.toml").display().to_string(),
                    "a",
                    "yes"
                ]),
        "{}",
        stdout(&out)
    );
}

#[test]
fn broken_and_unsupported_files_are_errors_naming_file_and_line_and_change_nothing() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "codex",
            "~/.codex/config.toml",
            "[mcp_servers.a]\ncommand = \"srv\"\nargs = [\"x\n",
        ),
        ("codex", "~/.codex/config.toml", "model = 1\nmodel = 2\n"),
        (
            "goose",
            "~/.config/goose/config.yaml",
            "extensions:\n  a:\n    cmd: x\n   args: [\n",
        ),
        (
            "goose",
            "~/.config/goose/config.yaml",
            "extensions:\n  a: {cmd: x}\n---\nother: 1\n",
        ),
    ];
    for (agent, dest, text) in cases {
        let env = Env::new();
        let path = place(&env, dest, text);
        let out = run(mcptape(&env, &["install", "--agent", agent]));
        assert_eq!(out.status.code(), Some(2), "{text:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(&path.display().to_string()), "{err}");
        assert!(err.contains("line "), "{err}");
        assert_eq!(read(&path), *text, "a broken file was changed");
        assert!(!err.contains("panicked"), "{err}");
    }
    // Nesting and aliases past what a config needs are refused, not followed.
    let deep = format!(
        "extensions:\n  a: {}{}\n",
        "[".repeat(20_000),
        "]".repeat(20_000)
    );
    let mut bomb = String::from("x0: &x0 [a, a, a, a, a, a, a, a, a, a]\n");
    for i in 1..10 {
        bomb.push_str(&format!(
            "x{i}: &x{i} [{}]\n",
            vec![format!("*x{}", i - 1); 10].join(", ")
        ));
    }
    bomb.push_str("extensions:\n  a: *x9\n");
    let alias = "base: &b {type: stdio, cmd: srv, args: []}\nextensions:\n  a: *b\n";
    let deep_toml = format!(
        "[mcp_servers.a]\ncommand = \"x\"\nargs = {}{}\n",
        "[".repeat(20_000),
        "]".repeat(20_000)
    );
    for (agent, dest, text) in [
        ("goose", "~/.config/goose/config.yaml", deep.as_str()),
        ("goose", "~/.config/goose/config.yaml", bomb.as_str()),
        ("goose", "~/.config/goose/config.yaml", alias),
        ("codex", "~/.codex/config.toml", deep_toml.as_str()),
    ] {
        let env = Env::new();
        let path = place(&env, dest, text);
        let out = run(mcptape(&env, &["install", "--agent", agent]));
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains(&path.display().to_string()),
            "{}",
            stderr(&out)
        );
        assert_eq!(read(&path), text, "an unsupported file was changed");
    }
}
