//! `mcptape approvals`, `approve`, `deny` as processes, over the desk in the test's
//! `MCPTAPE_HOME`: listing (table and JSON, escaped), deciding, and every refusal (an
//! unknown id, a call decided twice, a holder that is gone, a desk that is not private).
//!
//! Here the pending calls are files written in the desk's documented format
//! (docs/commands/approvals.md), held by a real process that is alive (or killed); the
//! calls held by a real policy layer, decided from a second process while their client
//! goes on, are in `policy_ask`.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Child, Command};

use serde_json::{Value, json};

use crate::support::{Env, run, stderr, stdout, text};

/// The desk's directory in `env`'s home.
fn desk(env: &Env) -> PathBuf {
    env.mcptape_home().join("recordings/.approvals")
}

/// A process standing for the holder: alive until killed.
fn holder() -> Child {
    Command::new("sleep").arg("600").spawn().expect("sleep")
}

/// Puts a pending call `id` held by `pid` on `env`'s desk, as a holder does.
fn pending(env: &Env, id: &str, pid: u32, server: &str, tool: &str, arguments: Value) {
    let dir = desk(env);
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let since = humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string();
    let deadline = humantime::format_rfc3339_millis(
        std::time::SystemTime::now() + std::time::Duration::from_secs(300),
    )
    .to_string();
    let call = json!({
        "id": id, "server": server, "method": "tools/call", "tool": tool,
        "arguments": arguments, "rules": ["ask-writes"], "pid": pid,
        "since": since, "deadline": deadline,
    });
    let path = dir.join(format!("{id}.json"));
    std::fs::write(&path, format!("{call}\n")).expect("write");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
}

#[test]
fn nothing_waiting_is_said_and_json_prints_nothing() {
    let env = Env::new();
    let out = run(env.mcptape(["approvals"]));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(stdout(&out), "no calls are waiting\n");
    let out = run(env.mcptape(["approvals", "--json"]));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(stdout(&out), "");
    assert!(!desk(&env).exists(), "listing makes nothing");
}

#[test]
fn held_calls_are_listed_escaped_and_one_is_approved_then_refused_a_second_time() {
    let env = Env::new();
    let mut a = holder();
    pending(
        &env,
        "k3xq7a",
        a.id(),
        "files\u{1b}[2J",
        "write_file",
        json!({"path": "/srv/app.yaml", "token": "[REDACTED]"}),
    );
    pending(&env, "m2wz4b", a.id(), "shell", "run", json!({"cmd": "ls"}));

    let out = run(env.mcptape(["approvals"]).env("COLUMNS", "200"));
    assert!(out.status.success(), "{}", text(&out));
    let shown = stdout(&out);
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines.len(), 3, "{shown}");
    assert!(
        lines[0].starts_with("ID") && lines[0].ends_with("ARGUMENTS"),
        "{shown}"
    );
    assert!(!shown.contains('\u{1b}'), "escaped: {shown:?}");
    assert!(shown.contains("files\\x1b[2J"), "{shown}");
    assert!(
        shown.contains(r#"{"path":"/srv/app.yaml","token":"[REDACTED]"}"#),
        "{shown}"
    );

    let out = run(env.mcptape(["approvals", "--json"]));
    let objects: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one object a line"))
        .collect();
    assert_eq!(objects.len(), 2, "{}", text(&out));
    let ids: Vec<&str> = objects.iter().filter_map(|o| o["id"].as_str()).collect();
    assert!(
        ids.contains(&"k3xq7a") && ids.contains(&"m2wz4b"),
        "{ids:?}"
    );
    assert!(objects.iter().all(|o| o["left_ms"].as_u64().is_some()));

    let out = run(env.mcptape(["approve", "k3xq7a"]));
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stdout(&out)
            .starts_with("approved `k3xq7a`: tool `write_file` of server `files\\x1b[2J`, after "),
        "{}",
        text(&out)
    );
    let decision: Value = serde_json::from_slice(
        &std::fs::read(desk(&env).join("k3xq7a.decision")).expect("the decision"),
    )
    .expect("json");
    assert_eq!(decision["decision"], "approved");
    assert!(
        decision["by"].as_str().is_some_and(|b| b.contains('@')),
        "{decision}"
    );
    let mode = std::fs::metadata(desk(&env).join("k3xq7a.decision"))
        .expect("meta")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);

    // Decided: no longer listed, and a second decision is refused saying by whom.
    let out = run(env.mcptape(["approvals", "--json"]));
    assert_eq!(stdout(&out).lines().count(), 1, "{}", text(&out));
    let out = run(env.mcptape(["deny", "k3xq7a", "--reason", "too late"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("call `k3xq7a` is no longer waiting: it was approved by "),
        "{}",
        text(&out)
    );

    let out = run(env.mcptape(["deny", "m2wz4b", "--reason", "not on prod"]));
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stdout(&out).contains("denied `m2wz4b`: tool `run` of server `shell`")
            && stdout(&out).ends_with("(reason: not on prod)\n"),
        "{}",
        text(&out)
    );
    let decision: Value = serde_json::from_slice(
        &std::fs::read(desk(&env).join("m2wz4b.decision")).expect("the decision"),
    )
    .expect("json");
    assert_eq!(
        (&decision["decision"], &decision["reason"]),
        (&json!("denied"), &json!("not on prod"))
    );
    a.kill().expect("kill");
    a.wait().expect("wait");
}

