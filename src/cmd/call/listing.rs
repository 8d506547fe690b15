//! The tool listing of the built-in client: `tools/list`, page after page (following
//! `nextCursor`, at most [`MAX_PAGES`]).
//!
//! `mcptape call` lists before it calls, for two reasons: its tape then carries the
//! tools' annotations, so `mcptape verify` knows which recorded calls are read-only and
//! plays them (a tape without a `tools/list` has every call skipped); and a call the
//! server refuses for a tool it does not list is said with the server's own list and a
//! "did you mean `echo`?", not only the server's bare error.
//! `mcptape tools` prints the same listing.
//!
//! What it does not do: refuse a tool before calling it (the server has the last word: a
//! tool it answers but does not list still works); a server that answers `tools/list`
//! with an error is no error of `call` (the call is still made); `tools` reports it.

use serde_json::{Value, json};

use crate::downstream::client::{ClientError, Reply, Session};

/// Most `tools/list` pages followed (a server that keeps giving cursors is stopped here).
pub const MAX_PAGES: usize = 100;

/// How close (Jaro–Winkler, 0 to 1) a tool's name must be to the one asked for to be
/// suggested; clap suggests subcommands at the same bound.
const SUGGEST_SIMILARITY: f64 = 0.7;

/// What the server answered to `tools/list`.
pub enum Listing {
    /// Every tool of every page followed.
    Tools(Vec<Value>),
    /// A JSON-RPC error answer (to the first page that had one).
    Refused(Reply),
}

/// Lists the server's tools, following `nextCursor` for at most [`MAX_PAGES`] pages.
pub async fn list(session: &mut Session) -> Result<Listing, ClientError> {
    let mut tools = Vec::new();
    let mut cursor: Option<Value> = None;
    for _ in 0..MAX_PAGES {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let reply = session.request("tools/list", params).await?;
        if reply.error().is_some() {
            return Ok(Listing::Refused(reply));
        }
        let result = &reply.value["result"];
        tools.extend(result["tools"].as_array().cloned().unwrap_or_default());
        cursor = result.get("nextCursor").filter(|c| !c.is_null()).cloned();
        if cursor.is_none() {
            break;
        }
    }
    Ok(Listing::Tools(tools))
}

/// What `call` does between the handshake and its `tools/call`: lists the tools (the
/// listing, or `None` when the server refused to list). A replay of a tape whose client
/// never listed (`mcporter call`, or an older `mcptape call`) does not list either, so
/// it still replays as recorded.
pub async fn before_call(session: &mut Session) -> Result<Option<Vec<Value>>, ClientError> {
    if !session.lists_tools() {
        return Ok(None);
    }
    Ok(match list(session).await? {
        Listing::Tools(tools) => Some(tools),
        Listing::Refused(_) => None,
    })
}

/// The failure of a call, said better when `tool` is not in `listed` (the server's
/// listing): the server, the closest tool and every tool, with the server's own refusal
/// as the cause. The server has the last word: a tool it does not list but answers is
/// not an error, and only a failed call is explained.
pub fn explain(
    err: ClientError,
    server: &str,
    tool: &str,
    listed: Option<&[Value]>,
) -> ClientError {
    let Some(tools) = listed else {
        return err;
    };
    if !matches!(
        err,
        ClientError::Answered { .. } | ClientError::ToolFailed { .. }
    ) {
        return err;
    }
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    if names.contains(&tool) {
        return err;
    }
    let mut hint = String::new();
    if let Some(near) = closest(tool, &names) {
        hint.push_str(&format!("; did you mean `{near}`?"));
    }
    hint.push_str(&match names.as_slice() {
        [] => " (it lists no tools)".to_owned(),
        names => format!(
            " (its tools: {})",
            names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    });
    ClientError::UnknownTool {
        server: server.to_owned(),
        tool: tool.to_owned(),
        hint,
        source: Box::new(err),
    }
}

/// The name in `names` most like `asked`, when one is like it at all.
fn closest<'a>(asked: &str, names: &[&'a str]) -> Option<&'a str> {
    names
        .iter()
        .map(|n| (strsim::jaro_winkler(asked, n), *n))
        .filter(|&(score, _)| score > SUGGEST_SIMILARITY)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, n)| n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools(names: &[&str]) -> Vec<Value> {
        names.iter().map(|n| json!({"name": n})).collect()
    }

    fn refused(tool: &str) -> ClientError {
        ClientError::Answered {
            server: "example".into(),
            request: format!("tools/call {tool}"),
            code: "-32602".into(),
            message: format!("unknown tool: {tool}"),
        }
    }

    #[test]
    fn a_listed_tool_keeps_its_error() {
        let err = explain(
            refused("echo"),
            "example",
            "echo",
            Some(&tools(&["add", "echo"])),
        );
        assert!(matches!(err, ClientError::Answered { .. }), "{err}");
        let err = explain(refused("x"), "example", "x", None);
        assert!(matches!(err, ClientError::Answered { .. }), "{err}");
    }

    #[test]
    fn an_unknown_tool_names_the_server_the_closest_tool_and_every_tool() {
        let listed = tools(&["echo", "add", "greet"]);
        let err = explain(refused("ecoh"), "example", "ecoh", Some(&listed));
        assert_eq!(
            err.to_string(),
            "server `example` has no tool `ecoh`; did you mean `echo`? (its tools: `echo`, `add`, `greet`)"
        );
        let cause = std::error::Error::source(&err).expect("the server's refusal");
        assert!(cause.to_string().contains("unknown tool: ecoh"), "{cause}");
    }

    #[test]
    fn nothing_alike_is_not_suggested() {
        let err = explain(refused("zzzz"), "s", "zzzz", Some(&tools(&["echo"])));
        assert_eq!(
            err.to_string(),
            "server `s` has no tool `zzzz` (its tools: `echo`)"
        );
        let err = explain(refused("echo"), "s", "echo", Some(&[]));
        assert_eq!(
            err.to_string(),
            "server `s` has no tool `echo` (it lists no tools)"
        );
    }
}
