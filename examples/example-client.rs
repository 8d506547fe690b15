//! A small MCP client over stdio, for the README's demo and the benchmark: it starts
//! `CMD`, does the 2025-11-25 handshake, lists the tools, calls a few of them, prints
//! what came back, and closes the session the MCP way (closing the server's stdin).
//!
//! Usage: `example-client [--calls N] -- CMD [ARGS...]` (`--calls` repeats the `echo`
//! call N times). Built from std and serde_json alone.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, ExitCode, Stdio};

use serde_json::{Value, json};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(split) = args.iter().position(|a| a == "--") else {
        eprintln!("usage: example-client [--calls N] -- CMD [ARGS...]");
        return ExitCode::from(2);
    };
    let calls: usize = match args[..split] {
        [ref flag, ref n] if flag == "--calls" => n.parse().unwrap_or(1),
        _ => 1,
    };
    match run(&args[split + 1..], calls) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("example-client: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(command: &[String], calls: usize) -> Result<(), String> {
    let (program, rest) = command.split_first().ok_or("no command")?;
    let mut child = Command::new(program)
        .args(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let mut stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
    let mut next_id = 0;
    let mut request = |method: &str, params: Value| -> Result<Value, String> {
        next_id += 1;
        let line = json!({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params});
        writeln!(stdin, "{line}").map_err(|e| format!("write: {e}"))?;
        loop {
            let mut text = String::new();
            if stdout
                .read_line(&mut text)
                .map_err(|e| format!("read: {e}"))?
                == 0
            {
                return Err(format!(
                    "the server closed stdout before answering {method}"
                ));
            }
            let msg: Value =
                serde_json::from_str(&text).map_err(|e| format!("bad line ({e}): {text}"))?;
            if msg["id"] == json!(next_id) {
                if let Some(err) = msg.get("error") {
                    return Err(format!("{method}: {err}"));
                }
                return Ok(msg["result"].clone());
            }
            if msg["method"] == "notifications/progress" {
                println!("  progress {}", msg["params"]["message"]);
            }
        }
    };
    let init = request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "example-client", "version": "0.1.0"}}),
    )?;
    println!("connected to {}", init["serverInfo"]["name"]);
    let tools = request("tools/list", json!({}))?;
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str())
        .collect();
    println!("tools: {}", names.join(", "));
    for i in 0..calls {
        let r = request(
            "tools/call",
            json!({"name": "echo", "arguments": {"message": format!("hello {i}")}}),
        )?;
        println!("echo → {}", r["content"][0]["text"]);
    }
    let r = request(
        "tools/call",
        json!({"name": "add", "arguments": {"a": 2, "b": 40}}),
    )?;
    println!("add → {}", r["structuredContent"]);
    let r = request(
        "tools/call",
        json!({"name": "slow", "arguments": {"steps": 2, "ms": 10}, "_meta": {"progressToken": "demo"}}),
    )?;
    println!("slow → {}", r["content"][0]["text"]);
    drop(stdin);
    let status = child.wait().map_err(|e| format!("wait: {e}"))?;
    status
        .success()
        .then_some(())
        .ok_or(format!("server exited with {status}"))
}
