//! The rules: what each change is ([`Change`]) and, for the side of the wire a schema
//! sits on ([`Flow`]), whether it breaks the server's clients ([`Class`]).
//!
//! A change is named by what happened, not by whom it hurts: a type that accepts fewer
//! values is [`Change::TypeNarrowed`] wherever it is. The class comes from the flow, as
//! oasdiff classifies request and response changes apart and buf judges a change by what
//! an old peer still understands: an input schema (what clients send, the server
//! validates) breaks when it accepts less; an output schema (what the server sends,
//! clients rely on) breaks when it may give more, or less of what it promised. The table
//! in docs/DIFF.md is this file; a test there keeps the two in step.

use serde::Serialize;

/// How a change lands on the server's clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// A client written against the old side may fail against the new one.
    Breaking,
    /// Every old client keeps working.
    Compatible,
    /// Wording only (descriptions, titles, defaults) or a fact about a side: no client
    /// code is affected.
    Info,
}

impl Class {
    /// The word in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Breaking => "breaking",
            Class::Compatible => "compatible",
            Class::Info => "info",
        }
    }
}

/// Which way the data a schema describes travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Clients send it (a tool's `inputSchema`, a prompt's arguments).
    Input,
    /// The server sends it and clients read it (a tool's `outputSchema`).
    Output,
}

/// What changed, whatever its class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// A tool, resource, template or prompt the old side listed is gone.
    ItemRemoved,
    /// A new tool, resource, template or prompt.
    ItemAdded,
    /// A description or title (of an item, an argument, a schema) changed.
    Wording,
    /// A schema's `default` changed.
    DefaultChanged,
    /// A name joined `required` (or a new property is required).
    RequiredAdded,
    /// A name left `required`.
    RequiredRemoved,
    /// A property that is not required was added.
    PropertyAdded,
    /// A property was removed while the schema is closed (`additionalProperties: false`).
    PropertyRemovedClosed,
    /// A property was removed from an open schema.
    PropertyRemoved,
    /// The schema accepts fewer types (`["string","null"]` → `"string"`, `number` →
    /// `integer`), or an `anyOf`/`oneOf` variant went.
    TypeNarrowed,
    /// The schema accepts more types, or an `anyOf`/`oneOf` variant came.
    TypeWidened,
    /// Types were both removed and added.
    TypeChanged,
    /// An `enum` (or `const`) value went.
    EnumValueRemoved,
    /// An `enum` value came.
    EnumValueAdded,
    /// A constraint accepts less: a bound lowered or raised inward, a `pattern`,
    /// `format`, `enum` or `uniqueItems` added or changed, `additionalProperties` closed.
    Tightened,
    /// A constraint accepts more (the reverse of [`Change::Tightened`]).
    Loosened,
    /// A constraint replaced by one that is neither tighter nor looser (a `pattern` or
    /// `format` changed): some old values are rejected and some new ones come.
    ConstraintChanged,
    /// A tool's `outputSchema` was removed.
    OutputSchemaRemoved,
    /// A tool's `outputSchema` was added.
    OutputSchemaAdded,
    /// A tool hint moved toward more risk (`readOnlyHint` true → false, `destructiveHint`
    /// false → true, `idempotentHint` true → false, `openWorldHint` false → true).
    HintRiskier,
    /// A tool hint moved toward less risk.
    HintSafer,
    /// A prompt argument became required, or a new one is required.
    PromptArgumentRequired,
    /// A prompt argument became optional, or a new optional one came.
    PromptArgumentOptional,
    /// A prompt argument was removed.
    PromptArgumentRemoved,
    /// A resource's or template's `mimeType` changed.
    MimeTypeChanged,
    /// A resource's or template's `name` changed.
    NameChanged,
    /// A resource's annotations (audience, priority) changed.
    AnnotationsChanged,
    /// A schema keyword this tool does not analyse (`allOf`, `not`, `if`, a remote `$ref`,
    /// `patternProperties`, …) changed: treated as breaking.
    Unanalysed,
    /// Too deep (or too large) to compare, and the two sides differ: treated as breaking.
    TooDeep,
}

