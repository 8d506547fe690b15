//! `list` and `servers` as aligned tables (issue 14): a header row, columns as wide as
//! their widest cell in terminal columns (escaped text measured), sizes in binary units;
//! `list --json` keeps exact bytes, and `servers --json` names a server's variables and
//! headers without their values.

use serde_json::Value;

use crate::support::*;

/// One tape line of server `server`'s connection `conn`, at `ts`, padded with a text of
/// `pad` characters.
fn line(server: &str, conn: &str, ts: &str, pad: usize) -> String {
    serde_json::json!({"jsonrpc": "2.0", "method": "notifications/message",
        "params": {"data": "x".repeat(pad)},
        "_meta": {"dir": "recv", "server": server, "ts": ts, "conn": conn}})
    .to_string()
        + "\n"
}

#[test]
fn list_aligns_its_columns_and_shows_sizes_in_binary_units() {
    let env = Env::new();
    let dir = env.mcptape_home().join("recordings");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let small = line("example", "1", "2026-11-30T04:35:01.266Z", 10);
    std::fs::write(dir.join("a.ndjson"), &small).expect("write");
    // Wide characters take two columns each; an escape is shown escaped, and measured so.
    let mut big = String::new();
    while big.len() < 10_000 {
        big.push_str(&line("everything", "1", "2026-11-30T04:35:02.000Z", 1000));
        big.push_str(&line("example", "2", "2026-11-30T04:35:03.000Z", 1000));
    }
    // Blank lines (skipped by readers) make it 11,878 bytes: 11.6 KiB.
    while big.len() < 11_878 {
        big.push('\n');
    }
    std::fs::write(dir.join("日本語.ndjson"), &big).expect("write");
    std::fs::write(dir.join("e\u{1b}[2J.ndjson"), "nope\n").expect("write");
    let out = run(env.mcptape(["list"]));
    assert!(out.status.success(), "{}", text(&out));
    let sizes = (small.len(), big.len());
    assert_eq!(sizes, (167, 11_878), "the sizes the table below shows");
    similar_asserts::assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "\
SESSION       SIZE  CONNS  LAST                      SERVERS
a            167 B      1  2026-11-30T04:35:01.266Z  example
e\\x1b[2J       5 B      -  -                         unreadable: `PATH` line 1: not a JSON object
日本語    11.6 KiB      2  2026-11-30T04:35:03.000Z  everything,example
"
        .replace("PATH", &dir.join("e\\x1b[2J.ndjson").display().to_string())
    );
}

#[test]
fn list_json_keeps_the_exact_byte_count() {
    let env = Env::new();
    let dir = env.mcptape_home().join("recordings");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let mut tape = String::new();
    while tape.len() < 3_400_000 {
        tape.push_str(&line("example", "1", "2026-11-30T04:35:01.266Z", 4000));
    }
    std::fs::write(dir.join("big.ndjson"), &tape).expect("write");
    let out = run(env.mcptape(["list", "--json"]));
    assert!(out.status.success(), "{}", text(&out));
    let rows: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(rows[0]["bytes"], tape.len());
    let out = run(env.mcptape(["list"]));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(" 3.2 MiB "),
        "{}",
        text(&out)
    );
}

/// A config with a stdio server (its env holding a secret, a cwd), an HTTP server (a
/// header holding a secret) and a server whose name is hostile.
fn config(env: &Env) -> (std::path::PathBuf, String) {
    let secret = fake(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
        32,
        14,
    );
    let path = env.path("mcp.json");
    let doc = serde_json::json!({"mcpServers": {
        "example": {"command": "example-server", "args": ["--name", "two words"],
            "env": {"API_KEY": secret}, "cwd": "srv"},
        "remote": {"url": "https://mcp.example.com/mcp",
            "headers": {"Authorization": format!("Bearer {secret}")}},
        "évil\u{1b}[2J": {"command": "node", "args": ["x.js"]},
    }});
    std::fs::write(&path, doc.to_string()).expect("write config");
    (path, secret)
}

#[test]
fn servers_aligns_its_columns_and_never_shows_env_or_header_values() {
    let env = Env::new();
    let (path, secret) = config(&env);
    let out = run(env.mcptape(["servers", "--config"]).arg(&path));
    assert!(out.status.success(), "{}", text(&out));
    similar_asserts::assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "\
servers of `{}` (key `mcpServers`):
  NAME         TRANSPORT  CWD  COMMAND OR URL
  example      stdio      srv  example-server --name 'two words'
  remote       http       -    https://mcp.example.com/mcp
  évil\\x1b[2J  stdio      -    node x.js
",
            path.display()
        )
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains(&secret));
}

#[test]
fn servers_json_names_variables_and_headers_but_holds_no_secret_value() {
    let env = Env::new();
    let (path, secret) = config(&env);
    let out = run(env.mcptape(["servers", "--json", "--config"]).arg(&path));
    assert!(out.status.success(), "{}", text(&out));
    let raw = String::from_utf8_lossy(&out.stdout);
    assert!(!raw.contains(&secret), "a secret value: {raw}");
    let doc: Value = serde_json::from_str(&raw).expect("servers --json is JSON");
    let file = path.display().to_string();
    assert_eq!(doc["config"], file.as_str());
    assert_eq!(doc["key"], "mcpServers");
    let servers = doc["servers"].as_array().expect("servers");
    assert_eq!(
        servers[0],
        serde_json::json!({"name": "example", "transport": "stdio",
            "command": "example-server", "args": ["--name", "two words"], "url": null,
            "cwd": "srv", "env": ["API_KEY"], "headers": [], "config": file})
    );
    assert_eq!(
        servers[1],
        serde_json::json!({"name": "remote", "transport": "http", "command": null,
            "args": [], "url": "https://mcp.example.com/mcp", "cwd": null, "env": [],
            "headers": ["Authorization"], "config": file})
    );
    assert_eq!(servers[2]["name"], "évil\u{1b}[2J");
}
