//! Playing an imported connection (`mcptape import`, [`crate::tape::source`]): its
//! handshake was made up, so verify plays its own — mcptape's `initialize` (as `call`
//! sends it) in place of the synthesized one, whose answer is not compared — and, as the
//! tape holds no `tools/list`, asks the live server for its tools once the handshake is
//! done: the tools its answer marks `readOnlyHint: true` are the read-only ones of this
//! connection (the gate for the others is `--allow-writes`, as for any tape). An answer
//! the transcript held only in part (`incomplete`) is compared without its `content`.

use std::collections::HashSet;

use serde_json::{Value, json};

use crate::downstream::client::PROTOCOL_VERSION;
use crate::message::Message;
use crate::tape::Entry;

/// The id of verify's own `tools/list` requests (raw JSON): no recorded id is a string.
pub const TOOLS_LIST_ID: &str = "\"mcptape-verify/tools-list\"";
/// The most `tools/list` pages asked for.
pub const MAX_PAGES: usize = 100;

/// True for the connection's synthesized `initialize` request.
pub fn is_made_up_initialize(entry: &Entry) -> bool {
    entry.meta.synthesized() && entry.message.method() == Some("initialize")
}

/// True for the connection's synthesized `notifications/initialized`: the handshake is
/// done once it is sent.
pub fn is_made_up_initialized(entry: &Entry) -> bool {
    entry.meta.synthesized() && entry.message.method() == Some("notifications/initialized")
}

/// mcptape's own `initialize`, with the recorded request's id.
pub fn own_initialize(recorded: &Message) -> Message {
    let id: Value = recorded
        .id()
        .and_then(|id| serde_json::from_str(id).ok())
        .unwrap_or(json!(0));
    Message::new(
        json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "mcptape", "version": env!("CARGO_PKG_VERSION")},
        }})
        .to_string(),
    )
}

/// A `tools/list` request, from `cursor` when given.
pub fn tools_list(cursor: Option<&Value>) -> Message {
    let mut request =
        json!({"jsonrpc": "2.0", "id": "mcptape-verify/tools-list", "method": "tools/list"});
    if let Some(cursor) = cursor {
        request["params"] = json!({"cursor": cursor});
    }
    Message::new(request.to_string())
}

/// The tools a `tools/list` answer marks read-only, added to `out`; the next page's
/// cursor, if any.
pub fn read_only_of(answer: &Message, out: &mut HashSet<String>) -> Option<Value> {
    let v = answer.value();
    for tool in v["result"]["tools"].as_array().into_iter().flatten() {
        if tool["annotations"]["readOnlyHint"] == Value::Bool(true)
            && let Some(name) = tool["name"].as_str()
        {
            out.insert(name.to_owned());
        }
    }
    v["result"]
        .get("nextCursor")
        .filter(|c| !c.is_null())
        .cloned()
}

/// Leaves `result.content` out of both answers when the recorded one is incomplete.
pub fn without_unknown(recorded: &Entry, recorded_answer: &mut Value, live: &mut Value) {
    if recorded.meta.incomplete().is_none() {
        return;
    }
    for answer in [recorded_answer, live] {
        if let Some(Value::Object(result)) = answer.get_mut("result") {
            result.remove("content");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tape::Tape;

    #[test]
    fn own_initialize_keeps_the_recorded_id_and_is_mcptapes() {
        let recorded = Message::new(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"claude-code"}}}"#,
        );
        let own = own_initialize(&recorded).value();
        assert_eq!(own["id"], 0);
        assert_eq!(own["params"]["clientInfo"]["name"], "mcptape");
        assert_eq!(own["params"]["protocolVersion"], PROTOCOL_VERSION);
    }

    #[test]
    fn read_only_tools_and_pages_come_from_the_live_answer() {
        let answer = Message::new(
            r#"{"jsonrpc":"2.0","id":"mcptape-verify/tools-list","result":{"tools":[{"name":"a","annotations":{"readOnlyHint":true}},{"name":"b"}],"nextCursor":"p2"}}"#,
        );
        let mut out = HashSet::new();
        assert_eq!(read_only_of(&answer, &mut out), Some(json!("p2")));
        assert_eq!(out, HashSet::from(["a".to_owned()]));
        assert_eq!(
            tools_list(Some(&json!("p2"))).value()["params"]["cursor"],
            "p2"
        );
        assert_eq!(tools_list(None).id(), Some(TOOLS_LIST_ID));
    }

    #[test]
    fn only_an_incomplete_answer_loses_its_content() {
        let line = |source: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"result":{{"content":[],"isError":true}},"_meta":{{"dir":"recv","server":"s","source":{source}}}}}"#
            )
        };
        let text = [
            line(r#"{"imported":"claude-code","incomplete":"cut"}"#),
            line(r#"{"imported":"claude-code"}"#),
        ]
        .join("\n");
        let tape = Tape::parse(std::path::Path::new("t"), text.as_bytes()).expect("tape");
        let mut recorded = json!({"result": {"content": [1], "isError": true}});
        let mut live = json!({"result": {"content": [2]}});
        without_unknown(&tape.entries[0], &mut recorded, &mut live);
        assert_eq!(
            (&recorded, &live),
            (
                &json!({"result": {"isError": true}}),
                &json!({"result": {}})
            )
        );
        let mut recorded = json!({"result": {"content": [1]}});
        without_unknown(&tape.entries[1], &mut recorded, &mut live);
        assert_eq!(recorded, json!({"result": {"content": [1]}}));
    }
}
