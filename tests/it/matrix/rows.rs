//! The rows of the interop matrix: which real client meets which real server, over which
//! transport, and what the "changed server" is for each.
//!
//! The changes are real ones the server shows in an answer: an environment variable that
//! server-everything's `get-env` prints, another text in the file server-filesystem reads,
//! another memory file for server-memory, and an env var the FastMCP and rmcp peers of
//! tests/peers read (`FASTMCP_PEER_CHANGED`, `RMCP_PEER_CHANGED`) to change `echo`.

use serde_json::json;

use super::harness::{Launch, Row, Target, Upstream};
use crate::support::*;

fn s(v: &str) -> String {
    v.to_owned()
}

fn node_modules(path: &str) -> String {
    peer(&format!("node_modules/{path}"))
}

/// The PATH this test runs with: servers that print their environment get only this.
fn path_var() -> String {
    std::env::var("PATH").unwrap_or_else(|_| s("/usr/bin:/bin"))
}

/// `env -i PATH=… VARS… ARGV…`: a stdio server whose environment is exactly this, whoever
/// starts it (SDK clients scrub theirs, mcptape verify does not).
fn pinned_env(vars: &[(&str, &str)], argv: Vec<String>) -> Vec<String> {
    let mut out = vec![s("env"), s("-i"), format!("PATH={}", path_var())];
    out.extend(vars.iter().map(|(k, v)| format!("{k}={v}")));
    out.extend(argv);
    out
}

fn calls(list: &[(&str, serde_json::Value)]) -> Vec<String> {
    list.iter()
        .flat_map(|(tool, args)| [s("--call"), s(tool), args.to_string()])
        .collect()
}

fn target(t: &Target) -> Vec<String> {
    match t {
        Target::Cmd(argv) => argv.clone(),
        Target::Url(url) => vec![url.clone()],
    }
}

// ---- clients -------------------------------------------------------------------------

/// The Python SDK 2.3 `Client` in MODE (auto, legacy, or a pinned version).
fn python_client(mode: &'static str, calls: Vec<String>) -> super::harness::ClientArgv {
    Box::new(move |_, t| {
        let mut argv = vec![python(), peer("py_matrix.py"), s(mode)];
        argv.extend(calls.iter().cloned());
        argv.push(s("--"));
        argv.extend(target(t));
        argv
    })
}

fn typescript_client(calls: Vec<String>) -> super::harness::ClientArgv {
    Box::new(move |_, t| {
        let mut argv = vec![s("node"), peer("ts_matrix.mjs")];
        argv.extend(calls.iter().cloned());
        argv.push(s("--"));
        argv.extend(target(t));
        argv
    })
}

fn inspector_client(era: &'static str, calls: Vec<String>) -> super::harness::ClientArgv {
    Box::new(move |_, t| {
        let mut argv = vec![s("node"), peer("inspector_client.mjs"), s(era)];
        argv.extend(calls.iter().cloned());
        argv.push(s("--"));
        argv.extend(target(t));
        argv
    })
}

fn rmcp_bin(name: &str) -> String {
    let bin = peer(&format!("rmcp/target/debug/{name}"));
    assert!(
        std::path::Path::new(&bin).exists(),
        "{bin} is missing: run tests/peers/install first"
    );
    bin
}

/// The rmcp client in ERA: `legacy` (initialize) or `modern` (server/discover, 2026-07-28).
fn rmcp_client(era: &'static str) -> super::harness::ClientArgv {
    Box::new(move |_, t| match t {
        Target::Cmd(argv) => {
            let mut out = vec![rmcp_bin("rmcp-client"), s(era), s("--")];
            out.extend(argv.iter().cloned());
            out
        }
        Target::Url(url) => vec![rmcp_bin("rmcp-client"), s(era), url.clone()],
    })
}

/// `mcptape call` twice, the server named `fastmcp` in the env's .mcp.json.
fn mcptape_call() -> super::harness::ClientArgv {
    Box::new(|env, t| {
        let Target::Url(url) = t else {
            unreachable!("the call row is an HTTP row")
        };
        let config = json!({"mcpServers": {"fastmcp": {"url": url}}});
        std::fs::write(env.path(".mcp.json"), config.to_string()).expect("write .mcp.json");
        let mcptape = bin().display().to_string();
        let script = format!(
            "{mcptape} call fastmcp.echo 'message:héllo' && {mcptape} call fastmcp.add a:2 b:3"
        );
        vec![s("sh"), s("-c"), script]
    })
}

// ---- servers -------------------------------------------------------------------------

fn everything_entry() -> String {
    everything_server()[1].clone()
}

