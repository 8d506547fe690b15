//! Every schema rule, each on a small pair of schemas, with its class where the data flows in
//! and where it flows out.

use serde_json::{Value, json};

use super::*;
use crate::diff::schema::{MAX_SCHEMA_DEPTH, Walk};

/// The changes between two input schemas, as (rule, class, path).
fn input(old: Value, new: Value) -> Vec<(Change, Class, String)> {
    walk(old, new, Flow::Input)
}

fn output(old: Value, new: Value) -> Vec<(Change, Class, String)> {
    walk(old, new, Flow::Output)
}

fn walk(old: Value, new: Value, flow: Flow) -> Vec<(Change, Class, String)> {
    Walk::compare(&old, &new, "s", false)
        .into_iter()
        .map(|f| (f.change, f.change.class(flow), f.path))
        .collect()
}

fn one(found: Vec<(Change, Class, String)>, change: Change, class: Class, path: &str) {
    assert_eq!(found, vec![(change, class, path.to_owned())]);
}

fn obj(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required})
}

#[test]
fn a_new_required_argument_breaks_a_new_optional_one_does_not() {
    let old = obj(json!({"q": {"type": "string"}}), &["q"]);
    let new = obj(
        json!({"q": {"type": "string"}, "n": {"type": "string"}}),
        &["q", "n"],
    );
    one(
        input(old.clone(), new),
        Change::RequiredAdded,
        Class::Breaking,
        "s.properties.n",
    );
    let new = obj(
        json!({"q": {"type": "string"}, "n": {"type": "string"}}),
        &["q"],
    );
    one(
        input(old.clone(), new),
        Change::PropertyAdded,
        Class::Compatible,
        "s.properties.n",
    );
    // An existing argument that becomes required.
    let new = obj(json!({"q": {"type": "string"}, "n": {}}), &["q", "n"]);
    let start = obj(json!({"q": {"type": "string"}, "n": {}}), &["q"]);
    one(
        input(start.clone(), new.clone()),
        Change::RequiredAdded,
        Class::Breaking,
        "s.required",
    );
    one(
        input(new, start),
        Change::RequiredRemoved,
        Class::Compatible,
        "s.required",
    );
}

#[test]
fn types_narrowed_and_widened() {
    let t = |t: Value| json!({"type": t});
    one(
        input(t(json!(["string", "null"])), t(json!("string"))),
        Change::TypeNarrowed,
        Class::Breaking,
        "s.type",
    );
    one(
        input(t(json!("number")), t(json!("integer"))),
        Change::TypeNarrowed,
        Class::Breaking,
        "s.type",
    );
    one(
        input(t(json!("integer")), t(json!("number"))),
        Change::TypeWidened,
        Class::Compatible,
        "s.type",
    );
    one(
        input(json!({}), t(json!("string"))),
        Change::TypeNarrowed,
        Class::Breaking,
        "s.type",
    );
    one(
        input(t(json!("string")), t(json!("boolean"))),
        Change::TypeChanged,
        Class::Breaking,
        "s.type",
    );
    // In an output schema the classes turn over: more kinds of value break a reader.
    one(
        output(t(json!("integer")), t(json!("number"))),
        Change::TypeWidened,
        Class::Breaking,
        "s.type",
    );
    one(
        output(t(json!(["string", "null"])), t(json!("string"))),
        Change::TypeNarrowed,
        Class::Compatible,
        "s.type",
    );
    assert!(input(t(json!(["null", "string"])), t(json!(["string", "null"]))).is_empty());
}

