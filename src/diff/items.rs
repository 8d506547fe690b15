//! Two listings of one kind compared: items added and removed, and each item both list
//! compared field by field.
//!
//! Fields compared — tools: `title`, `description`, `inputSchema` (as input),
//! `outputSchema` (as output), `annotations` (the four hints with the spec's defaults,
//! and `title`); resources and templates: `name`, `title`, `description`, `mimeType`,
//! `annotations`; prompts: `title`, `description`, `arguments` (by name: `required`,
//! `title`, `description`). Not compared: `icons`, `_meta`, `execution`, a resource's
//! `size`; a `uri`/`uriTemplate`/`name` that changes is a removal and an addition.

use serde_json::Value;

use super::lists::{Family, Item, Side};
use super::rules::{self, Change, Flow, HINTS};
use super::schema::{Found, Walk};
use super::{Finding, Kind, Options};

/// Appends the findings of `family` between `old` and `new` to `out`.
pub fn compare(old: &Side, new: &Side, family: Family, options: Options, out: &mut Vec<Finding>) {
    let (a, b) = match (old.listing(family), new.listing(family)) {
        (Some(a), Some(b)) => (a, b),
        (None, None) => return,
        (a, _) => {
            let (side, other) = if a.is_none() { (old, new) } else { (new, old) };
            out.push(Finding {
                kind: Kind::Unlisted,
                family,
                item: String::new(),
                field: String::new(),
                path: String::new(),
                old: None,
                new: None,
                class: rules::Class::Info,
                rule: "unlisted",
                message: format!(
                    "{} never listed {}: those of {} are not compared (not a removal)",
                    side.label,
                    family.plural(),
                    other.label
                ),
                old_line: None,
                new_line: None,
            });
            return;
        }
    };
    for item in &a.items {
        match b.get(&item.key) {
            None => out.push(whole(family, item, Change::ItemRemoved, true)),
            Some(other) => {
                let found = fields(family, &item.value, &other.value, options);
                for f in found {
                    out.push(finding(family, item, other, f));
                }
            }
        }
    }
    for item in b.items.iter().filter(|i| a.get(&i.key).is_none()) {
        out.push(whole(family, item, Change::ItemAdded, false));
    }
}

/// The finding of an item added or removed.
fn whole(family: Family, item: &Item, change: Change, removed: bool) -> Finding {
    let word = if removed { "removed" } else { "added" };
    Finding {
        kind: if removed { Kind::Removed } else { Kind::Added },
        family,
        item: item.key.clone(),
        field: String::new(),
        path: String::new(),
        old: removed.then(|| item.value.clone()),
        new: (!removed).then(|| item.value.clone()),
        class: change.class(Flow::Input),
        rule: change.id(),
        message: format!("{} {word}", family.word()),
        old_line: if removed { item.line } else { None },
        new_line: if removed { None } else { item.line },
    }
}

/// A field's change as a finding.
fn finding(family: Family, old: &Item, new: &Item, (f, flow): (Found, Flow)) -> Finding {
    let field = f.path.split('.').next().unwrap_or_default().to_owned();
    Finding {
        kind: Kind::Changed,
        family,
        item: old.key.clone(),
        message: describe(&f),
        class: f.change.class(flow),
        rule: f.change.id(),
        field,
        path: f.path,
        old: f.old,
        new: f.new,
        old_line: old.line,
        new_line: new.line,
    }
}

/// A change in words: `value "full" removed`, `"a" → "b"`.
fn describe(f: &Found) -> String {
    let v = |x: &Option<Value>| {
        x.as_ref()
            .map(super::report::short)
            .unwrap_or_else(|| "(absent)".into())
    };
    let what = match f.change {
        Change::EnumValueRemoved => return format!("value {} removed", v(&f.old)),
        Change::EnumValueAdded => return format!("value {} added", v(&f.new)),
        Change::RequiredAdded if f.old.is_none() && !f.path.ends_with(".required") => {
            return "new required argument".into();
        }
        Change::RequiredAdded => return format!("{} became required", v(&f.new)),
        Change::RequiredRemoved => return format!("{} no longer required", v(&f.old)),
        Change::PropertyAdded => return "new optional property".into(),
        Change::PropertyRemoved | Change::PropertyRemovedClosed => {
            return "property removed".into();
        }
        Change::PromptArgumentRequired if f.old.is_none() => return "new required argument".into(),
        Change::PromptArgumentOptional if f.old.is_none() => return "new optional argument".into(),
        Change::PromptArgumentRequired => return "became required".into(),
        Change::PromptArgumentOptional => return "became optional".into(),
        Change::PromptArgumentRemoved => return "argument removed".into(),
        Change::ItemRemoved | Change::ItemAdded => "",
        Change::TooDeep => "too deep to compare",
        Change::TypeNarrowed => "type narrowed",
        Change::TypeWidened => "type widened",
        Change::TypeChanged => "type changed",
        Change::Tightened => "constraint tightened",
        Change::Loosened => "constraint loosened",
        Change::HintRiskier => "riskier",
        Change::HintSafer => "safer",
        Change::Unanalysed => "changed (not analysed)",
        Change::OutputSchemaRemoved => "outputSchema removed",
        Change::OutputSchemaAdded => "outputSchema added",
        _ => "changed",
    };
    format!("{what}: {} → {}", v(&f.old), v(&f.new))
}

