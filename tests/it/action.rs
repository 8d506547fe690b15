//! The GitHub Action (action.yml): its YAML, read by PyYAML, and its shell steps run as
//! the runner runs them (each step's `run` under bash, its `env` and `working-directory`
//! with the `${{ inputs.* }}` expressions filled in from the inputs or their defaults),
//! with the test's mcptape on PATH (`install: none`), against tapes recorded here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::precommit::yaml;
use crate::support::*;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn action() -> Value {
    yaml(&root().join("action.yml"))
}

/// `${{ inputs.NAME }}` → the value; any other expression fails the test (the runner
/// would evaluate it, this harness cannot).
fn fill(template: &str, inputs: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("}}").expect("an expression's end") + start;
        let expr = rest[start + 3..end].trim();
        let name = expr
            .strip_prefix("inputs.")
            .unwrap_or_else(|| panic!("action.yml uses `{expr}`: only inputs.* is tested"));
        out.push_str(
            inputs
                .get(name)
                .unwrap_or_else(|| panic!("no input `{name}` is declared")),
        );
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out
}

/// Runs the action's steps in order with these inputs (the others at their defaults),
/// stopping at the first failing step, as a runner does. `PATH` has the test's binaries
/// (mcptape, the example server and client) before `path_tail`.
pub(crate) fn run_action(env: &Env, given: &[(&str, &str)]) -> Output {
    let path_tail = std::env::var("PATH").unwrap_or_default();
    let action = action();
    let mut inputs = BTreeMap::new();
    for (name, spec) in action["inputs"].as_object().expect("inputs") {
        let default = match &spec["default"] {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        };
        inputs.insert(name.clone(), default);
    }
    for (name, value) in given {
        assert!(
            inputs.contains_key(*name),
            "no input `{name}` in action.yml"
        );
        inputs.insert((*name).to_owned(), (*value).to_owned());
    }
    assert_eq!(action["runs"]["using"], "composite");
    let bin_dir = bin().parent().expect("bin dir").to_path_buf();
    let mut all = Output {
        status: std::process::ExitStatus::default(),
        stdout: Vec::new(),
        stderr: Vec::new(),
    };
    for step in action["runs"]["steps"].as_array().expect("steps") {
        assert_eq!(step["shell"], "bash", "{step}");
        assert!(
            step.get("if").is_none(),
            "a condition this harness cannot run: {step}"
        );
        let script = fill(step["run"].as_str().expect("run"), &inputs);
        let mut cmd = env.cmd("bash");
        cmd.args(["-e", "-c", &script])
            .env("GITHUB_ACTION_PATH", root())
            .env(
                "PATH",
                format!(
                    "{}:{}:{path_tail}",
                    bin_dir.display(),
                    bin_dir.join("examples").display()
                ),
            );
        if let Some(dir) = step["working-directory"].as_str() {
            cmd.current_dir(env.dir.path().join(fill(dir, &inputs)));
        }
        for (name, value) in step["env"].as_object().into_iter().flatten() {
            cmd.env(name, fill(value.as_str().expect("env value"), &inputs));
        }
        let out = run(cmd);
        all.stdout.extend_from_slice(&out.stdout);
        all.stderr.extend_from_slice(&out.stderr);
        all.status = out.status;
        if !out.status.success() {
            break;
        }
    }
    all
}

/// Records session `fx`: the example client against the example server, behind mcptape.
pub(crate) fn record_fixture(env: &Env) {
    let client = bin()
        .parent()
        .expect("bin dir")
        .join("examples/example-client");
    let out = run(env
        .mcptape(["record", "fx", "--"])
        .arg(client)
        .arg("--")
        .args(proxy_argv("example", &[example_server()])));
    assert!(out.status.success(), "{}", text(&out));
}

/// mcptape from PATH, plain text reports.
pub(crate) const PLAIN: [(&str, &str); 2] = [("install", "none"), ("annotations", "false")];

pub(crate) fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_action_declares_its_inputs_and_installs_the_version_of_this_checkout() {
    let action = action();
    let inputs = action["inputs"].as_object().expect("inputs");
    let names: Vec<&str> = inputs.keys().map(String::as_str).collect();
    for name in [
        "replay",
        "verify",
        "redact-check",
        "install",
        "version",
        "annotations",
        "working-directory",
    ] {
        assert!(inputs.contains_key(name), "{names:?}");
        assert!(inputs[name]["description"].is_string(), "{name}");
    }
    // In lockstep: the action at a release tag installs that release.
    assert_eq!(inputs["version"]["default"], env!("CARGO_PKG_VERSION"));
    assert_eq!(inputs["install"]["default"], "npm");
    assert_eq!(inputs["annotations"]["default"], "true");
}

