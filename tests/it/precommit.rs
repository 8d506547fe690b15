//! The pre-commit hook (.pre-commit-hooks.yaml), run by the real `pre-commit` (pinned in
//! tests/peers/requirements.txt) with `try-repo` of this checkout, inside temporary git
//! repositories: offline (PRE_COMMIT_HOME in the temp dir, a local repository, a
//! `language: system` hook that finds the test's mcptape on PATH).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::support::*;

/// The hook that can run here (the `language: rust` one builds mcptape with cargo).
const HOOK: &str = "mcptape-redact-check";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A tape line: one message and its `_meta`.
fn entry(id: u64, message: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"{message}"}}}},"_meta":{{"dir":"send","server":"example","ts":"2026-11-30T04:35:01.266Z","conn":"c1"}}}}"#
    )
}

/// An OpenAI-shaped key, generated so that this file holds no secret-shaped literal.
fn key() -> String {
    format!(
        "sk-proj-{}",
        fake("abcdefghijklmnopqrstuvwxyz0123456789", 28, 7)
    )
}

/// A command with git's identity and pre-commit's home inside the temp dir.
fn cmd(env: &Env, program: impl AsRef<std::ffi::OsStr>, dir: &Path) -> Command {
    let mut cmd = env.cmd(program);
    let path = format!(
        "{}:{}",
        bin().parent().expect("bin dir").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    cmd.current_dir(dir)
        .env("PATH", path)
        .env("PRE_COMMIT_HOME", env.path("pre-commit-home"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid");
    cmd
}

/// A git repository holding these files, all added.
fn repository(env: &Env, files: &[(&str, String)]) -> PathBuf {
    let dir = env.path("repo");
    std::fs::create_dir_all(&dir).expect("repo dir");
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
        std::fs::write(path, text).expect("write");
    }
    for args in [&["init", "-q"][..], &["add", "."][..]] {
        let out = run(cmd(env, "git", &dir).args(args));
        assert!(out.status.success(), "git {args:?}: {}", text(&out));
    }
    dir
}

/// `pre-commit try-repo <this checkout> mcptape-redact-check --all-files`.
fn try_repo(env: &Env, repo: &Path) -> Output {
    let pre_commit = root().join(".venv/bin/pre-commit");
    assert!(
        pre_commit.exists(),
        "{} is missing: run tests/peers/install",
        pre_commit.display()
    );
    let mut cmd = cmd(env, pre_commit, repo);
    cmd.arg("try-repo")
        .arg(root())
        .args([HOOK, "--all-files", "--color", "never"]);
    run(cmd)
}

#[test]
fn the_hook_fails_on_a_committed_tape_with_a_secret_naming_file_and_line() {
    let env = Env::new();
    let tape = [entry(1, "hello"), entry(2, &format!("key {}", key()))].join("\n") + "\n";
    let repo = repository(&env, &[("recordings/dirty.ndjson", tape)]);
    let out = try_repo(&env, &repo);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("recordings/dirty.ndjson:2: params.arguments.message (OpenAI key)"),
        "{}",
        text(&out)
    );
    assert!(shown.contains("Failed"), "{}", text(&out));
    assert!(
        shown.contains(&format!("- hook id: {HOOK}")),
        "{}",
        text(&out)
    );
}

#[test]
fn the_hook_passes_clean_tapes_and_looks_at_no_other_file() {
    let env = Env::new();
    let clean = [entry(1, "hello"), entry(2, "[REDACTED]")].join("\n") + "\n";
    let repo = repository(
        &env,
        &[
            ("recordings/clean.ndjson", clean),
            // Not a tape: the hook's `files` pattern keeps it out.
            ("notes.txt", format!("key {}\n", key())),
        ],
    );
    let out = try_repo(&env, &repo);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("mcptape redact --check") && shown.contains("Passed"),
        "{}",
        text(&out)
    );
}

/// Both hooks parse as pre-commit reads them: the same `entry`, on tapes only.
#[test]
fn the_hook_manifest_offers_a_path_hook_and_a_cargo_hook() {
    let manifest = yaml(&root().join(".pre-commit-hooks.yaml"));
    let hooks = manifest.as_array().expect("a list of hooks");
    let ids: Vec<&str> = hooks.iter().filter_map(|h| h["id"].as_str()).collect();
    assert_eq!(ids, [HOOK, "mcptape-redact-check-cargo"]);
    for (hook, language) in hooks.iter().zip(["system", "rust"]) {
        assert_eq!(hook["entry"], "mcptape redact --check", "{hook}");
        assert_eq!(hook["language"], language, "{hook}");
        assert_eq!(hook["files"], "\\.ndjson$", "{hook}");
    }
    let out = run(Command::new(root().join(".venv/bin/pre-commit"))
        .args(["validate-manifest"])
        .arg(root().join(".pre-commit-hooks.yaml")));
    assert!(out.status.success(), "{}", text(&out));
}

/// A YAML file as JSON, read by PyYAML from the checkout's venv.
pub fn yaml(path: &Path) -> Value {
    let out = run(Command::new(python())
        .args([
            "-c",
            "import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))",
        ])
        .arg(path));
    assert!(out.status.success(), "{}", text(&out));
    serde_json::from_slice(&out.stdout).expect("JSON")
}