/// server-everything over stdio, with `EVERYTHING_MATRIX` (which its get-env prints).
fn everything_stdio() -> Upstream {
    let argv = |variant| pinned_env(&[("EVERYTHING_MATRIX", variant)], everything_server());
    Upstream::Stdio {
        same: argv("same"),
        changed: argv("changed"),
    }
}

fn everything_launch(variant: &str) -> Launch {
    Launch {
        argv: vec![
            s("node"),
            s("--require"),
            peer("listening_port.cjs"),
            everything_entry(),
            s("streamableHttp"),
        ],
        env: vec![
            (s("PATH"), path_var()),
            (s("PORT"), s("0")),
            (s("EVERYTHING_MATRIX"), s(variant)),
        ],
        clear_env: true,
        said: "bound to port ",
    }
}

fn everything_http() -> Upstream {
    Upstream::Http {
        same: everything_launch("same"),
        changed: everything_launch("changed"),
    }
}

fn everything_calls() -> Vec<String> {
    calls(&[
        ("echo", json!({"message": "héllo"})),
        ("get-sum", json!({"a": 2, "b": 3})),
        ("get-env", json!({})),
    ])
}

fn fastmcp_argv(mode: &str) -> Vec<String> {
    vec![python(), peer("fastmcp_server.py"), s(mode)]
}

fn fastmcp_stdio() -> Upstream {
    let mut changed = vec![s("env"), s("FASTMCP_PEER_CHANGED=1")];
    changed.extend(fastmcp_argv("stdio"));
    Upstream::Stdio {
        same: fastmcp_argv("stdio"),
        changed,
    }
}

fn fastmcp_launch(changed: bool) -> Launch {
    Launch {
        argv: fastmcp_argv("http"),
        env: if changed {
            vec![(s("FASTMCP_PEER_CHANGED"), s("1"))]
        } else {
            vec![]
        },
        clear_env: false,
        said: "fastmcp listening on port ",
    }
}

fn fastmcp_calls() -> Vec<String> {
    calls(&[
        ("echo", json!({"message": "héllo"})),
        ("add", json!({"a": 2, "b": 3})),
        ("shout", json!({"text": "tape"})),
    ])
}

fn rmcp_launch(changed: bool) -> Launch {
    Launch {
        argv: vec![rmcp_bin("rmcp-server"), s("http"), s("0")],
        env: if changed {
            vec![(s("RMCP_PEER_CHANGED"), s("1"))]
        } else {
            vec![]
        },
        clear_env: false,
        said: "listening on http://127.0.0.1:",
    }
}

// ---- rows ----------------------------------------------------------------------------

fn py_everything(mode: &'static str, upstream: Upstream) -> Row {
    Row {
        server: "everything",
        client: python_client(mode, everything_calls()),
        upstream,
        change: None,
        changed_tool: "get-env",
    }
}

pub(crate) fn py_auto_everything_stdio(_: &Env) -> Row {
    py_everything("auto", everything_stdio())
}
pub(crate) fn py_legacy_everything_stdio(_: &Env) -> Row {
    py_everything("legacy", everything_stdio())
}
pub(crate) fn py_auto_everything_http(_: &Env) -> Row {
    py_everything("auto", everything_http())
}
pub(crate) fn py_legacy_everything_http(_: &Env) -> Row {
    py_everything("legacy", everything_http())
}

fn py_fastmcp(mode: &'static str, http: bool) -> Row {
    Row {
        server: "fastmcp",
        client: python_client(mode, fastmcp_calls()),
        upstream: if http {
            Upstream::Http {
                same: fastmcp_launch(false),
                changed: fastmcp_launch(true),
            }
        } else {
            fastmcp_stdio()
        },
        change: None,
        changed_tool: "echo",
    }
}

pub(crate) fn py_auto_fastmcp_stdio(_: &Env) -> Row {
    py_fastmcp("auto", false)
}
pub(crate) fn py_legacy_fastmcp_stdio(_: &Env) -> Row {
    py_fastmcp("legacy", false)
}
pub(crate) fn py_pinned_fastmcp_stdio(_: &Env) -> Row {
    py_fastmcp("2026-07-28", false)
}
pub(crate) fn py_auto_fastmcp_http(_: &Env) -> Row {
    py_fastmcp("auto", true)
}
pub(crate) fn py_legacy_fastmcp_http(_: &Env) -> Row {
    py_fastmcp("legacy", true)
}
pub(crate) fn py_pinned_fastmcp_http(_: &Env) -> Row {
    py_fastmcp("2026-07-28", true)
}