#[test]
fn an_unknown_id_is_refused_naming_it_and_the_ones_waiting() {
    let env = Env::new();
    let mut a = holder();
    pending(&env, "k3xq7a", a.id(), "s", "echo", json!({}));
    for bad in ["zzzzzz", "../../etc", "K3XQ7A"] {
        let out = run(env.mcptape(["approve", bad]));
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        let err = stderr(&out);
        assert!(
            err.contains("no call `") && err.contains("is waiting for a decision; waiting: k3xq7a"),
            "{err}"
        );
    }
    assert!(desk(&env).join("k3xq7a.json").exists(), "still waiting");
    let out = run(env.mcptape(["approve", "k3xq7a"]));
    assert!(out.status.success(), "{}", text(&out));
    a.kill().expect("kill");
    a.wait().expect("wait");

    let empty = Env::new();
    let out = run(empty.mcptape(["deny", "abcdef"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("no call is waiting"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_call_whose_holder_is_gone_is_not_listed_and_cannot_be_decided() {
    let env = Env::new();
    let mut a = holder();
    let pid = a.id();
    pending(&env, "k3xq7a", pid, "s", "echo", json!({}));
    pending(&env, "m2wz4b", pid, "s", "echo", json!({}));
    a.kill().expect("kill");
    a.wait().expect("wait");
    let out = run(env.mcptape(["approve", "k3xq7a"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains(&format!(
            "call `k3xq7a` is no longer waiting: the process that held it (pid {pid}) is gone"
        )),
        "{}",
        text(&out)
    );
    let out = run(env.mcptape(["approvals"]));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(stdout(&out), "no calls are waiting\n");
    assert!(
        !desk(&env).join("m2wz4b.json").exists(),
        "the stale call was swept"
    );
}

#[test]
fn a_desk_that_is_not_private_is_refused_with_the_fix() {
    let env = Env::new();
    let mut a = holder();
    pending(&env, "k3xq7a", a.id(), "s", "echo", json!({}));
    std::fs::set_permissions(desk(&env), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    for args in [vec!["approvals"], vec!["approve", "k3xq7a"]] {
        let out = run(env.mcptape(&args));
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        let err = stderr(&out);
        assert!(
            err.contains(".approvals` can be reached by other users (mode 0755)")
                && err.contains("chmod 700"),
            "{err}"
        );
    }
    assert!(
        !desk(&env).join("k3xq7a.decision").exists(),
        "nothing decided"
    );

    // A link where the desk should be: refused, its target untouched.
    let elsewhere = env.path("elsewhere");
    std::fs::rename(desk(&env), &elsewhere).expect("move");
    std::os::unix::fs::symlink(&elsewhere, desk(&env)).expect("symlink");
    std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let out = run(env.mcptape(["approve", "k3xq7a"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("is a symbolic link"),
        "{}",
        text(&out)
    );
    assert!(!elsewhere.join("k3xq7a.decision").exists());
    a.kill().expect("kill");
    a.wait().expect("wait");
}

#[test]
fn the_list_of_sessions_ignores_the_desk() {
    let env = Env::new();
    let mut a = holder();
    pending(&env, "k3xq7a", a.id(), "s", "echo", json!({}));
    let out = run(env.mcptape(["list", "--json"]));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        serde_json::from_str::<Value>(&stdout(&out)).expect("json"),
        json!([])
    );
    a.kill().expect("kill");
    a.wait().expect("wait");
}