#[test]
fn enum_values_removed_and_added() {
    let e = |v: Value| json!({"enum": v});
    one(
        input(e(json!(["a", "b"])), e(json!(["a"]))),
        Change::EnumValueRemoved,
        Class::Breaking,
        "s.enum",
    );
    one(
        input(e(json!(["a"])), e(json!(["a", "b"]))),
        Change::EnumValueAdded,
        Class::Compatible,
        "s.enum",
    );
    one(
        output(e(json!(["a"])), e(json!(["a", "b"]))),
        Change::EnumValueAdded,
        Class::Breaking,
        "s.enum",
    );
    one(
        input(json!({}), e(json!(["a"]))),
        Change::Tightened,
        Class::Breaking,
        "s.enum",
    );
    assert_eq!(
        input(json!({"const": 1}), json!({"const": 2})),
        vec![
            (
                Change::EnumValueRemoved,
                Class::Breaking,
                "s.const".to_owned()
            ),
            (
                Change::EnumValueAdded,
                Class::Compatible,
                "s.const".to_owned()
            )
        ]
    );
}

#[test]
fn bounds_tightened_and_loosened() {
    for (k, tight, loose) in [
        ("maxLength", 5, 10),
        ("maximum", 5, 10),
        ("maxItems", 1, 2),
        ("minLength", 10, 5),
        ("minimum", 10, 5),
        ("minItems", 2, 1),
    ] {
        let at = format!("s.{k}");
        one(
            input(json!({k: loose}), json!({k: tight})),
            Change::Tightened,
            Class::Breaking,
            &at,
        );
        one(
            input(json!({k: tight}), json!({k: loose})),
            Change::Loosened,
            Class::Compatible,
            &at,
        );
        one(
            input(json!({}), json!({k: tight})),
            Change::Tightened,
            Class::Breaking,
            &at,
        );
        one(
            input(json!({k: tight}), json!({})),
            Change::Loosened,
            Class::Compatible,
            &at,
        );
        one(
            output(json!({k: tight}), json!({k: loose})),
            Change::Loosened,
            Class::Breaking,
            &at,
        );
    }
}

#[test]
fn patterns_formats_and_closed_objects() {
    one(
        input(json!({}), json!({"pattern": "^a"})),
        Change::Tightened,
        Class::Breaking,
        "s.pattern",
    );
    one(
        input(json!({"pattern": "^a"}), json!({"pattern": "^b"})),
        Change::ConstraintChanged,
        Class::Breaking,
        "s.pattern",
    );
    one(
        input(json!({"pattern": "^a"}), json!({})),
        Change::Loosened,
        Class::Compatible,
        "s.pattern",
    );
    one(
        input(json!({}), json!({"format": "uri"})),
        Change::Tightened,
        Class::Breaking,
        "s.format",
    );
    one(
        input(json!({}), json!({"uniqueItems": true})),
        Change::Tightened,
        Class::Breaking,
        "s.uniqueItems",
    );
    one(
        input(
            json!({"additionalProperties": true}),
            json!({"additionalProperties": false}),
        ),
        Change::Tightened,
        Class::Breaking,
        "s.additionalProperties",
    );
    one(
        input(json!({"additionalProperties": false}), json!({})),
        Change::Loosened,
        Class::Compatible,
        "s.additionalProperties",
    );
}

#[test]
fn a_removed_argument_breaks_only_a_closed_schema() {
    let open = |p: Value| json!({"properties": p});
    let closed = |p: Value| json!({"properties": p, "additionalProperties": false});
    let both = json!({"a": {}, "b": {}});
    let a = json!({"a": {}});
    one(
        input(open(both.clone()), open(a.clone())),
        Change::PropertyRemoved,
        Class::Compatible,
        "s.properties.b",
    );
    one(
        input(closed(both.clone()), closed(a.clone())),
        Change::PropertyRemovedClosed,
        Class::Breaking,
        "s.properties.b",
    );
    one(
        output(open(both), open(a)),
        Change::PropertyRemoved,
        Class::Breaking,
        "s.properties.b",
    );
}

