//! Wrapping in the Codex and Goose dialects: remote entries become stdio fronts whose
//! secrets stay out of argv; what a front cannot carry is skipped with its reason.

use serde_json::json;

use super::*;

fn launcher() -> Vec<String> {
    vec!["/bin/mcptape".to_owned()]
}

fn members(w: Wrap) -> Vec<Member> {
    match w {
        Wrap::Members(m) => m,
        other => panic!("{other:?}"),
    }
}

fn skip(w: Wrap) -> String {
    match w {
        Wrap::Skip(why) => why,
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_codex_remote_entry_passes_static_and_environment_headers_by_env() {
    let e = json!({
        "url": "https://mcp.example/mcp",
        "http_headers": {"X-Team": "secret-team"},
        "env_http_headers": {"X-Api-Key": "DOCS_KEY"},
        "tool_timeout_sec": 30
    });
    let m = members(wrap(&e, "docs", &Dialect::CODEX, &launcher()));
    assert_eq!(
        m,
        vec![
            ("command".to_owned(), Some(json!("/bin/mcptape"))),
            (
                "args".to_owned(),
                Some(json!([
                    "proxy",
                    "--server",
                    "docs",
                    "--url",
                    "https://mcp.example/mcp",
                    "--header-env",
                    "X-Team=MCPTAPE_HEADER_X_TEAM",
                    "--header-env",
                    "X-Api-Key=DOCS_KEY"
                ]))
            ),
            (
                "env".to_owned(),
                Some(json!({"MCPTAPE_HEADER_X_TEAM": "secret-team"}))
            ),
            ("url".to_owned(), None),
            ("http_headers".to_owned(), None),
            ("env_vars".to_owned(), Some(json!(["DOCS_KEY"]))),
            ("env_http_headers".to_owned(), None),
        ]
    );
    let argv = serde_json::to_string(&m[1].1).expect("json");
    assert!(!argv.contains("secret-team"));
}

#[test]
fn codex_bearer_tokens_and_oauth_are_skipped_with_a_reason() {
    let e = json!({"url": "https://x/mcp", "bearer_token_env_var": "TOKEN"});
    assert!(skip(wrap(&e, "x", &Dialect::CODEX, &launcher())).contains("bearer_token_env_var"));
    let e = json!({"url": "https://x/mcp", "env_http_headers": {"A": 1}});
    assert!(skip(wrap(&e, "x", &Dialect::CODEX, &launcher())).contains("env_http_headers"));
    let e = json!({"command": "srv", "env": {"K": "v"}, "env_vars": ["HOME"]});
    let m = members(wrap(&e, "s", &Dialect::CODEX, &launcher()));
    assert_eq!(
        m.len(),
        2,
        "a stdio entry keeps env and env_vars untouched: {m:?}"
    );
}

#[test]
fn goose_extensions_wrap_by_kind() {
    let stdio = json!({"type": "stdio", "cmd": "npx", "args": ["-y", "srv"], "envs": {"K": "v"}, "timeout": 300});
    let m = members(wrap(&stdio, "gh", &Dialect::GOOSE, &launcher()));
    assert_eq!(m[0], ("cmd".to_owned(), Some(json!("/bin/mcptape"))));
    assert_eq!(
        m[1],
        (
            "args".to_owned(),
            Some(json!(["proxy", "--server", "gh", "--", "npx", "-y", "srv"]))
        )
    );
    assert_eq!(m.len(), 2);
    let http = json!({"type": "streamable_http", "uri": "https://h/mcp", "headers": {"X-Key": "k1"}, "envs": {}});
    let m = members(wrap(&http, "h", &Dialect::GOOSE, &launcher()));
    assert!(m.contains(&(
        "envs".to_owned(),
        Some(json!({"MCPTAPE_HEADER_X_KEY": "k1"}))
    )));
    assert!(m.contains(&("type".to_owned(), Some(json!("stdio")))));
    assert!(m.contains(&("uri".to_owned(), None)));
    assert!(m.contains(&("headers".to_owned(), None)));
    let builtin = json!({"type": "builtin", "name": "developer"});
    assert!(
        skip(wrap(&builtin, "developer", &Dialect::GOOSE, &launcher()))
            .contains("inside the agent")
    );
    let sse = json!({"type": "sse", "uri": "https://s/sse"});
    assert!(skip(wrap(&sse, "s", &Dialect::GOOSE, &launcher())).contains("SSE"));
}
