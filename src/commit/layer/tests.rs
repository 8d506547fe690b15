//! The commit layer alone, and under the fault layer in one stack: what it hashes is the
//! server's answer, and it never changes a message.

use std::sync::Arc;

use super::*;
use crate::layer::{Flow, Layers};

fn layer(drop_bodies: bool) -> CommitLayer {
    CommitLayer::new(Commitments { drop_bodies })
}

fn call(id: &str, tool: &str) -> Message {
    Message::new(format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{}}}}}}"#
    ))
}

fn passed(step: Step) -> Message {
    match step {
        Step::Pass(m) => m,
        _ => panic!("expected the message passed on"),
    }
}

fn told(layer: &mut CommitLayer) -> Vec<CommitEntry> {
    layer
        .events()
        .into_iter()
        .map(|(kind, params)| {
            assert_eq!(kind, LifecycleKind::Commit);
            CommitEntry::read(&params).expect("a $commit")
        })
        .collect()
}

#[test]
fn a_tools_call_result_is_committed_and_passed_on_unchanged() {
    let mut l = layer(false);
    let sent = call("7", "echo");
    assert_eq!(passed(l.client(sent.clone())).raw(), sent.raw());
    assert!(told(&mut l).is_empty(), "nothing before the answer");
    let text = r#"{"jsonrpc":"2.0","id":7,"result":{ "content" : [{"type":"text","text":"hi"}], "n": 1.0 }}"#;
    assert_eq!(passed(l.server(Message::new(text))).raw(), text.as_bytes());
    let entries = told(&mut l);
    assert_eq!(entries.len(), 1);
    let e = &entries[0];
    assert_eq!(e.id.as_deref(), Some("7"));
    assert_eq!(e.tool.as_deref(), Some("echo"));
    assert_eq!(e.body, Body::Kept);
    let want = jcs::commitment(r#"{"content":[{"text":"hi","type":"text"}],"n":1}"#).expect("hash");
    assert_eq!(e.digest, Digest::Sha256(want));
    // Answered once: a second answer with the id is not a tools/call's.
    let _ = l.server(Message::new(text));
    assert!(told(&mut l).is_empty());
}

#[test]
fn only_tools_call_results_are_committed() {
    let mut l = layer(true);
    let _ = l.client(Message::new(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    ));
    let _ = l.server(Message::new(
        r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#,
    ));
    let _ = l.client(call("\"a\"", "x"));
    let _ = l.server(Message::new(
        r#"{"jsonrpc":"2.0","id":"a","error":{"code":-1,"message":"no"}}"#,
    ));
    // A server request with the id of a call answered already is not an answer.
    let _ = l.server(Message::new(
        r#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#,
    ));
    assert!(told(&mut l).is_empty(), "no result to commit to");
    // A cancelled call is forgotten: a late answer is not committed.
    let _ = l.client(call("2", "slow"));
    let _ = l.client(Message::new(
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#,
    ));
    let _ = l.server(Message::new(r#"{"jsonrpc":"2.0","id":2,"result":{}}"#));
    assert!(told(&mut l).is_empty());
    // Ids compare as JSON values; the body is to be dropped (--redact-results).
    let _ = l.client(call("3", "y"));
    let _ = l.server(Message::new(r#"{"jsonrpc":"2.0","id":3.0,"result":{}}"#));
    let e = told(&mut l);
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].body, Body::Dropped);
    assert_eq!(e[0].tool.as_deref(), Some("y"));
}

#[test]
fn a_result_without_a_canonical_form_gets_a_commit_that_says_why() {
    let mut l = layer(false);
    let _ = l.client(call("1", "cut"));
    let text = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\ud83d"}]}}"#;
    assert_eq!(passed(l.server(Message::new(text))).raw(), text.as_bytes());
    let e = told(&mut l);
    let Digest::None(reason) = &e[0].digest else {
        panic!("no hash: {e:?}")
    };
    assert!(reason.contains("lone UTF-16 surrogate"), "{reason}");
    let _ = l.client(call("2", "big"));
    let _ = l.server(Message::new(
        r#"{"jsonrpc":"2.0","id":2,"result":{"n":1e400}}"#,
    ));
    let e = told(&mut l);
    assert!(
        matches!(&e[0].digest, Digest::None(r) if r.contains("out of range")),
        "{e:?}"
    );
}

#[tokio::test]
async fn under_a_fault_it_commits_to_what_the_server_answered() {
    let rules = vec!["tools/call nth=1: tool-error disk full".to_owned()];
    let plan = crate::fault::FaultPlan::load(&rules, None)
        .expect("rule")
        .expect("some");
    let mut layers = Layers::new()
        .push(crate::fault::FaultLayer::new(Arc::new(plan)))
        .push(layer(false));
    assert!(layers.reads_first());
    let Flow::Up(_) = layers.client(call("1", "echo")) else {
        panic!("the call goes up");
    };
    let server = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"real"}]}}"#;
    let out = layers.server(Message::new(server));
    assert_eq!(out.len(), 1);
    assert!(
        out[0].text().contains("disk full"),
        "the client gets the fault"
    );
    // The commitment is to the server's answer: checked through a watching layer above.
    struct Watch(std::sync::Arc<std::sync::Mutex<Vec<Event>>>);
    impl Layer for Watch {
        fn event(&mut self, event: &Event) {
            self.0.lock().expect("lock").push(event.clone());
        }
    }
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut layers = Layers::new()
        .push(Watch(seen.clone()))
        .push(crate::fault::FaultLayer::new(Arc::new(
            crate::fault::FaultPlan::load(&rules, None)
                .expect("rule")
                .expect("some"),
        )))
        .push(layer(false));
    let _ = layers.client(call("1", "echo"));
    let _ = layers.server(Message::new(server));
    let seen = seen.lock().expect("lock");
    let kinds: Vec<&LifecycleKind> = seen.iter().map(|(k, _)| k).collect();
    assert_eq!(
        kinds,
        [&LifecycleKind::Commit, &LifecycleKind::Fault],
        "the $commit first, then the fault that changed the answer"
    );
    let entry = CommitEntry::read(&seen[0].1).expect("commit");
    let real = crate::message::raw_member(server, &["result"]).expect("result");
    assert_eq!(
        entry.digest,
        Digest::Sha256(jcs::commitment(real).expect("hash"))
    );
}

#[test]
fn a_tasks_result_is_committed_and_the_tap_gets_the_result_text() {
    let mut l = layer(true);
    let _ = l.client(Message::new(
        r#"{"jsonrpc":"2.0","id":4,"method":"tasks/result","params":{"taskId":"t1"}}"#,
    ));
    let result = r#"{"content":[{"type":"text","text":"report"}]}"#;
    let _ = l.server(Message::new(format!(
        r#"{{"jsonrpc":"2.0","id":4,"result":{result}}}"#
    )));
    let events = l.events();
    assert_eq!(events.len(), 1);
    let (_, params) = &events[0];
    assert_eq!(params[RESULT_PARAM], serde_json::json!(result));
    let e = CommitEntry::read(params).expect("a $commit");
    assert_eq!(e.id.as_deref(), Some("4"));
    assert_eq!(e.body, Body::Dropped);
    assert_eq!(
        e.digest,
        Digest::Sha256(jcs::commitment(result).expect("hash"))
    );
}