#[test]
fn output_schema_promises() {
    let old = obj(
        json!({"count": {"type": "integer"}, "mean": {"type": "number"}}),
        &["count", "mean"],
    );
    let no_longer = obj(
        json!({"count": {"type": "integer"}, "mean": {"type": "number"}}),
        &["count"],
    );
    one(
        output(old.clone(), no_longer),
        Change::RequiredRemoved,
        Class::Breaking,
        "s.required",
    );
    let more = obj(
        json!({"count": {"type": "integer"}, "mean": {"type": "number"}, "max": {"type": "number"}}),
        &["count", "mean"],
    );
    one(
        output(old, more),
        Change::PropertyAdded,
        Class::Compatible,
        "s.properties.max",
    );
    assert_eq!(
        Change::OutputSchemaRemoved.class(Flow::Output),
        Class::Breaking
    );
    assert_eq!(
        Change::OutputSchemaAdded.class(Flow::Output),
        Class::Compatible
    );
}

#[test]
fn wording_and_defaults_are_info() {
    one(
        input(json!({"description": "a"}), json!({"description": "b"})),
        Change::Wording,
        Class::Info,
        "s.description",
    );
    one(
        input(json!({"title": "a"}), json!({})),
        Change::Wording,
        Class::Info,
        "s.title",
    );
    one(
        input(json!({"default": 1}), json!({"default": 2})),
        Change::DefaultChanged,
        Class::Info,
        "s.default",
    );
    let d = |t: &str| json!({"properties": {"x": {"type": "string", "description": t}}});
    assert!(
        Walk::compare(&d("a"), &d("b"), "s", true).is_empty(),
        "structure-only leaves wording out"
    );
}

#[test]
fn nested_items_variants_and_unanalysed_keywords() {
    let arr = |t: &str| json!({"type": "array", "items": {"type": t}});
    one(
        input(arr("number"), arr("integer")),
        Change::TypeNarrowed,
        Class::Breaking,
        "s.items.type",
    );
    let any = |v: Value| json!({"anyOf": v});
    one(
        input(
            any(json!([{"type": "string"}, {"type": "null"}])),
            any(json!([{"type": "string"}])),
        ),
        Change::TypeNarrowed,
        Class::Breaking,
        "s.anyOf",
    );
    one(
        input(
            any(json!([{"type": "string"}])),
            any(json!([{"type": "string"}, {"type": "null"}])),
        ),
        Change::TypeWidened,
        Class::Compatible,
        "s.anyOf",
    );
    one(
        input(
            json!({"allOf": [{}]}),
            json!({"allOf": [{"type": "string"}]}),
        ),
        Change::Unanalysed,
        Class::Breaking,
        "s.allOf",
    );
}

#[test]
fn local_refs_are_followed_and_remote_ones_are_not() {
    let doc =
        |t: &str| json!({"properties": {"a": {"$ref": "#/$defs/A"}}, "$defs": {"A": {"type": t}}});
    one(
        input(doc("number"), doc("integer")),
        Change::TypeNarrowed,
        Class::Breaking,
        "s.properties.a.type",
    );
    assert!(input(doc("string"), doc("string")).is_empty());
    let remote = |r: &str| json!({"properties": {"a": {"$ref": r}}});
    assert!(input(remote("https://x/a.json"), remote("https://x/a.json")).is_empty());
    one(
        input(remote("https://x/a.json"), remote("https://x/b.json")),
        Change::Unanalysed,
        Class::Breaking,
        "s.properties.a.$ref",
    );
    // A recursive schema (a tree) ends where the same pair of refs is compared again.
    let tree = |t: &str| {
        json!({"$ref": "#/$defs/node", "$defs": {"node": {"type": "object", "properties": {
            "v": {"type": t}, "left": {"$ref": "#/$defs/node"}, "right": {"$ref": "#/$defs/node"}}}}})
    };
    one(
        input(tree("number"), tree("integer")),
        Change::TypeNarrowed,
        Class::Breaking,
        "s.properties.v.type",
    );
    assert!(input(tree("string"), tree("string")).is_empty());
}

