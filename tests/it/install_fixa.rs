//! `install`/`uninstall` against what reviewers found: an install record edited by hand,
//! a file both scopes name, records of deep entries, and the install report's edges.

use crate::install::{mcptape, parse, place};
use crate::support::{Env, run, stderr};

const CURSOR: &str = "~/.cursor/mcp.json";

fn read(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).expect("read")
}

/// The one install record under `$MCPTAPE_HOME/backups`.
fn record_path(env: &Env) -> std::path::PathBuf {
    std::fs::read_dir(env.mcptape_home().join("backups"))
        .expect("backups")
        .map(|e| e.expect("entry").path())
        .find(|p| p.to_string_lossy().ends_with(".install.json"))
        .expect("an install record")
}

#[test]
fn an_edited_install_record_never_corrupts_the_file_or_injects_a_server() {
    let env = Env::new();
    let before =
        r#"{"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}, "c": {"command": "z"}}}"#;
    let path = place(&env, CURSOR, before);
    assert!(
        run(mcptape(&env, &["install", "--agent", "cursor"]))
            .status
            .success()
    );
    let installed = read(&path);
    let rec = record_path(&env);
    let mut record: serde_json::Value = serde_json::from_str(&read(&rec)).expect("record");
    for e in record["entries"].as_array_mut().expect("entries") {
        let name = e["path"][1].as_str().expect("name").to_owned();
        match name.as_str() {
            "a" => e["original"] = r#"{"command": "x" /* unterminated"#.into(),
            "b" => e["original"] = r#"{"command": "y"}, "injected": {"command": "evil"}"#.into(),
            _ => {}
        }
    }
    std::fs::write(&rec, serde_json::to_string(&record).expect("json")).expect("edit record");
    let out = run(mcptape(&env, &["uninstall", "--agent", "cursor"]));
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    for name in ["a", "b"] {
        assert!(
            err.contains(&format!(
                "warning: {name} (user): skipped: its install record"
            )),
            "{err}"
        );
    }
    assert!(err.contains("c (user): restored"), "{err}");
    let now = parse(&read(&path));
    let servers = now["mcpServers"].as_object().expect("servers");
    assert_eq!(servers.len(), 3, "{now}");
    assert_eq!(now["mcpServers"]["c"], serde_json::json!({"command": "z"}));
    assert_eq!(now["mcpServers"]["a"], parse(&installed)["mcpServers"]["a"]);
    assert_eq!(now["mcpServers"]["b"], parse(&installed)["mcpServers"]["b"]);
}

