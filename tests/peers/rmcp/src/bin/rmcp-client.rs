//! An rmcp 3.x MCP client for mcptape's interop matrix, printing a deterministic transcript.
//!
//! Usage: `rmcp-client ERA -- CMD [ARGS...]` (a stdio server) | `rmcp-client ERA URL`
//! (Streamable HTTP). ERA is `legacy` (the `initialize` handshake) or `modern`
//! (`server/discover` for 2026-07-28, no fallback). It lists the tools, calls `echo` and
//! `add`, and prints one JSON line per call result on stdout:
//! `{"step":"list_tools","result":…}`, `{"step":"call","tool":…,"result":…}`, then
//! `{"step":"closed"}`. The server's identity is not printed (versions differ between runs
//! of no interest here). Exit status 1 on any error, with the error on stderr.

use rmcp::model::CallToolRequestParams;
use rmcp::model::ProtocolVersion;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, service::RunningService};
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

const USAGE: &str =
    "usage: rmcp-client legacy|modern -- CMD [ARGS...] | rmcp-client legacy|modern URL";

#[tokio::main]
async fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let lifecycle = match args.first().map(String::as_str) {
        Some("legacy") => ClientLifecycleMode::Initialize,
        Some("modern") => ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
        _ => return Err(USAGE.into()),
    };
    match args.get(1).map(String::as_str) {
        Some("--") if args.len() > 2 => {
            let mut cmd = tokio::process::Command::new(&args[2]);
            cmd.args(&args[3..]);
            let transport = TokioChildProcess::new(cmd)?;
            scenario(().serve_with_lifecycle(transport, lifecycle).await?).await
        }
        Some(url) if url.starts_with("http") => {
            let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
            scenario(().serve_with_lifecycle(transport, lifecycle).await?).await
        }
        _ => Err(USAGE.into()),
    }
}
