//! An rmcp 3.x MCP client for mcptape's interop matrix, printing a deterministic transcript.
//!
//! Usage: `rmcp-client -- CMD [ARGS...]` (a stdio server) | `rmcp-client URL` (Streamable
//! HTTP). It connects with rmcp's default lifecycle, lists the tools, calls `echo` and
//! `add`, and prints one JSON line per call result on stdout:
//! `{"step":"list_tools","result":…}`, `{"step":"call","tool":…,"result":…}`, then
//! `{"step":"closed"}`. The server's identity is not printed (versions differ between runs
//! of no interest here). Exit status 1 on any error, with the error on stderr.

use rmcp::model::CallToolRequestParams;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt, service::RunningService};
use serde_json::{Value, json};

type Error = Box<dyn std::error::Error + Send + Sync>;

fn emit(line: Value) {
    println!("{line}");
}

async fn scenario(client: RunningService<RoleClient, ()>) -> Result<(), Error> {
    let tools = client.list_tools(None).await?;
    let mut tools = serde_json::to_value(&tools)?;
    if let Some(list) = tools["tools"].as_array_mut() {
        list.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    }
    emit(json!({"step": "list_tools", "result": tools}));
    for (tool, arguments) in [
        ("echo", json!({"message": "héllo"})),
        ("add", json!({"a": 2, "b": 3})),
    ] {
        let Value::Object(args) = arguments.clone() else {
            unreachable!("arguments are objects")
        };
        let result = client
            .call_tool(CallToolRequestParams::new(tool).with_arguments(args))
            .await?;
        emit(json!({"step": "call", "tool": tool, "arguments": arguments,
                    "result": serde_json::to_value(&result)?}));
    }
    client.cancel().await?;
    emit(json!({"step": "closed"}));
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--") if args.len() > 1 => {
            let mut cmd = tokio::process::Command::new(&args[1]);
            cmd.args(&args[2..]);
            let client = ().serve(TokioChildProcess::new(cmd)?).await?;
            scenario(client).await
        }
        Some(url) if url.starts_with("http") => {
            let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
            let client = ().serve(transport).await?;
            scenario(client).await
        }
        _ => Err("usage: rmcp-client -- CMD [ARGS...] | rmcp-client URL".into()),
    }
}
