use super::*;

#[test]
fn a_rule_reads_its_selector_and_effect() {
    let (sel, effect) = parse(r#"tools/call name=search nth=2: error -32000 "rate \"limited\"""#)
        .expect("a good rule");
    assert_eq!(sel.method.as_deref(), Some("tools/call"));
    assert_eq!(sel.name.as_deref(), Some("search"));
    assert_eq!(sel.nth, Some(2));
    assert_eq!(
        effect,
        Effect::Error {
            code: -32000,
            message: "rate \"limited\"".into()
        }
    );
    let (sel, effect) = parse("* p=0.5 seed=7: tool-error disk full").expect("bare text");
    assert_eq!((sel.method, sel.p, sel.seed), (None, Some(0.5), Some(7)));
    assert_eq!(
        effect,
        Effect::ToolError {
            text: "disk full".into()
        }
    );
    assert_eq!(
        parse("initialize: delay 250").expect("delay").1,
        Effect::Delay { ms: 250 }
    );
    assert_eq!(
        parse("tools/call: disconnect 503").expect("status").1,
        Effect::Disconnect { status: Some(503) }
    );
    for (text, effect) in [
        ("x: timeout", Effect::Timeout),
        ("x: drop", Effect::Drop),
        ("x: malformed", Effect::Malformed),
        ("x: slow-stream", Effect::SlowStream),
        ("x: disconnect", Effect::Disconnect { status: None }),
    ] {
        assert_eq!(parse(text).expect(text).1, effect);
    }
}

#[test]
fn a_bad_rule_names_its_bad_word_and_what_was_expected() {
    for (text, word, expected) in [
        ("tools/call nth=x: error", "nth=x", "whole number ≥ 1"),
        ("tools/call nth=0: drop", "nth=0", "whole number ≥ 1"),
        ("tools/call p=2: drop", "p=2", "probability"),
        ("tools/call seed=3: drop", "seed=3", "give p too"),
        ("tools/call colour=red: drop", "colour=red", "selector word"),
        ("tools/call: explode", "explode", "an effect"),
        ("tools/call: error abc", "abc", "whole-number code"),
        ("tools/call: delay soon", "soon", "milliseconds"),
        ("tools/call: disconnect 42", "42", "HTTP status"),
        ("tools/call: timeout now", "now", "takes nothing"),
        ("tools/call: error 1 \"open", "\"open", "closing"),
        ("tools/call", "tools/call", "SELECTOR: EFFECT"),
        ("a b: drop", "b", "one method"),
    ] {
        let err = parse(text).expect_err(text);
        assert_eq!(err.word, word, "{text}");
        assert!(err.expected.contains(expected), "{text}: {}", err.expected);
    }
}

#[test]
fn a_rule_written_back_from_fields_reads_the_same() {
    let sel = Selector {
        method: Some("tools/call".into()),
        name: Some("a".into()),
        nth: Some(3),
        p: Some(0.25),
        seed: Some(9),
    };
    let effect = Effect::Error {
        code: -1,
        message: "say \"no\"".into(),
    };
    let text = text_of(&sel, &effect);
    assert_eq!(parse(&text).expect("round trip"), (sel, effect));
}
