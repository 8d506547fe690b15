use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::*;
use crate::policy::answer::REFUSED_CODE;
use crate::policy::file::parse;
use crate::policy::index::ToolIndex;

const POLICY: &str = r#"
default = "allow"

[[rule]]
id = "no-delete"
decision = "deny"
tool = "delete_*"

[[rule]]
id = "rehearse"
decision = "dry-run"
tool = ["write_file", "report"]

[[rule]]
id = "destructive"
decision = "deny"
annotations = { destructiveHint = true }
server = "fs"
tool = "move_*"

[[rule]]
id = "needs-ok"
decision = "ask"
tool = "publish"

[[rule]]
id = "quiet"
decision = "deny"
method = ["notifications/roots/list_changed", "resources/read"]
"#;

fn layer(timeout: Duration) -> PolicyLayer {
    let gate = Gate {
        policy: parse(POLICY, "--policy `p.toml`").expect("policy"),
        server: "fs".into(),
        index: ToolIndex::new(),
        timeout,
        desk: None,
    };
    PolicyLayer::new(Arc::new(gate))
}

fn call(id: u64, tool: &str, args: Value) -> Message {
    let msg = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                     "params": {"name": tool, "arguments": args}});
    Message::new(msg.to_string())
}

fn answered(step: Step) -> Value {
    match step {
        Step::Answer(mut msgs) => {
            assert_eq!(msgs.len(), 1);
            msgs.remove(0).value()
        }
        _ => panic!("not answered here"),
    }
}

fn decisions(layer: &mut PolicyLayer) -> Vec<Value> {
    layer
        .events()
        .into_iter()
        .map(|(kind, params)| {
            assert_eq!(kind, LifecycleKind::PolicyDecision);
            params
        })
        .collect()
}

#[test]
fn a_denied_call_is_answered_with_an_is_error_result_of_its_own_id() {
    let mut l = layer(Duration::from_secs(300));
    let v = answered(l.client(call(7, "delete_file", json!({"path": "/x"}))));
    assert_eq!(v["id"], 7);
    assert_eq!(
        v["result"],
        json!({"content": [{"type": "text", "text": "Tool call blocked by policy: no-delete"}], "isError": true})
    );
    let told = decisions(&mut l);
    assert_eq!(told.len(), 1);
    assert_eq!(told[0]["decision"], "deny");
    assert_eq!(told[0]["resolution"], "refused");
    assert_eq!(told[0]["rules"], json!(["no-delete"]));
    assert_eq!(told[0]["tool"], "delete_file");
    assert_eq!(told[0]["id"], 7);
    assert!(decisions(&mut l).is_empty(), "told once");
}

#[test]
fn an_allowed_call_passes_and_is_told() {
    let mut l = layer(Duration::from_secs(300));
    let msg = call(1, "read_file", json!({}));
    match l.client(msg.clone()) {
        Step::Pass(m) => assert_eq!(m.raw(), msg.raw()),
        _ => panic!("not passed"),
    }
    let told = decisions(&mut l);
    assert_eq!(
        (told[0]["decision"].as_str(), told[0]["resolution"].as_str()),
        (Some("allow"), Some("allowed"))
    );
    assert_eq!(told[0]["rules"], json!([]));
}

