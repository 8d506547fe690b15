//! What a `$commit` lifecycle entry says: the commitment to one `tools/call` result —
//! the SHA-256 of its RFC 8785 (JCS) canonical form ([`crate::commit`]) — written beside
//! the answer. Its `params` are written and read here, once.

use serde_json::{Value, json};

/// What the tape kept of the answer a commitment is to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Body {
    /// `kept`: the answer is on the tape as the server gave it.
    Kept,
    /// `redacted`: the answer is on the tape with secrets redacted, so it no longer
    /// hashes to the commitment.
    Redacted,
    /// `dropped`: the result body was left out (`--redact-results`).
    Dropped,
    /// `replaced`: an injected fault replaced the answer (`error`, `tool-error`,
    /// `malformed`) or withheld it (`timeout`): what the client got, and the tape holds, is
    /// not what the server sent (its `$fault` says what happened).
    Replaced,
    /// `missing`: the answer never reached the tape (the client cancelled the call, the
    /// connection ended, or a newer request took its id before it came).
    Missing,
}

/// Every body state, for reading a word back.
pub const BODIES: [Body; 5] = [
    Body::Kept,
    Body::Redacted,
    Body::Dropped,
    Body::Replaced,
    Body::Missing,
];

impl Body {
    /// The state's word.
    pub fn as_str(self) -> &'static str {
        match self {
            Body::Kept => "kept",
            Body::Redacted => "redacted",
            Body::Dropped => "dropped",
            Body::Replaced => "replaced",
            Body::Missing => "missing",
        }
    }

    /// The state of a word; `None` for an unknown one.
    pub fn parse(word: &str) -> Option<Body> {
        BODIES.into_iter().find(|b| b.as_str() == word)
    }
}

/// A `$commit` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitEntry {
    /// The id (JSON text) of the request whose result it commits to.
    pub id: Option<String>,
    /// The tool called (`params.name` of the request), when known.
    pub tool: Option<String>,
    /// The canonicalization and hash: `jcs-sha256`.
    pub alg: String,
    /// The hash, or why the result has none.
    pub digest: Digest,
    /// What the tape kept of the answer.
    pub body: Body,
}

/// A commitment's hash, or why a result has none (`sha256` or `reason` in the entry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Digest {
    /// `sha256`: the SHA-256 of the result's canonical form, lowercase hex.
    Sha256(String),
    /// `reason`: the result has no canonical form (a lone surrogate, a number beyond a
    /// double, nested too deep: [`crate::commit::jcs::Refusal`]), in words.
    None(String),
}

impl Digest {
    /// The hash, when there is one.
    pub fn sha256(&self) -> Option<&str> {
        match self {
            Digest::Sha256(hex) => Some(hex),
            Digest::None(_) => None,
        }
    }
}

/// The one algorithm written today.
pub const ALG: &str = "jcs-sha256";

impl CommitEntry {
    /// The entry's `params`.
    pub fn params(&self) -> Value {
        let mut p = serde_json::Map::new();
        if let Some(id) = &self.id {
            let id = serde_json::from_str::<Value>(id).unwrap_or_else(|_| json!(id));
            p.insert("id".into(), id);
        }
        if let Some(tool) = &self.tool {
            p.insert("tool".into(), json!(tool));
        }
        p.insert("alg".into(), json!(self.alg));
        match &self.digest {
            Digest::Sha256(hex) => p.insert("sha256".into(), json!(hex)),
            Digest::None(reason) => p.insert("reason".into(), json!(reason)),
        };
        p.insert("body".into(), json!(self.body.as_str()));
        Value::Object(p)
    }

    /// Reads an entry's `params`; `None` when they do not have its shape.
    pub fn read(params: &Value) -> Option<CommitEntry> {
        Some(CommitEntry {
            id: params
                .get("id")
                .filter(|id| id.is_string() || id.is_number())
                .map(Value::to_string),
            tool: params["tool"].as_str().map(str::to_owned),
            alg: params["alg"].as_str()?.to_owned(),
            digest: match (params["sha256"].as_str(), params["reason"].as_str()) {
                (Some(hex), _) => Digest::Sha256(hex.to_owned()),
                (None, Some(reason)) => Digest::None(reason.to_owned()),
                (None, None) => return None,
            },
            body: Body::parse(params["body"].as_str()?)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commit_entry_reads_back_as_written() {
        let entry = CommitEntry {
            id: Some("\"a\"".into()),
            tool: Some("echo".into()),
            alg: ALG.into(),
            digest: Digest::Sha256("00".repeat(32)),
            body: Body::Dropped,
        };
        assert_eq!(CommitEntry::read(&entry.params()), Some(entry));
        let none = CommitEntry {
            id: Some("7".into()),
            tool: None,
            alg: ALG.into(),
            digest: Digest::None("it holds a lone UTF-16 surrogate".into()),
            body: Body::Kept,
        };
        assert_eq!(CommitEntry::read(&none.params()), Some(none.clone()));
        for body in BODIES {
            let entry = CommitEntry {
                body,
                ..none.clone()
            };
            assert_eq!(CommitEntry::read(&entry.params()), Some(entry), "{body:?}");
        }
        assert_eq!(CommitEntry::read(&json!({"alg": ALG, "sha256": "x"})), None);
        assert_eq!(
            CommitEntry::read(&json!({"alg": ALG, "body": "kept"})),
            None,
            "neither a hash nor a reason"
        );
    }
}