impl Change {
    /// Every change, in the order of the docs' table.
    #[cfg_attr(not(test), allow(dead_code))]
    pub const ALL: [Change; 29] = [
        Change::ItemRemoved,
        Change::ItemAdded,
        Change::Wording,
        Change::DefaultChanged,
        Change::RequiredAdded,
        Change::RequiredRemoved,
        Change::PropertyAdded,
        Change::PropertyRemovedClosed,
        Change::PropertyRemoved,
        Change::TypeNarrowed,
        Change::TypeWidened,
        Change::TypeChanged,
        Change::EnumValueRemoved,
        Change::EnumValueAdded,
        Change::Tightened,
        Change::Loosened,
        Change::ConstraintChanged,
        Change::OutputSchemaRemoved,
        Change::OutputSchemaAdded,
        Change::HintRiskier,
        Change::HintSafer,
        Change::PromptArgumentRequired,
        Change::PromptArgumentOptional,
        Change::PromptArgumentRemoved,
        Change::MimeTypeChanged,
        Change::NameChanged,
        Change::AnnotationsChanged,
        Change::Unanalysed,
        Change::TooDeep,
    ];

    /// The rule's id in reports (`--format json`'s `rule`).
    pub fn id(self) -> &'static str {
        match self {
            Change::ItemRemoved => "removed",
            Change::ItemAdded => "added",
            Change::Wording => "wording",
            Change::DefaultChanged => "default-changed",
            Change::RequiredAdded => "required-added",
            Change::RequiredRemoved => "required-removed",
            Change::PropertyAdded => "property-added",
            Change::PropertyRemovedClosed => "property-removed-closed",
            Change::PropertyRemoved => "property-removed",
            Change::TypeNarrowed => "type-narrowed",
            Change::TypeWidened => "type-widened",
            Change::TypeChanged => "type-changed",
            Change::EnumValueRemoved => "enum-value-removed",
            Change::EnumValueAdded => "enum-value-added",
            Change::Tightened => "constraint-tightened",
            Change::Loosened => "constraint-loosened",
            Change::ConstraintChanged => "constraint-changed",
            Change::OutputSchemaRemoved => "output-schema-removed",
            Change::OutputSchemaAdded => "output-schema-added",
            Change::HintRiskier => "hint-riskier",
            Change::HintSafer => "hint-safer",
            Change::PromptArgumentRequired => "prompt-argument-required",
            Change::PromptArgumentOptional => "prompt-argument-optional",
            Change::PromptArgumentRemoved => "prompt-argument-removed",
            Change::MimeTypeChanged => "mime-type-changed",
            Change::NameChanged => "name-changed",
            Change::AnnotationsChanged => "annotations-changed",
            Change::Unanalysed => "unanalysed",
            Change::TooDeep => "too-deep",
        }
    }

    /// Its class where the data flows as `flow` (only schema changes depend on it).
    pub fn class(self, flow: Flow) -> Class {
        use Change::*;
        use Class::*;
        let input = flow == Flow::Input;
        match self {
            ItemRemoved
            | PropertyRemovedClosed
            | TypeChanged
            | ConstraintChanged
            | OutputSchemaRemoved
            | HintRiskier
            | PromptArgumentRequired
            | PromptArgumentRemoved
            | MimeTypeChanged
            | Unanalysed
            | TooDeep => Breaking,
            ItemAdded
            | PropertyAdded
            | OutputSchemaAdded
            | HintSafer
            | PromptArgumentOptional
            | NameChanged => Compatible,
            Wording | DefaultChanged | AnnotationsChanged => Info,
            // The server validates what clients send: accepting less breaks them.
            RequiredAdded | TypeNarrowed | EnumValueRemoved | Tightened if input => Breaking,
            RequiredRemoved | TypeWidened | EnumValueAdded | Loosened if input => Compatible,
            // A removed argument is ignored by an open schema.
            PropertyRemoved if input => Compatible,
            // Clients read what the server sends: promising less, or giving more kinds of
            // value, breaks them.
            RequiredRemoved | PropertyRemoved | TypeWidened | EnumValueAdded | Loosened => Breaking,
            RequiredAdded | TypeNarrowed | EnumValueRemoved | Tightened => Compatible,
        }
    }

    /// Why, for the docs' table.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn why(self) -> &'static str {
        match self {
            Change::ItemRemoved => "clients that call it get an error",
            Change::ItemAdded => "nobody relied on it",
            Change::Wording => "no client code reads it (a model may: read it)",
            Change::DefaultChanged => "behaviour for callers that omit it may differ; says so",
            Change::RequiredAdded => {
                "input: old calls lack it; output: clients get more than before"
            }
            Change::RequiredRemoved => {
                "input: old calls still send it; output: clients relied on it being there"
            }
            Change::PropertyAdded => "input: old calls omit it, allowed; output: extra data",
            Change::PropertyRemovedClosed => "old calls that send it are now rejected",
            Change::PropertyRemoved => {
                "input: the open schema ignores it; output: clients relied on it"
            }
            Change::TypeNarrowed => "input: old values are rejected; output: fewer kinds",
            Change::TypeWidened => "input: more is accepted; output: clients meet new kinds",
            Change::TypeChanged => "both of the above",
            Change::EnumValueRemoved => "input: old values are rejected; output: fewer values",
            Change::EnumValueAdded => "input: more is accepted; output: clients meet new values",
            Change::Tightened => "input: old values may be rejected; output: a stronger promise",
            Change::Loosened => "input: more is accepted; output: a weaker promise",
            Change::ConstraintChanged => "both of the above",
            Change::OutputSchemaRemoved => "clients that validate structuredContent lose it",
            Change::OutputSchemaAdded => "a new promise",
            Change::HintRiskier => "clients that auto-approve by hints now run a riskier tool",
            Change::HintSafer => "clients may ask less",
            Change::PromptArgumentRequired => "old prompts/get calls lack it",
            Change::PromptArgumentOptional => "old calls still work",
            Change::PromptArgumentRemoved => "old calls send an argument nothing declares",
            Change::MimeTypeChanged => "clients parse the content by its type",
            Change::NameChanged => "resources are addressed by URI; the name is a label",
            Change::AnnotationsChanged => "hints for the client's display",
            Change::Unanalysed => "not proven compatible, so assumed breaking",
            Change::TooDeep => "not compared, so assumed breaking",
        }
    }
}

