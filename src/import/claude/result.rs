//! A Claude Code `tool_result` block (and the entry around it) → the MCP answer it was.
//!
//! What Claude Code keeps of an MCP `CallToolResult` (read from transcripts it wrote,
//! version 2.1): the block's `content` is a string (one text block, or a tool error's
//! text) or a list of Anthropic content blocks (`text`, `image` with a base64 `source`);
//! `is_error` is the result's `isError`; the entry's `toolUseResult` holds the whole
//! content list even when `content` was shortened; `mcpMeta` holds `structuredContent`,
//! `_meta` and the `resourceLinks` whose `resource_link` blocks became text. A result too
//! long for the model is replaced by a notice naming a file under the session's
//! `tool-results/` (`<persisted-output>` … `Full output saved to: PATH`, or `… Output has
//! been saved to PATH.`): that file, when it is still there, holds the whole content
//! (a JSON list of blocks, or the text). Otherwise the answer is the notice, marked
//! incomplete. So is a result with `structuredContent` whose `content` Claude Code
//! replaced by that JSON (the server's own text is gone). A tool error whose text is `MCP error CODE: MESSAGE` is the JSON-RPC error
//! the SDK turned into text.

use std::path::Path;

use serde_json::{Map, Value, json};

use crate::import::Answer;

/// What an answer is, and what the transcript lacks of it.
pub struct Reconstructed {
    /// The answer.
    pub answer: Answer,
    /// Set when the transcript holds it only in part.
    pub incomplete: Option<String>,
}

/// Reads the answer of `block` (a `tool_result`) in `entry`; `results` is the session's
/// `tool-results/` directory, where stored-aside results are looked up by file name.
pub fn of(block: &Value, entry: &Value, results: &Path) -> Reconstructed {
    let is_error = block["is_error"] == Value::Bool(true);
    let mut incomplete = None;
    let content = match (&block["content"], &entry["toolUseResult"]) {
        // The whole list, also when the model saw a shortened one.
        (_, Value::Array(full)) if !is_error => blocks(full),
        (Value::String(text), _) => match stored_aside(text) {
            Some(name) => match read_aside(results, &name) {
                Some(content) => content,
                None => {
                    incomplete = Some(format!(
                        "Claude Code stored the result aside as `{name}`, which is not in `{}`; the tape holds its notice",
                        results.display()
                    ));
                    vec![text_block(text)]
                }
            },
            None => vec![text_block(text)],
        },
        (Value::Array(list), _) => blocks(list),
        _ => Vec::new(),
    };
    if is_error && let Some(error) = rpc_error(&content) {
        return Reconstructed {
            answer: Answer::Error(error),
            incomplete,
        };
    }
    let meta = &entry["mcpMeta"];
    if incomplete.is_none() && shows_structured(&block["content"], &meta["structuredContent"]) {
        incomplete = Some(STRUCTURED_SHOWN.to_owned());
    }
    let content = with_resource_links(content, &meta["resourceLinks"]);
    let mut result = Map::new();
    result.insert("content".into(), Value::Array(content));
    if let Some(structured) = meta.get("structuredContent").filter(|v| !v.is_null()) {
        result.insert("structuredContent".into(), structured.clone());
    }
    if let Some(m) = meta.get("_meta").filter(|v| v.is_object()) {
        result.insert("_meta".into(), m.clone());
    }
    if is_error {
        result.insert("isError".into(), Value::Bool(true));
    }
    Reconstructed {
        answer: Answer::Result(Value::Object(result)),
        incomplete,
    }
}

/// Why a result with `structuredContent` lacks its text: Claude Code shows the model the
/// structured content's JSON in place of the server's `content`.
const STRUCTURED_SHOWN: &str = "Claude Code keeps the structuredContent's JSON in place of the text content: the server's content is not in the transcript";

/// True when `content` is the JSON of `structured` (a string that parses to it).
fn shows_structured(content: &Value, structured: &Value) -> bool {
    !structured.is_null()
        && content
            .as_str()
            .and_then(|t| serde_json::from_str::<Value>(t).ok())
            .is_some_and(|v| &v == structured)
}