/// server-filesystem over a directory of the test; the change is another text in the file.
pub(crate) fn ts_filesystem(env: &Env) -> Row {
    let dir = env.path("files");
    std::fs::create_dir_all(&dir).expect("mkdir files");
    let file = dir.join("notes.txt");
    std::fs::write(&file, "first version\n").expect("write notes.txt");
    let file = file.display().to_string();
    let argv = vec![
        s("node"),
        node_modules("@modelcontextprotocol/server-filesystem/dist/index.js"),
        dir.display().to_string(),
    ];
    Row {
        server: "filesystem",
        client: typescript_client(calls(&[
            ("read_text_file", json!({"path": file})),
            (
                "get_file_info",
                json!({"path": dir.join("missing").display().to_string()}),
            ),
        ])),
        upstream: Upstream::Stdio {
            same: argv.clone(),
            changed: argv,
        },
        change: Some(Box::new(|env| {
            std::fs::write(env.path("files/notes.txt"), "second version\n")
                .expect("rewrite notes.txt");
        })),
        changed_tool: "read_text_file",
    }
}

/// server-memory over a seeded memory file; the changed server reads another one.
pub(crate) fn ts_memory(env: &Env) -> Row {
    let seed = |name: &str, observation: &str| {
        let path = env.path(name);
        let line = json!({"type": "entity", "name": "tape", "entityType": "recording",
                          "observations": [observation]});
        std::fs::write(&path, format!("{line}\n")).expect("seed the memory file");
        path.display().to_string()
    };
    let same = seed("memory.jsonl", "holds one line per message");
    let changed = seed("memory-changed.jsonl", "holds something else");
    let argv = |file: &str| {
        vec![
            s("env"),
            format!("MEMORY_FILE_PATH={file}"),
            s("node"),
            node_modules("@modelcontextprotocol/server-memory/dist/index.js"),
        ]
    };
    Row {
        server: "memory",
        client: typescript_client(calls(&[
            ("read_graph", json!({})),
            ("search_nodes", json!({"query": "recording"})),
        ])),
        upstream: Upstream::Stdio {
            same: argv(&same),
            changed: argv(&changed),
        },
        change: None,
        changed_tool: "read_graph",
    }
}

pub(crate) fn ts_everything(_: &Env) -> Row {
    Row {
        server: "everything",
        client: typescript_client(everything_calls()),
        upstream: everything_stdio(),
        change: None,
        changed_tool: "get-env",
    }
}

fn inspector_everything(era: &'static str) -> Row {
    Row {
        server: "everything",
        client: inspector_client(era, everything_calls()),
        upstream: everything_stdio(),
        change: None,
        changed_tool: "get-env",
    }
}

pub(crate) fn inspector_legacy_everything(_: &Env) -> Row {
    inspector_everything("legacy")
}

/// The Inspector's modern era, against a server that has it. Not against
/// server-everything: it answers no `server/discover`, and the Inspector's modern era is a
/// pin with no fallback, so the direct run fails already ("server did not offer pinned
/// protocol version 2026-07-28").
pub(crate) fn inspector_modern_fastmcp(_: &Env) -> Row {
    Row {
        server: "fastmcp",
        client: inspector_client("modern", fastmcp_calls()),
        upstream: fastmcp_stdio(),
        change: None,
        changed_tool: "echo",
    }
}

fn rmcp_stdio(era: &'static str) -> Row {
    let server = vec![rmcp_bin("rmcp-server"), s("stdio")];
    let mut changed = vec![s("env"), s("RMCP_PEER_CHANGED=1")];
    changed.extend(server.iter().cloned());
    Row {
        server: "rmcp",
        client: rmcp_client(era),
        upstream: Upstream::Stdio {
            same: server,
            changed,
        },
        change: None,
        changed_tool: "echo",
    }
}

fn rmcp_http(era: &'static str) -> Row {
    Row {
        server: "rmcp",
        client: rmcp_client(era),
        upstream: Upstream::Http {
            same: rmcp_launch(false),
            changed: rmcp_launch(true),
        },
        change: None,
        changed_tool: "echo",
    }
}

pub(crate) fn rmcp_legacy_stdio(_: &Env) -> Row {
    rmcp_stdio("legacy")
}
pub(crate) fn rmcp_modern_stdio(_: &Env) -> Row {
    rmcp_stdio("modern")
}
pub(crate) fn rmcp_legacy_http(_: &Env) -> Row {
    rmcp_http("legacy")
}
pub(crate) fn rmcp_modern_http(_: &Env) -> Row {
    rmcp_http("modern")
}

pub(crate) fn call_fastmcp_http(_: &Env) -> Row {
    Row {
        server: "fastmcp",
        client: mcptape_call(),
        upstream: Upstream::Ambient {
            same: fastmcp_launch(false),
            changed: fastmcp_launch(true),
        },
        change: None,
        changed_tool: "echo",
    }
}