#[test]
fn a_dry_run_says_it_did_not_run_and_respects_an_output_schema() {
    let mut l = layer(Duration::from_secs(300));
    let v = answered(l.client(call(
        2,
        "write_file",
        json!({"path": "/tmp/a", "content": "hi"}),
    )));
    let text = v["result"]["content"][0]["text"].as_str().expect("text");
    assert!(
        text.contains("Dry run: tool `write_file` was not executed (policy: rehearse)"),
        "{text}"
    );
    assert!(
        text.contains(r#"{"path":"/tmp/a","content":"hi"}"#),
        "{text}"
    );
    assert_eq!(v["result"]["isError"], false);
    assert!(v["result"].get("structuredContent").is_none());
    assert_eq!(decisions(&mut l)[0]["resolution"], "dry-run");

    // A tool whose listing declared an outputSchema: a dry run is no success it lacks.
    let list = Message::new(r#"{"jsonrpc":"2.0","id":"l","method":"tools/list"}"#);
    assert!(matches!(l.client(list), Step::Pass(_)));
    let listing = json!({"jsonrpc": "2.0", "id": "l", "result": {"tools": [
        {"name": "report", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}}]}});
    assert!(matches!(
        l.server(Message::new(listing.to_string())),
        Step::Pass(_)
    ));
    let v = answered(l.client(call(3, "report", json!({}))));
    assert_eq!(v["result"]["isError"], true);
}

#[test]
fn annotations_come_from_the_listing_and_an_unlisted_tool_gets_the_spec_defaults() {
    let mut l = layer(Duration::from_secs(300));
    // Never listed: destructive by default.
    let v = answered(l.client(call(1, "move_file", json!({}))));
    assert_eq!(
        v["result"]["content"][0]["text"],
        "Tool call blocked by policy: destructive"
    );
    let list = Message::new(r#"{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{}}"#);
    let _ = l.client(list);
    let listing = json!({"jsonrpc": "2.0", "id": 9, "result": {"tools": [
        {"name": "move_file", "annotations": {"destructiveHint": false}}]}});
    let _ = l.server(Message::new(listing.to_string()));
    assert!(matches!(
        l.client(call(2, "move_file", json!({}))),
        Step::Pass(_)
    ));
    // A fresh connection of the same stack shares the index.
    let mut other = PolicyLayer::new(Arc::clone(&l.gate));
    assert!(matches!(
        other.client(call(3, "move_file", json!({}))),
        Step::Pass(_)
    ));
}

#[test]
fn other_methods_are_gated_only_when_named_and_refused_with_a_json_rpc_error() {
    let mut l = layer(Duration::from_secs(300));
    let read = Message::new(
        r#"{"jsonrpc":"2.0","id":"r","method":"resources/read","params":{"uri":"file:///a"}}"#,
    );
    let v = answered(l.client(read));
    assert_eq!(v["id"], "r");
    assert_eq!(v["error"]["code"], REFUSED_CODE);
    assert_eq!(
        v["error"]["message"],
        "`resources/read` blocked by policy: quiet"
    );
    assert_eq!(v["error"]["data"]["params"]["uri"], "file:///a");
    let prompt =
        Message::new(r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"x"}}"#);
    assert!(matches!(l.client(prompt), Step::Pass(_)));
    decisions(&mut l);
    assert!(matches!(
        l.client(Message::new(
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        )),
        Step::Pass(_)
    ));
    assert!(decisions(&mut l).is_empty(), "not gated, not told");
    let named = Message::new(r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#);
    assert!(matches!(l.client(named), Step::Drop));
    assert_eq!(decisions(&mut l)[0]["resolution"], "refused");
}

#[test]
fn an_ask_with_a_timeout_of_zero_is_refused_at_once_saying_why() {
    let mut l = layer(Duration::ZERO);
    let v = answered(l.client(call(4, "publish", json!({}))));
    assert_eq!(
        v["result"]["content"][0]["text"],
        "Tool call blocked by policy: needs-ok (it needs a person's approval, and --approval-timeout is 0)"
    );
    let told = decisions(&mut l);
    assert_eq!(told[0]["decision"], "ask");
    assert_eq!(told[0]["resolution"], "refused");
}

#[test]
fn a_cancel_of_a_call_not_held_passes_on() {
    let mut l = layer(Duration::from_secs(300));
    let cancel = Message::new(
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}"#,
    );
    assert!(matches!(l.client(cancel), Step::Pass(_)));
}

#[test]
fn a_batch_passes_whole_when_all_is_allowed_else_none_of_it_is_sent() {
    let mut l = layer(Duration::from_secs(300));
    let ok = format!(
        "[{},{}]",
        call(1, "read_file", json!({})).text(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
    );
    assert!(matches!(l.client(Message::new(ok)), Step::Pass(_)));
    assert_eq!(decisions(&mut l).len(), 1);
    let mixed = format!(
        "[{},{},{}]",
        call(1, "read_file", json!({})).text(),
        call(2, "delete_file", json!({})).text(),
        r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#
    );
    let v = answered(l.client(Message::new(mixed)));
    let answers = v.as_array().expect("a batch answer");
    assert_eq!(answers.len(), 3);
    assert_eq!(answers[0]["error"]["code"], REFUSED_CODE);
    assert_eq!(answers[1]["result"]["isError"], true);
    assert_eq!(answers[2]["id"], 3);
    assert_eq!(answers[2]["error"]["code"], REFUSED_CODE);
    let told = decisions(&mut l);
    assert_eq!(told.len(), 2);
    assert!(told.iter().all(|t| t["resolution"] == "refused"));
}

/// A layer whose `ask`s wait on a real desk in a fresh home, and the home.
fn asking_layer() -> (
    PolicyLayer,
    crate::policy::approvals::Desk,
    tempfile::TempDir,
) {
    let home = tempfile::tempdir().expect("tempdir");
    let desk = crate::policy::approvals::Desk::in_home(home.path());
    let gate = Gate {
        policy: parse(POLICY, "--policy `p.toml`").expect("policy"),
        server: "fs".into(),
        index: ToolIndex::new(),
        timeout: Duration::from_secs(300),
        desk: Some(desk.clone()),
    };
    (PolicyLayer::new(Arc::new(gate)), desk, home)
}

#[tokio::test]
async fn a_held_call_whose_http_client_gives_up_is_withdrawn_and_told() {
    let (mut l, desk, _home) = asking_layer();
    let Step::Later(later) = l.client(call(6, "publish", json!({}))) else {
        panic!("not held");
    };
    assert_eq!(desk.pending().expect("list").len(), 1);
    l.cancelled("6");
    assert!(matches!(later.await, Step::Drop));
    let told = decisions(&mut l);
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(told[0]["resolution"], "withdrawn");
    assert!(desk.pending().expect("list").is_empty(), "off the desk");
}

#[test]
fn a_held_call_dropped_undecided_is_told_withdrawn() {
    let (mut l, desk, _home) = asking_layer();
    let step = l.client(call(7, "publish", json!({})));
    assert!(matches!(step, Step::Later(_)));
    assert!(decisions(&mut l).is_empty(), "nothing decided yet");
    // The connection ends (a signal, its close): the stack drops the future.
    drop(step);
    let told = decisions(&mut l);
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(
        (&told[0]["resolution"], &told[0]["reason"]),
        (
            &json!("withdrawn"),
            &json!("the connection ended before a decision")
        )
    );
    assert!(told[0]["approval"].as_str().is_some());
    assert!(
        desk.pending().expect("list").is_empty(),
        "withdrawn from the desk"
    );
}

#[test]
fn a_duplicate_key_is_read_as_the_servers_read_it_and_what_goes_on_is_that_reading() {
    let mut l = layer(Duration::from_secs(300));
    let dup = r#"{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call","params":{"name":"delete_file"}}"#;
    let v = answered(l.client(Message::new(dup)));
    assert_eq!(
        v["result"]["content"][0]["text"],
        "Tool call blocked by policy: no-delete"
    );
    // Allowed: forwarded as the gate read it, so the layers below read a request too.
    let dup =
        r#"{"jsonrpc":"2.0","id":2,"id":3,"method":"tools/call","params":{"name":"read_file"}}"#;
    match l.client(Message::new(dup)) {
        Step::Pass(m) => {
            assert_eq!(m.kind(), Kind::Request);
            assert_eq!((m.id(), m.method()), (Some("3"), Some("tools/call")));
        }
        _ => panic!("not passed"),
    }
    let told = decisions(&mut l);
    assert_eq!(told[1]["id"], 3);
}

#[test]
fn what_the_gate_cannot_read_is_answered_with_a_null_id_error_and_told() {
    let mut l = layer(Duration::from_secs(300));
    let big = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read_file","arguments":{"n":1e400}}}"#;
    let v = answered(l.client(Message::new(big)));
    assert_eq!(
        (&v["id"], &v["error"]["code"]),
        (&Value::Null, &json!(-32700))
    );
    let told = decisions(&mut l);
    assert_eq!(
        (&told[0]["id"], &told[0]["method"], &told[0]["error"]),
        (&json!(5), &json!("tools/call"), &json!(-32700))
    );
    assert_eq!(
        (&told[0]["decision"], &told[0]["rules"]),
        (&json!("deny"), &json!([]))
    );
    // Not a gated method, but not JSON either: refused all the same, its method unknown.
    let v = answered(l.client(Message::new(&b"{\"id\":1,\"x\":\"\xff\"}"[..])));
    assert_eq!(v["error"]["code"], -32700);
    assert_eq!(decisions(&mut l)[0]["method"], "?");
    // An id that is no string or integer, on a gated method only.
    for id in ["true", "[7]", "{}", "null", "1.5"] {
        let odd = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"read_file"}}}}"#
        );
        let v = answered(l.client(Message::new(odd)));
        assert_eq!(
            (&v["id"], &v["error"]["code"]),
            (&Value::Null, &json!(-32600)),
            "{id}"
        );
        let told = decisions(&mut l);
        assert_eq!(
            told[0]["id"],
            serde_json::from_str::<Value>(id).expect("id")
        );
    }
    let ping = Message::new(r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#);
    assert!(matches!(l.client(ping), Step::Pass(_)), "not gated");
    // Too deep to read whole: a gated call is refused, another message passes.
    let deep = |method: &str| {
        Message::new(format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{"name":"read_file","arguments":{{"d":{}{}}}}}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        ))
    };
    assert_eq!(
        answered(l.client(deep("tools/call")))["error"]["code"],
        -32600
    );
    assert!(matches!(l.client(deep("prompts/get")), Step::Pass(_)));
    // A batch with a gated member the gate cannot read is not sent.
    let batch = format!(
        r#"[{},{{"jsonrpc":"2.0","id":true,"method":"tools/call","params":{{"name":"read_file"}}}}]"#,
        call(1, "read_file", json!({})).text()
    );
    let v = answered(l.client(Message::new(batch)));
    let codes: Vec<&Value> = v
        .as_array()
        .expect("a batch answer")
        .iter()
        .map(|a| &a["error"]["code"])
        .collect();
    assert_eq!(codes, [&json!(-32600), &json!(REFUSED_CODE)]);
}
