//! Where an entry came from when it did not cross a wire: `_meta.source`.
//!
//! A recorded entry has no `source`. An imported one ([`crate::import`]) says which
//! agent's transcript it was reconstructed from and which session; the handshake an
//! importer makes up (the transcript holds none) is also marked `synthesized`, so replay
//! relaxes it and verify plays its own; an answer the transcript held only in part is
//! marked `incomplete` with what is missing. Written and read here only; a value of
//! another shape reads as absent (a reader ignores what it does not know).

use serde_json::{Map, Value, json};

/// `_meta.source` of an entry reconstructed from an agent's transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// The agent whose transcript it was read from (`claude-code`, `codex`).
    pub imported: String,
    /// The agent's id of the session.
    pub session: Option<String>,
    /// True for what the importer made up: the handshake (`$transport/start`,
    /// `initialize` and its answer, `notifications/initialized`) and the close.
    pub synthesized: bool,
    /// What the transcript lacks of this answer (cut short, kept aside in a file that is
    /// gone), when it does.
    pub incomplete: Option<String>,
}

impl Source {
    /// The member's value as written on the tape.
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("imported".into(), json!(self.imported));
        if let Some(session) = &self.session {
            out.insert("session".into(), json!(session));
        }
        if self.synthesized {
            out.insert("synthesized".into(), json!(true));
        }
        if let Some(what) = &self.incomplete {
            out.insert("incomplete".into(), json!(what));
        }
        Value::Object(out)
    }

    /// Reads the member; `None` for any other shape (no `imported` string).
    pub fn from_json(value: &Value) -> Option<Source> {
        let text = |name: &str| value.get(name).and_then(Value::as_str).map(str::to_owned);
        Some(Source {
            imported: text("imported")?,
            session: text("session"),
            synthesized: value.get("synthesized") == Some(&Value::Bool(true)),
            incomplete: text("incomplete"),
        })
    }
}

/// The protocol versions of the `initialize` era mcptape knows: what replay answers a
/// synthesized handshake with when the client asks for one of them.
pub const KNOWN_PROTOCOL_VERSIONS: [&str; 4] =
    ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

impl crate::tape::format::Meta {
    /// True for an entry an importer made up (the handshake of an imported connection):
    /// replay relaxes it, verify plays its own.
    pub fn synthesized(&self) -> bool {
        self.source.as_ref().is_some_and(|s| s.synthesized)
    }

    /// What the transcript lacks of this imported answer, if it is incomplete.
    pub fn incomplete(&self) -> Option<&str> {
        self.source.as_ref().and_then(|s| s.incomplete.as_deref())
    }
}

/// True when `asked` (raw JSON, quotes included) is a version in
/// [`KNOWN_PROTOCOL_VERSIONS`].
pub fn is_known_version(asked: &str) -> bool {
    KNOWN_PROTOCOL_VERSIONS
        .iter()
        .any(|v| asked.strip_prefix('"').and_then(|a| a.strip_suffix('"')) == Some(*v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_ignores_other_shapes() {
        let s = Source {
            imported: "claude-code".into(),
            session: Some("abc".into()),
            synthesized: true,
            incomplete: Some("cut".into()),
        };
        assert_eq!(Source::from_json(&s.to_json()), Some(s));
        assert_eq!(
            json!({"imported":"claude-code"}).to_string(),
            Source {
                imported: "claude-code".into(),
                session: None,
                synthesized: false,
                incomplete: None
            }
            .to_json()
            .to_string()
        );
        assert_eq!(Source::from_json(&json!("x")), None);
        assert_eq!(Source::from_json(&json!({"imported": 3})), None);
    }
}
