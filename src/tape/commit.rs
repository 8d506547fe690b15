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
}

/// Every body state, for reading a word back.
pub const BODIES: [Body; 3] = [Body::Kept, Body::Redacted, Body::Dropped];

impl Body {
    /// The state's word.
    pub fn as_str(self) -> &'static str {
        match self {
            Body::Kept => "kept",
            Body::Redacted => "redacted",
            Body::Dropped => "dropped",
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
    /// The hash, lowercase hex.
    pub sha256: String,
    /// What the tape kept of the answer.
    pub body: Body,
}

/// The one algorithm written today.
pub const ALG: &str = "jcs-sha256";

impl CommitEntry {
    /// The entry's `params`.
    pub fn params(&self) -> Value {
        let mut p = json!({
            "alg": self.alg,
            "sha256": self.sha256,
            "body": self.body.as_str(),
        });
        let obj = p.as_object_mut().expect("a JSON object literal");
        if let Some(id) = &self.id {
            let id = serde_json::from_str::<Value>(id).unwrap_or_else(|_| json!(id));
            obj.insert("id".into(), id);
        }
        if let Some(tool) = &self.tool {
            obj.insert("tool".into(), json!(tool));
        }
        p
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
            sha256: params["sha256"].as_str()?.to_owned(),
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
            sha256: "00".repeat(32),
            body: Body::Dropped,
        };
        assert_eq!(CommitEntry::read(&entry.params()), Some(entry));
        assert_eq!(CommitEntry::read(&json!({"alg": ALG, "sha256": "x"})), None);
    }
}