/// The types a schema's `type` admits (`None`: any type); `integer` stands inside
/// `number`.
fn types(t: Option<&serde_json::Value>) -> Option<Vec<&str>> {
    match t? {
        serde_json::Value::String(s) => Some(vec![s.as_str()]),
        serde_json::Value::Array(a) => Some(a.iter().filter_map(|v| v.as_str()).collect()),
        _ => None,
    }
}

/// Whether the type set `set` (`None`: any) admits every value of type `t`.
fn admits(set: &Option<Vec<&str>>, t: &str) -> bool {
    match set {
        None => true,
        Some(set) => set.contains(&t) || (t == "integer" && set.contains(&"number")),
    }
}

/// The change between two `type` members, if they admit different values.
pub fn type_change(
    old: Option<&serde_json::Value>,
    new: Option<&serde_json::Value>,
) -> Option<Change> {
    let (was, is) = (types(old), types(new));
    let all = [
        "string", "number", "integer", "boolean", "object", "array", "null",
    ];
    let listed = |s: &Option<Vec<&str>>| -> Vec<String> {
        match s {
            None => all.iter().map(|t| t.to_string()).collect(),
            Some(v) => v.iter().map(|t| t.to_string()).collect(),
        }
    };
    let narrowed = listed(&was).iter().any(|t| !admits(&is, t));
    let widened = listed(&is).iter().any(|t| !admits(&was, t));
    match (narrowed, widened) {
        (true, true) => Some(Change::TypeChanged),
        (true, false) => Some(Change::TypeNarrowed),
        (false, true) => Some(Change::TypeWidened),
        (false, false) => None,
    }
}

