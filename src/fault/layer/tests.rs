use super::*;

fn plan(rules: &[&str]) -> Arc<FaultPlan> {
    let rules: Vec<String> = rules.iter().map(|r| r.to_string()).collect();
    Arc::new(
        FaultPlan::load(&rules, None)
            .expect("good rules")
            .expect("some"),
    )
}

fn call(id: u32, tool: &str) -> Message {
    Message::new(format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}"}}}}"#
    ))
}

fn answer(id: u32) -> Message {
    Message::new(format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[]}}}}"#
    ))
}

fn passed(step: Step) -> Message {
    match step {
        Step::Pass(m) => m,
        _ => panic!("expected the message passed on"),
    }
}

#[test]
fn the_nth_call_of_a_tool_gets_the_error_and_the_fault_is_told() {
    let mut layer = FaultLayer::new(plan(&[
        r#"tools/call name=s nth=2: error -32000 "rate limited""#,
    ]));
    for id in 1..=3 {
        passed(layer.client(call(id, "s")));
        assert!(
            layer.events().is_empty(),
            "told at the answer, not the request"
        );
        let out = passed(layer.server(answer(id)));
        let events = layer.events();
        if id == 2 {
            assert_eq!(out.kind(), Kind::Error);
            assert_eq!(out.id(), Some("2"));
            assert_eq!(out.value()["error"]["message"], "rate limited");
            assert_eq!(events.len(), 1);
            assert_eq!(events[0].0, LifecycleKind::Fault);
            let entry = FaultEntry::read(&events[0].1).expect("typed");
            assert_eq!(entry.tool.as_deref(), Some("s"));
            assert_eq!(entry.index, 1);
            assert_eq!(
                entry.replaced.expect("replaced")["result"]["content"],
                serde_json::json!([])
            );
        } else {
            assert_eq!(out.kind(), Kind::Response, "call {id} untouched");
            assert!(events.is_empty());
        }
    }
}

#[test]
fn each_answer_effect_changes_the_answer() {
    let mut layer = FaultLayer::new(plan(&[
        "tools/call name=a: tool-error boom",
        "tools/call name=b: malformed",
        "tools/call name=c: timeout",
        "tools/call name=d: slow-stream",
        "tools/call name=e: disconnect 503",
        "notifications/progress: drop",
    ]));
    passed(layer.client(call(1, "a")));
    let out = passed(layer.server(answer(1)));
    assert_eq!(out.value()["result"]["isError"], true);
    assert_eq!(out.value()["result"]["content"][0]["text"], "boom");
    passed(layer.client(call(2, "b")));
    let out = passed(layer.server(answer(2)));
    assert_eq!(
        crate::message::shape(out.raw()),
        crate::message::Shape::Invalid
    );
    passed(layer.client(call(3, "c")));
    assert_eq!(
        layer.events().len(),
        3,
        "tool-error and malformed told, then timeout at its request"
    );
    assert!(matches!(layer.server(answer(3)), Step::Drop));
    passed(layer.client(call(4, "d")));
    assert!(passed(layer.server(answer(4))).is_slow());
    assert!(matches!(
        layer.client(call(5, "e")),
        Step::Disconnect(Some(503))
    ));
    let progress =
        Message::new(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#);
    assert!(matches!(layer.server(progress), Step::Drop));
    let other = Message::new(r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#);
    passed(layer.server(other));
}

#[tokio::test(start_paused = true)]
async fn a_delay_holds_the_answer_for_its_time() {
    let mut layer = FaultLayer::new(plan(&["tools/call: delay 1500"]));
    passed(layer.client(call(1, "a")));
    let Step::Later(later) = layer.server(answer(1)) else {
        panic!("a delay decides later");
    };
    let start = tokio::time::Instant::now();
    let out = passed(later.await);
    assert_eq!(out.id(), Some("1"));
    assert_eq!(start.elapsed(), Duration::from_millis(1500));
}

#[test]
fn a_seeded_probability_picks_the_same_calls_on_every_connection() {
    let plan = plan(&["tools/call p=0.5 seed=42: error -1 x"]);
    let picks = || {
        let mut layer = FaultLayer::new(plan.clone());
        (1..=40)
            .filter(|id| {
                passed(layer.client(call(*id, "t")));
                passed(layer.server(answer(*id))).kind() == Kind::Error
            })
            .collect::<Vec<_>>()
    };
    let first = picks();
    assert_eq!(first, picks());
    assert!(first.len() > 5 && first.len() < 35, "{first:?}");
}
