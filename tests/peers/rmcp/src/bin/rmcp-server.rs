//! An rmcp 3.x MCP server for mcptape's interop matrix: two tools, over stdio or Streamable
//! HTTP.
//!
//! Usage: `rmcp-server stdio` | `rmcp-server http PORT` (0 picks a free port). Over HTTP it
//! prints `listening on http://127.0.0.1:PORT/mcp` on stderr once it accepts connections.
//! `RMCP_PEER_CHANGED=1` changes `echo`'s answer: the "changed server" of verify.

use std::sync::Arc;

use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use rmcp::{ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// The text to echo.
    message: String,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

#[derive(Debug, Clone)]
struct Peer {
    // Read through the `#[tool_handler]` expansion, which the dead-code lint does not see.
    #[allow(dead_code)]
    tool_router: ToolRouter<Self>,
    changed: bool,
}

#[tool_router]
impl Peer {
    fn new() -> Peer {
        Peer {
            tool_router: Self::tool_router(),
            changed: std::env::var_os("RMCP_PEER_CHANGED").is_some(),
        }
    }

    #[tool(description = "Echoes the message back")]
    fn echo(&self, Parameters(EchoArgs { message }): Parameters<EchoArgs>) -> String {
        if self.changed {
            format!("changed: {message}")
        } else {
            format!("echo: {message}")
        }
    }

    #[tool(description = "Adds two integers")]
    fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> String {
        (a + b).to_string()
    }
}

#[tool_handler]
impl ServerHandler for Peer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_instructions("rmcp peer of mcptape's tests")
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("stdio") => {
            let running = Peer::new().serve(rmcp::transport::stdio()).await?;
            running.waiting().await?;
            Ok(())
        }
        Some("http") => {
            let port: u16 = args.get(1).map_or(Ok(0), |p| p.parse())?;
            serve_http(port).await
        }
        _ => Err("usage: rmcp-server stdio | rmcp-server http PORT".into()),
    }
}

async fn serve_http(port: u16) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let service: StreamableHttpService<Peer, LocalSessionManager> = StreamableHttpService::new(
        || Ok(Peer::new()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    let addr = listener.local_addr()?;
    eprintln!("listening on http://{addr}/mcp");
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, _) = accepted?;
                let service = service.clone();
                tokio::spawn(async move {
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let svc = hyper_util::service::TowerToHyperService::new(service);
                    let _ = hyper_util::server::conn::auto::Builder::new(
                        hyper_util::rt::TokioExecutor::new(),
                    )
                    .serve_connection(io, svc)
                    .await;
                });
            }
            _ = tokio::signal::ctrl_c() => return Ok(()),
        }
    }
}