fn text_block(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

/// Anthropic content blocks → MCP content blocks: an image's base64 `source` becomes
/// `data` and `mimeType`; a bare string a text block; anything else is kept.
fn blocks(list: &[Value]) -> Vec<Value> {
    list.iter()
        .map(|b| match b {
            Value::String(s) => text_block(s),
            b if b["type"] == "image" && b["source"]["type"] == "base64" => json!({
                "type": "image",
                "data": b["source"]["data"],
                "mimeType": b["source"]["media_type"],
            }),
            b => b.clone(),
        })
        .collect()
}

/// The file name of a result Claude Code stored aside, from its notice.
fn stored_aside(text: &str) -> Option<String> {
    let path = if let Some(rest) = text.strip_prefix("<persisted-output>") {
        let at = rest.find("saved to: ")? + "saved to: ".len();
        rest[at..].lines().next()?.trim()
    } else {
        let at = text.find("Output has been saved to ")? + "Output has been saved to ".len();
        let rest = &text[at..];
        let end = rest.find(['\n']).unwrap_or(rest.len());
        rest[..end].trim().trim_end_matches('.')
    };
    let name = Path::new(path).file_name()?.to_str()?;
    path.contains("tool-results")
        .then(|| name.to_owned())
        .filter(|n| !n.is_empty())
}

/// The content of a stored-aside result, by file name only (never a path the transcript
/// names elsewhere): a JSON list of blocks, or the text.
fn read_aside(results: &Path, name: &str) -> Option<Vec<Value>> {
    // No link is followed: not `tool-results/`, nor the session's directory above it.
    let real = crate::import::claude::real_dir;
    if !real(results) || !results.parent().is_some_and(real) {
        return None;
    }
    let bytes = crate::import::file::read_small(&results.join(name))?;
    let text = String::from_utf8_lossy(&bytes);
    if name.ends_with(".json")
        && let Ok(Value::Array(list)) = serde_json::from_str::<Value>(&text)
    {
        return Some(blocks(&list));
    }
    Some(vec![text_block(&text)])
}

/// `MCP error -32602: unknown tool: x` as a JSON-RPC error object.
fn rpc_error(content: &[Value]) -> Option<Value> {
    let [only] = content else { return None };
    let text = only["text"].as_str()?.trim();
    let rest = text.strip_prefix("MCP error ")?;
    let (code, message) = rest.split_once(": ")?;
    let code: i64 = code.trim().parse().ok()?;
    Some(json!({"code": code, "message": message}))
}

/// Turns the text blocks Claude Code made of `resource_link` blocks
/// (`[Resource link: NAME] URI …`) back into them, from `mcpMeta.resourceLinks`.
fn with_resource_links(content: Vec<Value>, links: &Value) -> Vec<Value> {
    let Some(links) = links.as_array().filter(|l| !l.is_empty()) else {
        return content;
    };
    let mut unused: Vec<&Value> = links.iter().collect();
    content
        .into_iter()
        .map(|b| {
            let Some(text) = b["text"].as_str().filter(|_| b["type"] == "text") else {
                return b;
            };
            let found = unused.iter().position(|l| {
                let (Some(name), Some(uri)) = (l["name"].as_str(), l["uri"].as_str()) else {
                    return false;
                };
                text.starts_with(&format!("[Resource link: {name}] {uri}"))
            });
            match found {
                Some(i) => {
                    let mut link = unused.remove(i).clone();
                    if let Value::Object(m) = &mut link {
                        let mut out = Map::new();
                        out.insert("type".into(), json!("resource_link"));
                        out.extend(std::mem::take(m));
                        link = Value::Object(out);
                    }
                    link
                }
                None => b,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(block: Value, entry: Value) -> Reconstructed {
        of(&block, &entry, Path::new("/nonexistent/tool-results"))
    }

    fn result(r: &Reconstructed) -> &Value {
        match &r.answer {
            Answer::Result(v) => v,
            Answer::Error(e) => panic!("an error: {e}"),
        }
    }

    #[test]
    fn a_string_is_one_text_block_and_is_error_is_kept() {
        let r = answer(
            json!({"type": "tool_result", "content": "no", "is_error": true}),
            json!({"toolUseResult": "Error: no"}),
        );
        assert_eq!(
            result(&r),
            &json!({"content": [{"type": "text", "text": "no"}], "isError": true})
        );
        assert!(r.incomplete.is_none());
    }

    #[test]
    fn the_full_list_wins_over_a_shortened_content() {
        let r = answer(
            json!({"content": "<persisted-output>\nOutput too large. Full output saved to: /x/tool-results/a.json\n"}),
            json!({"toolUseResult": [{"type": "text", "text": "all of it"}]}),
        );
        assert_eq!(result(&r)["content"][0]["text"], "all of it");
        assert!(r.incomplete.is_none());
    }

    #[test]
    fn a_stored_aside_result_that_is_gone_is_marked() {
        let notice = "Error: result (3,000,000 characters across 1 line) exceeds maximum allowed tokens. Output has been saved to /h/p/s/tool-results/mcp-x-big-1-a.txt.\nFormat: Plain text";
        let r = answer(json!({"content": notice}), json!({"toolUseResult": notice}));
        assert_eq!(result(&r)["content"][0]["text"], notice);
        let why = r.incomplete.expect("marked incomplete");
        assert!(why.contains("mcp-x-big-1-a.txt"), "{why}");
    }

    #[test]
    fn a_stored_aside_result_is_followed_by_its_file_name_only() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("r.txt"), "xxxx").expect("write");
        let notice =
            "… Output has been saved to /elsewhere/tool-results/r.txt.\nFormat: Plain text";
        let r = of(&json!({"content": notice}), &json!({}), dir.path());
        assert_eq!(
            result(&r)["content"],
            json!([{"type": "text", "text": "xxxx"}])
        );
        assert!(r.incomplete.is_none());
        let outside = "… Output has been saved to /etc/passwd.";
        let r = of(&json!({"content": outside}), &json!({}), dir.path());
        assert_eq!(result(&r)["content"][0]["text"], outside);
    }

    #[test]
    fn images_structured_content_and_resource_links_are_mcp_again() {
        let r = answer(
            json!({"content": [
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAA"}},
                {"type": "text", "text": "[Resource link: R1] demo://r/1 (first)"}
            ]}),
            json!({"mcpMeta": {
                "structuredContent": {"sum": 5},
                "_meta": {"k": 1},
                "resourceLinks": [{"uri": "demo://r/1", "name": "R1", "mimeType": "text/plain"}]
            }}),
        );
        assert_eq!(
            result(&r),
            &json!({
                "content": [
                    {"type": "image", "data": "AAA", "mimeType": "image/png"},
                    {"type": "resource_link", "uri": "demo://r/1", "name": "R1", "mimeType": "text/plain"}
                ],
                "structuredContent": {"sum": 5},
                "_meta": {"k": 1}
            })
        );
    }

    #[test]
    fn an_mcp_error_text_is_the_json_rpc_error() {
        let r = answer(
            json!({"content": "MCP error -32602: unknown tool: x", "is_error": true}),
            json!({}),
        );
        match r.answer {
            Answer::Error(e) => {
                assert_eq!(e, json!({"code": -32602, "message": "unknown tool: x"}))
            }
            Answer::Result(v) => panic!("not an error: {v}"),
        }
    }
}
