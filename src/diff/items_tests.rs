//! Items (tools, resources, templates, prompts) compared as listed, and the docs' rules
//! table kept in step with the rules.

use serde_json::{Value, json};

use crate::diff::lists::{Family, Listing, Side};
use crate::diff::rules::{Change, Class, Flow};
use crate::diff::{Diff, Kind, Options};

/// A side listing `items` of `family` only.
fn side(family: Family, items: Value) -> Side {
    let mut listing = Listing::default();
    listing
        .add_page(family, &json!({family.member(): items}), "test", Some(1))
        .expect("a listing");
    let mut lists: [Option<Listing>; 4] = Default::default();
    lists[Family::ALL
        .iter()
        .position(|f| *f == family)
        .expect("a family")] = Some(listing);
    Side {
        label: "s".into(),
        path: None,
        server: "s".into(),
        tape: None,
        lists,
    }
}

fn rules_of(family: Family, old: Value, new: Value) -> Vec<(&'static str, Class)> {
    Diff::of(&side(family, old), &side(family, new), Options::default())
        .findings
        .into_iter()
        .filter(|f| f.kind != Kind::Unlisted)
        .map(|f| (f.rule, f.class))
        .collect()
}

#[test]
fn items_removed_added_and_prompt_arguments() {
    let p = |args: Value| json!([{"name": "p", "arguments": args}]);
    let opt = json!([{"name": "a", "required": false}]);
    let req = json!([{"name": "a", "required": true}]);
    assert_eq!(
        rules_of(Family::Prompt, p(opt.clone()), p(req.clone())),
        vec![("prompt-argument-required", Class::Breaking)]
    );
    assert_eq!(
        rules_of(Family::Prompt, p(req), p(opt.clone())),
        vec![("prompt-argument-optional", Class::Compatible)]
    );
    assert_eq!(
        rules_of(Family::Prompt, p(opt.clone()), p(json!([]))),
        vec![("prompt-argument-removed", Class::Breaking)]
    );
    assert_eq!(
        rules_of(Family::Prompt, p(json!([])), p(opt)),
        vec![("prompt-argument-optional", Class::Compatible)]
    );
    let t = |n: &str| json!([{"name": n, "inputSchema": {"type": "object"}}]);
    assert_eq!(
        rules_of(Family::Tool, t("a"), t("b")),
        vec![("removed", Class::Breaking), ("added", Class::Compatible)]
    );
    let r = |m: &str, n: &str| json!([{"uri": "file:///x", "name": n, "mimeType": m}]);
    assert_eq!(
        rules_of(Family::Resource, r("text/plain", "x"), r("text/html", "x")),
        vec![("mime-type-changed", Class::Breaking)]
    );
    assert_eq!(
        rules_of(Family::Resource, r("text/plain", "x"), r("text/plain", "y")),
        vec![("name-changed", Class::Compatible)]
    );
    let out = |o: Option<Value>| {
        let mut t = json!({"name": "t", "inputSchema": {"type": "object"}});
        if let Some(o) = o {
            t["outputSchema"] = o;
        }
        json!([t])
    };
    let schema = json!({"type": "object"});
    assert_eq!(
        rules_of(Family::Tool, out(Some(schema.clone())), out(None)),
        vec![("output-schema-removed", Class::Breaking)]
    );
    assert_eq!(
        rules_of(Family::Tool, out(None), out(Some(schema))),
        vec![("output-schema-added", Class::Compatible)]
    );
}

#[test]
fn the_docs_table_lists_every_rule_with_its_class() {
    let doc = include_str!("../../docs/DIFF.md");
    for change in Change::ALL {
        let input = change.class(Flow::Input).as_str();
        let output = change.class(Flow::Output).as_str();
        let row = format!("| `{}` | {input} | {output} |", change.id());
        assert!(
            doc.contains(&row),
            "docs/DIFF.md lacks the row starting `{row}`"
        );
        assert!(!change.why().is_empty());
    }
}