#[test]
fn too_deep_is_a_finding_never_a_crash() {
    let mut a = json!({"type": "string"});
    let mut b = json!({"type": "integer"});
    for _ in 0..MAX_SCHEMA_DEPTH + 5 {
        a = json!({"items": a});
        b = json!({"items": b});
    }
    let found = input(a.clone(), b);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].0, found[0].1), (Change::TooDeep, Class::Breaking));
    assert!(
        input(a.clone(), a).is_empty(),
        "equal deep parts are not a change"
    );
    // The tape reader's marker for a part nested past its depth.
    let marker = |h: &str| json!({"items": format!("{}3 levels, 9 bytes, fnv1a {h}]", crate::depth::TOO_DEEP)});
    one(
        input(marker("1"), marker("2")),
        Change::TooDeep,
        Class::Breaking,
        "s.items",
    );
}

#[test]
fn hints_by_what_they_mean() {
    let h = |v: Value| effective_hints(&v);
    let change = |old: Value, new: Value| -> Vec<(&str, Change)> {
        let (a, b) = (h(old), h(new));
        HINTS
            .iter()
            .enumerate()
            .filter_map(|(i, hint)| Some((hint.key, hint_change(hint, a[i], b[i])?)))
            .collect()
    };
    let riskier = Change::HintRiskier;
    assert_eq!(
        change(json!({"readOnlyHint": true}), json!({})),
        vec![
            ("readOnlyHint", riskier),
            ("destructiveHint", riskier),
            ("idempotentHint", riskier)
        ]
    );
    assert_eq!(
        change(
            json!({"destructiveHint": false}),
            json!({"destructiveHint": true})
        ),
        vec![("destructiveHint", riskier)]
    );
    assert_eq!(
        change(json!({"destructiveHint": false}), json!({})),
        vec![("destructiveHint", riskier)]
    );
    assert_eq!(
        change(
            json!({"idempotentHint": true}),
            json!({"idempotentHint": false})
        ),
        vec![("idempotentHint", riskier)]
    );
    assert_eq!(
        change(json!({"openWorldHint": false}), json!({})),
        vec![("openWorldHint", riskier)]
    );
    assert_eq!(
        change(json!({}), json!({"openWorldHint": false})),
        vec![("openWorldHint", Change::HintSafer)]
    );
    assert_eq!(riskier.class(Flow::Input), Class::Breaking);
    assert_eq!(Change::HintSafer.class(Flow::Input), Class::Compatible);
}

#[test]
fn a_replaced_pattern_or_format_breaks_both_ways_and_multiple_of_follows_divisibility() {
    let s = |k: &str, v: Value| json!({"type": "string", k: v});
    for (k, a, b) in [
        ("pattern", json!("^a"), json!("^b")),
        ("format", json!("email"), json!("uri")),
    ] {
        one(
            input(s(k, a.clone()), s(k, b.clone())),
            Change::ConstraintChanged,
            Class::Breaking,
            &format!("s.{k}"),
        );
        one(
            output(s(k, a), s(k, b)),
            Change::ConstraintChanged,
            Class::Breaking,
            &format!("s.{k}"),
        );
    }
    let m = |v: u32| json!({"type": "integer", "multipleOf": v});
    one(
        input(m(4), m(2)),
        Change::Loosened,
        Class::Compatible,
        "s.multipleOf",
    );
    one(
        input(m(2), m(4)),
        Change::Tightened,
        Class::Breaking,
        "s.multipleOf",
    );
    one(
        output(m(2), m(4)),
        Change::Tightened,
        Class::Compatible,
        "s.multipleOf",
    );
    one(
        output(m(2), m(3)),
        Change::ConstraintChanged,
        Class::Breaking,
        "s.multipleOf",
    );
}

#[test]
fn additional_properties_true_is_the_same_as_absent() {
    let open = json!({"type": "object"});
    let explicit = json!({"type": "object", "additionalProperties": true});
    assert_eq!(output(open.clone(), explicit.clone()), vec![]);
    assert_eq!(input(explicit.clone(), open.clone()), vec![]);
    let closed = json!({"type": "object", "additionalProperties": false});
    one(
        input(explicit, closed),
        Change::Tightened,
        Class::Breaking,
        "s.additionalProperties",
    );
}