#[test]
fn from_home_one_file_both_scopes_name_is_one_plan_shown_as_user() {
    let env = Env::new();
    let before = r#"{"mcpServers": {"a": {"command": "x"}}}"#;
    let cursor = place(&env, CURSOR, before);
    let gemini = place(&env, "~/.gemini/settings.json", before);
    let home = std::fs::canonicalize(crate::install::home(&env)).expect("home");
    let at_home = |args: &[&str]| {
        let mut cmd = mcptape(&env, args);
        cmd.current_dir(&home);
        run(cmd)
    };
    let list = at_home(&[
        "install", "--agent", "cursor", "--agent", "gemini", "--list",
    ]);
    assert!(list.status.success(), "{}", stderr(&list));
    let table = crate::support::stdout(&list);
    assert_eq!(
        table.matches(" a ").count() + table.matches(" a\n").count(),
        2,
        "{table}"
    );
    assert!(!table.contains("project"), "{table}");
    let out = at_home(&["install", "--agent", "cursor", "--agent", "gemini"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stderr(&out).matches("a (user): wrapped").count(),
        2,
        "{}",
        stderr(&out)
    );
    let out = at_home(&["uninstall", "--agent", "cursor", "--agent", "gemini"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(read(&cursor), before);
    assert_eq!(read(&gemini), before);
}

#[test]
fn an_entry_too_deep_for_the_install_record_is_skipped_and_the_rest_still_uninstalls() {
    let env = Env::new();
    let deep = format!("{}1{}", "[".repeat(199), "]".repeat(199));
    let before = format!(
        r#"{{"mcpServers": {{"deep": {{"command": "x", "extra": {deep}}}, "b": {{"command": "y"}}}}}}"#
    );
    let path = place(&env, CURSOR, &before);
    let out = run(mcptape(&env, &["install", "--agent", "cursor"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("deep (user): skipped: nested deeper than 120 levels"),
        "{}",
        stderr(&out)
    );
    for verb in ["install", "uninstall"] {
        let out = run(mcptape(&env, &[verb, "--agent", "cursor"]));
        assert!(out.status.success(), "{verb}: {}", stderr(&out));
    }
    assert_eq!(read(&path), before);
}

#[test]
fn a_codex_entry_with_header_subtables_installs_without_blank_runs_and_uninstalls_byte_identical() {
    let env = Env::new();
    let before = crate::install::fixture(&env, "codex-headers.toml");
    let path = place(&env, "~/.codex/config.toml", &before);
    let out = run(mcptape(&env, &["install", "--agent", "codex"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let after = read(&path);
    assert!(
        after.contains("X-Api-Key=MCPTAPE_HEADER_X_API_KEY"),
        "{after}"
    );
    assert!(
        !after.contains("\n\n\n") && !after.ends_with("\n\n"),
        "{after:?}"
    );
    assert!(!after.contains("http_headers"), "{after}");
    let out = run(mcptape(&env, &["uninstall", "--agent", "codex"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(read(&path), before);
}

#[test]
fn a_closed_stderr_loses_the_install_report_but_never_panics() {
    let env = Env::new();
    let before = r#"{"mcpServers": {"a": {"command": "x"}}}"#;
    let path = place(&env, CURSOR, before);
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let mut cmd = mcptape(&env, &["install", "--agent", "cursor"]);
    cmd.stderr(writer).stdout(std::process::Stdio::null());
    let status = cmd.status().expect("run mcptape");
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert!(read(&path).contains("proxy"), "the install was not done");
}

#[test]
fn a_backups_dir_every_user_may_write_to_is_refused_and_nothing_changes() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let before = r#"{"mcpServers": {"a": {"command": "x"}}}"#;
    let path = place(&env, CURSOR, before);
    let backups = env.mcptape_home().join("backups");
    std::fs::create_dir_all(&backups).expect("mkdir");
    std::fs::set_permissions(&backups, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let out = run(mcptape(&env, &["install", "--agent", "cursor"]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("writable by every user"),
        "{}",
        stderr(&out)
    );
    assert_eq!(read(&path), before);
    assert_eq!(std::fs::read_dir(&backups).expect("ls").count(), 0);
}

#[test]
fn a_file_that_does_not_parse_is_said_once_and_a_bom_is_named() {
    let env = Env::new();
    let before = "\u{feff}{\"mcpServers\": {\"a\": {\"command\": \"x\"}}}";
    let path = place(&env, CURSOR, before);
    let out = run(mcptape(&env, &["install", "--agent", "cursor"]));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("line 1, column 1: the file opens with a byte-order mark"),
        "{err}"
    );
    assert!(!err.contains("caused by"), "said twice: {err}");
    assert_eq!(read(&path), before);
}

#[test]
fn a_dry_run_says_would_and_a_list_with_no_entry_says_so() {
    let env = Env::new();
    let before = r#"{"mcpServers": {"a": {"command": "x"}}}"#;
    place(&env, CURSOR, before);
    let out = run(mcptape(
        &env,
        &["install", "--agent", "cursor", "--dry-run"],
    ));
    assert!(
        stderr(&out).contains("a (user): would wrap"),
        "{}",
        stderr(&out)
    );
    assert!(
        run(mcptape(&env, &["install", "--agent", "cursor"]))
            .status
            .success()
    );
    let out = run(mcptape(
        &env,
        &["uninstall", "--agent", "cursor", "--dry-run"],
    ));
    assert!(
        stderr(&out).contains("a (user): would restore"),
        "{}",
        stderr(&out)
    );
    // A file of the agent, but no entry in the chosen scope: said, not an empty table.
    place(&env, "~/.claude.json", before);
    let out = run(mcptape(
        &env,
        &[
            "install",
            "--agent",
            "claude-code",
            "--scope",
            "project",
            "--list",
        ],
    ));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(crate::support::stdout(&out), "");
    assert!(
        stderr(&out).contains("install --list: no server entry"),
        "{}",
        stderr(&out)
    );
}