/// Keywords whose value is an upper bound: lower is tighter.
pub const UPPER_BOUNDS: &[&str] = &[
    "maxLength",
    "maximum",
    "exclusiveMaximum",
    "maxItems",
    "maxProperties",
    "maxContains",
];

/// Keywords whose value is a lower bound: higher is tighter.
pub const LOWER_BOUNDS: &[&str] = &[
    "minLength",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "minProperties",
    "minContains",
];

/// Keywords that restrict values when present: added or changed is tighter.
pub const RESTRICTIONS: &[&str] = &[
    "pattern",
    "format",
    "multipleOf",
    "contentMediaType",
    "contentEncoding",
];

/// The change of a bound keyword (`upper`: a maximum), if any.
pub fn bound_change(
    upper: bool,
    old: Option<&serde_json::Value>,
    new: Option<&serde_json::Value>,
) -> Option<Change> {
    match (old.and_then(|v| v.as_f64()), new.and_then(|v| v.as_f64())) {
        (None, None) => None,
        (None, Some(_)) => Some(Change::Tightened),
        (Some(_), None) => Some(Change::Loosened),
        (Some(a), Some(b)) if a == b => None,
        (Some(a), Some(b)) => Some(if (b < a) == upper {
            Change::Tightened
        } else {
            Change::Loosened
        }),
    }
}

/// The change of a restricting keyword (`pattern`, `format`, …), if any: set is
/// tighter, unset looser, replaced neither (`multipleOf` excepted: 4 → 2 accepts every
/// old value, 2 → 4 only some).
pub fn restriction_change(
    key: &str,
    old: Option<&serde_json::Value>,
    new: Option<&serde_json::Value>,
) -> Option<Change> {
    match (old, new) {
        (None, None) => None,
        (None, Some(_)) => Some(Change::Tightened),
        (Some(_), None) => Some(Change::Loosened),
        (a, b) if a == b => None,
        (Some(a), Some(b)) if key == "multipleOf" => {
            let (Some(a), Some(b)) = (a.as_f64(), b.as_f64()) else {
                return Some(Change::ConstraintChanged);
            };
            let divides = |x: f64, y: f64| y != 0.0 && (x / y).fract() == 0.0;
            Some(if divides(a, b) {
                Change::Loosened
            } else if divides(b, a) {
                Change::Tightened
            } else {
                Change::ConstraintChanged
            })
        }
        _ => Some(Change::ConstraintChanged),
    }
}

/// A tool hint: its name, its default when absent (the spec's), and which value is the
/// riskier one.
pub struct Hint {
    /// `readOnlyHint`, …
    pub key: &'static str,
    /// The value an absent hint means.
    pub default: bool,
    /// The value that asks a client for more care.
    pub risky: bool,
}

/// The four hints of the spec's `ToolAnnotations`.
pub const HINTS: [Hint; 4] = [
    Hint {
        key: "readOnlyHint",
        default: false,
        risky: false,
    },
    Hint {
        key: "destructiveHint",
        default: true,
        risky: true,
    },
    Hint {
        key: "idempotentHint",
        default: false,
        risky: false,
    },
    Hint {
        key: "openWorldHint",
        default: true,
        risky: true,
    },
];

/// What each hint means for a tool's `annotations` (defaults applied; a read-only tool is
/// neither destructive nor anything but idempotent, as the spec says the two hints are
/// meaningful only when `readOnlyHint` is false).
pub fn effective_hints(annotations: &serde_json::Value) -> [bool; 4] {
    let get = |h: &Hint| annotations[h.key].as_bool().unwrap_or(h.default);
    let read_only = get(&HINTS[0]);
    [
        read_only,
        !read_only && get(&HINTS[1]),
        read_only || get(&HINTS[2]),
        get(&HINTS[3]),
    ]
}

/// The change of one hint, if its meaning changed.
pub fn hint_change(hint: &Hint, old: bool, new: bool) -> Option<Change> {
    match (old == new, new == hint.risky) {
        (true, _) => None,
        (false, true) => Some(Change::HintRiskier),
        (false, false) => Some(Change::HintSafer),
    }
}

#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;
