//! Wrapped entries that really run: a client (`mcptape call`) starts the command install
//! wrote into the config, and gets its answer from the example server through the
//! proxy; a remote entry's header reaches the HTTP server through the entry's env.

use std::process::Command;

use crate::http::HttpServer;
use crate::install::{mcptape, parse, place};
use crate::support::{Env, example_server, peer, python, run, stderr, stdout};

#[test]
fn a_wrapped_stdio_entry_answers_through_the_proxy_and_records() {
    let env = Env::new();
    let config = serde_json::json!({"mcpServers": {"ex": {
        "command": example_server(), "args": [], "env": {"EXAMPLE_TOKEN": "ex-SECRET"}
    }}});
    let path = place(
        &env,
        ".mcp.json",
        &serde_json::to_string_pretty(&config).expect("json"),
    );
    let out = run(mcptape(&env, &["install", "--agent", "claude-code"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let wrapped = parse(&std::fs::read_to_string(&path).expect("read"));
    assert_eq!(wrapped["mcpServers"]["ex"]["args"][0], "proxy");

    // `record` sets MCPTAPE_RECORD for the client; the wrapped proxy records into it.
    let config = path.to_string_lossy().into_owned();
    let bin = crate::support::bin().to_string_lossy().into_owned();
    let call = [
        "record",
        "wrapped",
        "--",
        &bin,
        "call",
        "--config",
        &config,
        "ex.echo",
        "message=through the wrapper",
    ];
    let out = run(mcptape(&env, &call));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("Echo: through the wrapper"),
        "{}",
        stdout(&out)
    );
    let tape = std::fs::read_to_string(env.tape("wrapped")).expect("tape");
    // The client started the wrapper the config now names, which started the server.
    let started: Vec<serde_json::Value> = tape
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["method"] == "$transport/start" && e["_meta"]["server"] == "ex")
        .map(|e| e["params"]["command"].clone())
        .collect();
    assert_eq!(
        started,
        [serde_json::json!([
            bin,
            "proxy",
            "--server",
            "ex",
            "--",
            example_server()
        ])],
        "{tape}"
    );
}

#[test]
fn a_wrapped_remote_entry_sends_its_header_from_env_not_argv() {
    let env = Env::new();
    let mut cmd = Command::new(python());
    cmd.arg(peer("header_echo_server.py"));
    let server = HttpServer::launch(cmd, "header-echo listening on port ");
    let secret = "Bearer sk-install-test-0123456789";
    let config = serde_json::json!({"mcpServers": {"remote": {
        "type": "http", "url": server.url, "headers": {"Authorization": secret}
    }}});
    let path = place(
        &env,
        ".mcp.json",
        &serde_json::to_string_pretty(&config).expect("json"),
    );
    let out = run(mcptape(&env, &["install", "--agent", "claude-code"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let entry =
        parse(&std::fs::read_to_string(&path).expect("read"))["mcpServers"]["remote"].clone();
    assert!(
        !entry["args"].to_string().contains("sk-install-test"),
        "{entry}"
    );
    assert_eq!(entry["env"]["MCPTAPE_HEADER_AUTHORIZATION"], secret);

    let config = path.to_string_lossy().into_owned();
    let out = run(mcptape(
        &env,
        &["call", "--config", &config, "remote.whoami"],
    ));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(&format!("authorization: {secret}")),
        "{}",
        stdout(&out)
    );

    // Uninstalled, the entry is the remote one again.
    assert!(run(mcptape(&env, &["uninstall"])).status.success());
    assert_eq!(
        parse(&std::fs::read_to_string(&path).expect("read")),
        config_value(&server.url, secret)
    );
}

fn config_value(url: &str, secret: &str) -> serde_json::Value {
    serde_json::json!({"mcpServers": {"remote": {"type": "http", "url": url, "headers": {"Authorization": secret}}}})
}
