//! What the gate answers in the server's place: a `tools/call` refusal (a normal result
//! with `isError: true`, so that an agent reads it and goes on), a dry run's result, and
//! for any other gated method a JSON-RPC error ([`REFUSED_CODE`]: an `isError` result is a
//! `tools/call` shape, which another method's client would not read).
//!
//! A dry run never claims a success the tool's `outputSchema` would refuse: a tool that
//! declared one gets its dry run as `isError: true` (a client validates only successful
//! results against the schema, and a success without conforming `structuredContent`
//! breaks it — the Python SDK raises); a tool that declared none, or that the server never
//! listed, gets `isError: false`. Neither carries `structuredContent`.

use serde_json::{Value, json};

use crate::message::Message;

/// The JSON-RPC error code of a gated method other than `tools/call` that the gate
/// refused or ran dry (mcptape's range; replay's divergence is -32090).
pub const REFUSED_CODE: i64 = -32091;

/// The text of a refusal: `Tool call blocked by policy: RULES`, and why when a person or
/// the clock decided (`(denied by …: reason)`).
pub fn refusal_text(rules: &str, why: Option<&str>) -> String {
    match why {
        Some(why) => format!("Tool call blocked by policy: {rules} ({why})"),
        None => format!("Tool call blocked by policy: {rules}"),
    }
}

/// The text of a dry run of `tool` with `arguments`.
pub fn dry_run_text(tool: &str, arguments: &Value, rules: &str) -> String {
    let args = match arguments {
        Value::Null => "{}".to_owned(),
        v => v.to_string(),
    };
    format!(
        "Dry run: tool `{tool}` was not executed (policy: {rules}). It would have run with arguments: {args}"
    )
}

/// A `tools/call` result for request `id` (its raw JSON text).
pub fn tool_result(id: &str, text: &str, is_error: bool) -> Message {
    let result = json!({"content": [{"type": "text", "text": text}], "isError": is_error});
    Message::new(format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#
    ))
}

/// The JSON-RPC error for request `id` (raw JSON text) of a method other than
/// `tools/call`.
pub fn error(id: &str, message: &str, data: &Value) -> Message {
    let error = json!({"code": REFUSED_CODE, "message": message, "data": data});
    Message::new(format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{error}}}"#))
}

/// The message of that error: refused, or not executed (a dry run).
pub fn error_message(method: &str, rules: &str, dry_run: bool, why: Option<&str>) -> String {
    let why = why.map(|w| format!(" ({w})")).unwrap_or_default();
    if dry_run {
        format!("Dry run: `{method}` was not executed (policy: {rules}){why}")
    } else {
        format!("`{method}` blocked by policy: {rules}{why}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_is_a_normal_tool_result_with_the_same_id() {
        let m = tool_result(r#""a-1""#, &refusal_text("no-rm", None), true);
        let v = m.value();
        assert_eq!(v["id"], "a-1");
        assert_eq!(v["result"]["isError"], true);
        assert_eq!(
            v["result"]["content"][0]["text"],
            "Tool call blocked by policy: no-rm"
        );
        let e = error(
            "7",
            &error_message("resources/read", "default", false, None),
            &json!({}),
        );
        assert_eq!(e.value()["error"]["code"], REFUSED_CODE);
        assert_eq!(e.id(), Some("7"));
    }
}