#[test]
fn the_action_replays_a_client_fixture_and_fails_the_job_when_the_client_changed() {
    let env = Env::new();
    record_fixture(&env);
    let proxy = format!("mcptape proxy --server example -- {}", example_server());
    let same = format!("fx -- example-client -- {proxy}");
    let out = run_action(&env, &[PLAIN[0], PLAIN[1], ("replay", &same)]);
    assert!(out.status.success(), "{}", text(&out));
    let shown = stdout(&out);
    assert!(
        shown.contains(&format!("::group::mcptape replay {same}\n")),
        "{shown}"
    );
    assert!(
        shown.contains("mcptape 0."),
        "the install step shows the version: {shown}"
    );

    // A client that now makes more calls than the fixture holds: replay fails, so does
    // the job, with replay's status.
    let more = format!("fx -- example-client --calls 3 -- {proxy}");
    let out = run_action(&env, &[PLAIN[0], PLAIN[1], ("replay", &more)]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(
        stdout(&out).contains("::error title=mcptape replay::`mcptape replay fx"),
        "{}",
        text(&out)
    );
}

#[test]
fn the_action_verifies_a_server_and_fails_on_a_changed_answer() {
    let env = Env::new();
    record_fixture(&env);
    let same = format!("fx -- {}", example_server());
    let out = run_action(&env, &[PLAIN[0], PLAIN[1], ("verify", &same)]);
    assert!(out.status.success(), "{}", text(&out));

    let drift = format!("fx -- {} --drift", example_server());
    let out = run_action(&env, &[PLAIN[0], PLAIN[1], ("verify", &drift)]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
}

#[test]
fn the_action_checks_committed_tapes_by_glob_in_its_working_directory() {
    let env = Env::new();
    record_fixture(&env);
    let tapes = env.path("project/recordings/client");
    std::fs::create_dir_all(&tapes).expect("dirs");
    std::fs::copy(env.tape("fx"), tapes.join("clean.ndjson")).expect("copy");
    let given = [
        PLAIN[0],
        PLAIN[1],
        ("redact-check", "recordings/**/*.ndjson"),
        ("working-directory", "project"),
    ];
    let out = run_action(&env, &given);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stdout(&out).contains("::group::mcptape redact --check recordings/client/clean.ndjson\n"),
        "the glob reached mcptape expanded: {}",
        text(&out)
    );

    let key = format!(
        "sk-proj-{}",
        fake("abcdefghijklmnopqrstuvwxyz0123456789", 28, 3)
    );
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"{key}"}}}},"_meta":{{"dir":"send","server":"example","ts":"2026-11-30T04:35:01.266Z","conn":"c9"}}}}"#
    );
    std::fs::write(tapes.join("dirty.ndjson"), format!("{line}\n")).expect("write");
    let out = run_action(&env, &given);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        stdout(&out).contains("recordings/client/dirty.ndjson:1: params.arguments.message"),
        "{}",
        text(&out)
    );
}

/// Annotations are on by default: every command gets `--format github`.
#[test]
fn the_action_passes_format_github_unless_annotations_are_off() {
    let env = Env::new();
    record_fixture(&env);
    std::fs::copy(env.tape("fx"), env.path("fx.ndjson")).expect("copy");
    let verify = format!("fx -- {}", example_server());
    let given = [
        ("install", "none"),
        ("redact-check", "fx.ndjson"),
        (
            "replay",
            "fx -- example-client -- mcptape proxy --server example -- x",
        ),
        ("verify", &verify),
    ];
    let out = run_action(&env, &given);
    let shown = stdout(&out);
    for command in [
        "::group::mcptape redact --check --format github fx.ndjson\n",
        "::group::mcptape replay --format github fx -- ",
        "::group::mcptape verify --format github fx -- ",
    ] {
        assert!(shown.contains(command), "{command}: {}", text(&out));
    }
    assert!(out.status.success(), "{}", text(&out));

    // A changed answer is an annotation at the tape's line, and fails the job.
    let drift = format!("fx -- {} --drift", example_server());
    let out = run_action(&env, &[("install", "none"), ("verify", &drift)]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let shown = stdout(&out);
    assert!(
        shown
            .lines()
            .any(|l| l.starts_with("::error file=")
                && l.contains(",title=mcptape verify%3A changed::")),
        "{}",
        text(&out)
    );
}

#[test]
fn the_action_fails_clearly_without_anything_to_run_or_a_way_to_install() {
    let env = Env::new();
    let out = run_action(&env, &[("install", "none")]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stdout(&out).contains("::error title=mcptape action::nothing to run"),
        "{}",
        text(&out)
    );

    let out = run_action(&env, &[("install", "brew"), ("verify", "x")]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stdout(&out).contains("the input `install` is `brew`: use npm, cargo or none"),
        "{}",
        text(&out)
    );

    // `none` with no mcptape on PATH: said so, before anything runs.
    let empty = env.path("empty-bin");
    std::fs::create_dir_all(&empty).expect("dir");
    let out = run_bare(&env, &empty);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stdout(&out).contains("mcptape is not on PATH after install `none`"),
        "{}",
        text(&out)
    );
}

/// The install step alone with a PATH that has no mcptape.
fn run_bare(env: &Env, path: &Path) -> Output {
    let mut cmd: Command = env.cmd("/bin/bash");
    cmd.arg(root().join("packaging/action/install"))
        .env("PATH", format!("{}:/usr/bin:/bin", path.display()))
        .env("INPUT_INSTALL", "none")
        .env("INPUT_VERSION", env!("CARGO_PKG_VERSION"));
    run(cmd)
}
