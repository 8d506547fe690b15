//! `mcptape tools SERVER`: the server's tools, with their input schemas and annotations,
//! through the built-in client (recorded or replayed like `call`).

use serde_json::Value;

use crate::cli;
use crate::cmd::call::listing::{self, Listing};
use crate::cmd::call::{answered, initialized};
use crate::downstream::client::Session;
use crate::error::Result;
use crate::outcome::Outcome;
use crate::term::line;

impl cli::Tools {
    /// Lists the tools.
    pub fn run(self) -> Result<Outcome> {
        let server = self.server.as_str();
        let conversation = self.client.conversation(server);
        let json_out = self.json;
        conversation.run(async |session: &mut Session| {
            initialized(&session.initialize().await?, server)?;
            let tools = match listing::list(session).await? {
                Listing::Tools(tools) => tools,
                Listing::Refused(reply) => return Err(answered(&reply, server, "tools/list")),
            };
            if json_out {
                println!("{}", crate::term::json_pretty(&Value::Array(tools)));
            } else {
                print!("{}", crate::term::block(&describe(&tools)));
            }
            Ok(Outcome::Ok)
        })
    }
}

/// The tools for a person: name, hints, description, then each argument; each value
/// from the server escaped on its line, so none can forge a line of its own.
pub fn describe(tools: &[Value]) -> String {
    let mut out = String::new();
    for tool in tools {
        let name = line(tool["name"].as_str().unwrap_or("?"));
        let a = &tool["annotations"];
        let mut hints = Vec::new();
        for (key, word) in [
            ("readOnlyHint", "read-only"),
            ("destructiveHint", "destructive"),
            ("idempotentHint", "idempotent"),
            ("openWorldHint", "open-world"),
        ] {
            match a[key].as_bool() {
                Some(true) => hints.push(word.to_owned()),
                Some(false) => hints.push(format!("not {word}")),
                None => {}
            }
        }
        let hints = if hints.is_empty() {
            String::new()
        } else {
            format!("  [{}]", hints.join(", "))
        };
        out.push_str(&format!("{name}{hints}\n"));
        if let Some(d) = tool["description"].as_str() {
            out.push_str(&format!("  {}\n", line(d.lines().next().unwrap_or(""))));
        }
        let schema = &tool["inputSchema"];
        let required: Vec<&str> = schema["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r.as_str())
            .collect();
        for (arg, spec) in schema["properties"].as_object().into_iter().flatten() {
            let ty = match &spec["type"] {
                Value::String(t) => t.clone(),
                Value::Array(ts) => ts
                    .iter()
                    .filter_map(|t| t.as_str())
                    .collect::<Vec<_>>()
                    .join("|"),
                _ => "any".into(),
            };
            let req = if required.contains(&arg.as_str()) {
                ""
            } else {
                "?"
            };
            let about = spec["description"]
                .as_str()
                .map(|d| format!("  {}", line(d)))
                .unwrap_or_default();
            out.push_str(&format!("    {}{req}: {}{about}\n", line(arg), line(&ty)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn describe_escapes_what_the_server_wrote() {
        let tools = [json!({
            "name": "x\u{1b}]0;title\u{7}\n  ok forged",
            "description": "\u{9b}2J first line\u{202e}\nsecond",
            "inputSchema": {"properties": {"a\nb": {"type": "string", "description": "d\r\u{1b}[2J"}}},
        })];
        let text = describe(&tools);
        assert_eq!(
            text,
            "x\\x1b]0;title\\x07\\n  ok forged\n  \\u{9b}2J first line\\u{202e}\n    a\\nb?: string  d\\r\\x1b[2J\n"
        );
    }
}
