//! `install`/`uninstall` when things are not as expected: an entry edited since install,
//! a wrapper with no record, symlinks, broken or odd files, a backup that cannot be made,
//! and the filters, `--list` and `CLAUDE_CONFIG_DIR`.

use std::os::unix::fs::PermissionsExt;

use crate::install::{dest_path, fixture, home, mcptape, parse, place, project};
use crate::support::{Env, run, stderr, stdout};

const CURSOR: &str = "~/.cursor/mcp.json";

fn read(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).expect("read")
}

#[test]
fn an_entry_edited_after_install_is_left_alone_with_a_warning() {
    let env = Env::new();
    let before = fixture(&env, "cursor.json");
    let path = place(&env, CURSOR, &before);
    assert!(
        run(mcptape(&env, &["install", "--agent", "cursor"]))
            .status
            .success()
    );
    // The user changes the wrapped sentry entry's wrapper (a new server version).
    let edited = read(&path).replace("@sentry/mcp-server\"", "@sentry/mcp-server@2\"");
    assert_ne!(edited, read(&path));
    std::fs::write(&path, &edited).expect("edit");
    let out = run(mcptape(&env, &["uninstall", "--agent", "cursor"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("warning: sentry") && err.contains("edited since install"),
        "{err}"
    );
    let now = parse(&read(&path));
    let sentry = now["mcpServers"]["sentry"]["args"].to_string();
    assert!(
        sentry.contains("@sentry/mcp-server@2") && sentry.contains("proxy"),
        "{sentry}"
    );
    // The other entry is restored exactly.
    assert_eq!(
        now["mcpServers"]["context7"],
        parse(&before)["mcpServers"]["context7"]
    );
}

#[test]
fn a_reserialized_file_still_uninstalls_and_a_wrapper_without_record_is_unwrapped() {
    let env = Env::new();
    let before = fixture(&env, "mcp.json");
    let path = place(&env, ".mcp.json", &before);
    assert!(
        run(mcptape(&env, &["install", "--agent", "claude-code"]))
            .status
            .success()
    );
    // An agent rewrites the file in its own layout: same values, other bytes.
    let compact = serde_json::to_string(&parse(&read(&path))).expect("json");
    std::fs::write(&path, &compact).expect("rewrite");
    let out = run(mcptape(&env, &["uninstall", "--agent", "claude-code"]));
    assert!(
        out.status.success() && stderr(&out).contains("fs (project): restored"),
        "{}",
        stderr(&out)
    );
    assert_eq!(parse(&read(&path)), parse(&before));

    // Without a record (backups gone), the original command is read from the wrapper.
    std::fs::write(&path, &before).expect("reset");
    assert!(
        run(mcptape(&env, &["install", "--agent", "claude-code"]))
            .status
            .success()
    );
    std::fs::remove_dir_all(env.mcptape_home().join("backups")).expect("rm backups");
    let out = run(mcptape(&env, &["uninstall", "--agent", "claude-code"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("unwrapped: note: no install record"),
        "{}",
        stderr(&out)
    );
    assert_eq!(parse(&read(&path)), parse(&before));
}

#[test]
fn a_symlinked_config_is_refused_and_left_as_it_was() {
    let env = Env::new();
    let target = env.path("real-mcp.json");
    let text = fixture(&env, "cursor.json");
    std::fs::write(&target, &text).expect("write");
    let link = dest_path(&env, CURSOR);
    std::fs::create_dir_all(link.parent().expect("dir")).expect("mkdir");
    std::os::unix::fs::symlink(&target, &link).expect("symlink");
    let out = run(mcptape(&env, &["install", "--agent", "cursor"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("symbolic link") && stderr(&out).contains("mcp.json"),
        "{}",
        stderr(&out)
    );
    assert_eq!(read(&target), text);
    assert!(
        std::fs::symlink_metadata(&link)
            .expect("link")
            .file_type()
            .is_symlink()
    );
}

#[test]
fn broken_and_odd_files_are_errors_naming_the_file_and_change_nothing() {
    let env = Env::new();
    let broken = "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"\n  }\n";
    let path = place(&env, CURSOR, broken);
    let out = run(mcptape(&env, &["install", "--agent", "cursor"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(".cursor/mcp.json") && err.contains("line "),
        "{err}"
    );
    assert_eq!(read(&path), broken);

    for (text, says) in [
        (
            "{\"mcpServers\": {\"a\": \"npx srv\"}}",
            "server `a` is not an object",
        ),
        ("{\"mcpServers\": [1]}", "`mcpServers` is not an object"),
        ("[]", "top level"),
    ] {
        std::fs::write(&path, text).expect("write");
        let out = run(mcptape(&env, &["install", "--agent", "cursor"]));
        assert_eq!(out.status.code(), Some(2), "{text}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{text}: {}", stderr(&out));
        assert_eq!(read(&path), text);
    }
    let deep = format!(
        "{{\"mcpServers\": {{\"a\": {{\"x\": {}{}}}}}}}",
        "[".repeat(50_000),
        "]".repeat(50_000)
    );
    std::fs::write(&path, &deep).expect("write");
    let out = run(mcptape(&env, &["install", "--agent", "cursor"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("nesting depth"), "{}", stderr(&out));
    assert_eq!(read(&path), deep);
}

#[test]
fn a_backup_that_cannot_be_written_aborts_the_install() {
    let env = Env::new();
    let text = fixture(&env, "cursor.json");
    let path = place(&env, CURSOR, &text);
    // The backups directory is a symbolic link (to a directory someone else may read).
    let elsewhere = env.path("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("mkdir");
    std::fs::create_dir_all(env.mcptape_home()).expect("mkdir");
    std::os::unix::fs::symlink(&elsewhere, env.mcptape_home().join("backups")).expect("link");
    let out = run(mcptape(&env, &["install", "--agent", "cursor"]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("cannot back up") && err.contains("nothing was changed"),
        "{err}"
    );
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(read(&path), text);
    assert_eq!(std::fs::read_dir(&elsewhere).expect("ls").count(), 0);
}

#[test]
fn backups_are_private_and_byte_exact_and_one_file_with_two_containers_is_written_once() {
    let env = Env::new();
    let before = fixture(&env, "claude.json");
    let path = place(&env, "~/.claude.json", &before);
    let out = run(mcptape(&env, &["install", "--agent", "claude-code"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("github (user): wrapped") && err.contains("db (project): wrapped"),
        "{err}"
    );
    assert!(
        err.contains("warning: old-sse (user): skipped: the legacy SSE transport"),
        "{err}"
    );
    let dir = env.mcptape_home().join("backups");
    assert_eq!(
        std::fs::metadata(&dir).expect("dir").permissions().mode() & 0o777,
        0o700
    );
    let backups: Vec<_> = std::fs::read_dir(&dir)
        .expect("ls")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "bak"))
        .collect();
    assert_eq!(backups.len(), 1, "one write, one backup: {backups:?}");
    assert_eq!(
        std::fs::read_to_string(&backups[0]).expect("backup"),
        before
    );
    assert_eq!(
        std::fs::metadata(&backups[0])
            .expect("meta")
            .permissions()
            .mode()
            & 0o777,
        0o600
    );
    // `--scope user` leaves the project's entries alone.
    std::fs::write(&path, &before).expect("reset");
    std::fs::remove_dir_all(&dir).expect("rm");
    let out = run(mcptape(
        &env,
        &["install", "--agent", "claude-code", "--scope", "user"],
    ));
    assert!(out.status.success(), "{}", stderr(&out));
    let now = parse(&read(&path));
    let cwd = project(&env).to_string_lossy().into_owned();
    assert_eq!(now["projects"][&cwd]["mcpServers"]["db"]["command"], "uvx");
    assert_ne!(now["mcpServers"]["github"]["command"], "npx");
}

#[test]
fn list_and_server_filters() {
    let env = Env::new();
    place(&env, CURSOR, &fixture(&env, "cursor.json"));
    place(&env, ".mcp.json", &fixture(&env, "mcp.json"));
    let out = run(mcptape(&env, &["install", "--server", "sentry"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run(mcptape(&env, &["install", "--list"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let table = stdout(&out);
    let row = |server: &str| {
        table
            .lines()
            .find(|l| l.split_whitespace().nth(3) == Some(server))
            .unwrap_or_else(|| panic!("no row for {server}:\n{table}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    assert_eq!(
        row("sentry"),
        ["cursor", "user", "~/.cursor/mcp.json", "sentry", "yes"]
    );
    assert_eq!(row("context7")[4], "no");
    assert_eq!(row("fs")[..2], ["claude-code", "project"]);
    let out = run(mcptape(&env, &["install", "--server", "nope"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no server `nope`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn claude_config_dir_is_honoured() {
    let env = Env::new();
    let dir = env.path("claude-cfg");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let file = dir.join(".claude.json");
    let text = "{\"mcpServers\": {\"a\": {\"command\": \"node\", \"args\": [\"a.js\"]}}}\n";
    std::fs::write(&file, text).expect("write");
    // A file in the default place too, which must then not be touched.
    let default = place(&env, "~/.claude.json", text);
    let out =
        run(mcptape(&env, &["install", "--agent", "claude-code"]).env("CLAUDE_CONFIG_DIR", &dir));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(read(&file).contains("\"proxy\""));
    assert_eq!(read(&default), text);
    let _ = home(&env);
}

#[test]
fn huge_and_non_utf8_files_are_errors_and_names_are_escaped() {
    let env = Env::new();
    let path = place(&env, CURSOR, "");
    let mut huge = String::from("{\"mcpServers\": {}, \"pad\": \"");
    huge.push_str(&"x".repeat(17 * 1024 * 1024));
    huge.push_str("\"}");
    std::fs::write(&path, &huge).expect("write");
    let out = run(mcptape(&env, &["install", "--agent", "cursor"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("larger than") && stderr(&out).contains("mcp.json"),
        "{}",
        stderr(&out)
    );

    std::fs::write(&path, b"{\"mcpServers\": {\"a\xff\": {}}}").expect("write");
    let out = run(mcptape(&env, &["install", "--agent", "cursor"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("not UTF-8"), "{}", stderr(&out));

    // A server name that would drive the terminal is printed escaped.
    let evil = "{\"mcpServers\": {\"ev\\u001b[31mil\": {\"command\": \"x\"}}}";
    std::fs::write(&path, evil).expect("write");
    for args in [
        &["install", "--list"][..],
        &["install", "--dry-run"][..],
        &["install"][..],
    ] {
        let out = run(mcptape(&env, args));
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        let all = format!("{}{}", stdout(&out), stderr(&out));
        assert!(!all.contains('\u{1b}'), "{args:?}: raw ESC in {all:?}");
    }
}