/// The field changes of one item listed by both sides, with the flow each is judged in.
fn fields(family: Family, old: &Value, new: &Value, options: Options) -> Vec<(Found, Flow)> {
    let mut out = Vec::new();
    let mut push = |change: Change, path: &str, o: Option<&Value>, n: Option<&Value>| {
        out.push((
            Found {
                change,
                path: path.to_owned(),
                old: o.cloned(),
                new: n.cloned(),
            },
            Flow::Input,
        ));
    };
    if !options.structure_only {
        for k in ["title", "description"] {
            if old.get(k) != new.get(k) {
                push(Change::Wording, k, old.get(k), new.get(k));
            }
        }
    }
    match family {
        Family::Tool => {
            hints(old, new, options, &mut push);
            let empty = Value::Object(Default::default());
            let flows = [("inputSchema", Flow::Input), ("outputSchema", Flow::Output)];
            let mut schemas = Vec::new();
            for (k, flow) in flows {
                match (old.get(k), new.get(k)) {
                    (Some(a), Some(b)) => schemas.extend(
                        Walk::compare(a, b, k, options.structure_only)
                            .into_iter()
                            .map(|f| (f, flow)),
                    ),
                    (None, None) => {}
                    (a, b) if k == "inputSchema" => schemas.extend(
                        Walk::compare(
                            a.unwrap_or(&empty),
                            b.unwrap_or(&empty),
                            k,
                            options.structure_only,
                        )
                        .into_iter()
                        .map(|f| (f, flow)),
                    ),
                    (None, b) => push(Change::OutputSchemaAdded, k, None, b),
                    (a, None) => push(Change::OutputSchemaRemoved, k, a, None),
                }
            }
            out.extend(schemas);
        }
        Family::Resource | Family::ResourceTemplate => {
            for (k, change) in [
                ("name", Change::NameChanged),
                ("mimeType", Change::MimeTypeChanged),
                ("annotations", Change::AnnotationsChanged),
            ] {
                if old.get(k) != new.get(k) {
                    push(change, k, old.get(k), new.get(k));
                }
            }
        }
        Family::Prompt => arguments(old, new, options, &mut push),
    }
    out
}

/// A tool's hints, each compared by what it means (defaults applied).
fn hints(
    old: &Value,
    new: &Value,
    options: Options,
    push: &mut impl FnMut(Change, &str, Option<&Value>, Option<&Value>),
) {
    let (a, b) = (&old["annotations"], &new["annotations"]);
    let (was, is) = (rules::effective_hints(a), rules::effective_hints(b));
    for (i, hint) in HINTS.iter().enumerate() {
        if let Some(change) = rules::hint_change(hint, was[i], is[i]) {
            let path = format!("annotations.{}", hint.key);
            push(
                change,
                &path,
                Some(&Value::Bool(was[i])),
                Some(&Value::Bool(is[i])),
            );
        }
    }
    if !options.structure_only && a.get("title") != b.get("title") {
        push(
            Change::Wording,
            "annotations.title",
            a.get("title"),
            b.get("title"),
        );
    }
}

/// A prompt's arguments, by name.
fn arguments(
    old: &Value,
    new: &Value,
    options: Options,
    push: &mut impl FnMut(Change, &str, Option<&Value>, Option<&Value>),
) {
    let list = |v: &Value| -> Vec<(String, Value)> {
        v["arguments"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| Some((a["name"].as_str()?.to_owned(), a.clone())))
            .collect()
    };
    let (was, is) = (list(old), list(new));
    let required = |a: &Value| a["required"].as_bool().unwrap_or(false);
    for (name, a) in &was {
        let path = format!("arguments.{name}");
        match is.iter().find(|(n, _)| n == name) {
            None => push(Change::PromptArgumentRemoved, &path, Some(a), None),
            Some((_, b)) => {
                if required(a) != required(b) {
                    let change = if required(b) {
                        Change::PromptArgumentRequired
                    } else {
                        Change::PromptArgumentOptional
                    };
                    push(
                        change,
                        &format!("{path}.required"),
                        a.get("required"),
                        b.get("required"),
                    );
                }
                if !options.structure_only {
                    for k in ["title", "description"] {
                        if a.get(k) != b.get(k) {
                            push(Change::Wording, &format!("{path}.{k}"), a.get(k), b.get(k));
                        }
                    }
                }
            }
        }
    }
    for (name, b) in is.iter().filter(|(n, _)| !was.iter().any(|(m, _)| m == n)) {
        let change = if required(b) {
            Change::PromptArgumentRequired
        } else {
            Change::PromptArgumentOptional
        };
        push(change, &format!("arguments.{name}"), None, Some(b));
    }
}

#[cfg(test)]
#[path = "items_tests.rs"]
mod tests;
