//! RFC 8785 (JCS) canonical JSON, and the SHA-256 of it: the commitment to a JSON text.
//!
//! The canonical form is [`serde_jcs`]'s: object members sorted by the UTF-16 code units
//! of their names, no whitespace, strings with only `\"`, `\\`, `\b`, `\f`, `\n`, `\r`,
//! `\t` and lowercase `\u00xx` (other controls) escaped, everything else literal UTF-8,
//! and every number written as ECMAScript's `Number.prototype.toString` writes the IEEE
//! 754 double it denotes (through `ryu-js`): `-0` is `0`, `1e21` is `1e+21`, an integer
//! beyond 2^53 becomes its nearest double (`9007199254740993` is `9007199254740992`).
//! serde_json reads each number to the double nearest to it (`float_roundtrip`, which
//! serde_jcs turns on), integers up to 2^64 exactly; `arbitrary_precision` is off, so a
//! value never carries more digits than a double holds.
//!
//! A text has no canonical form — [`Refusal`] — when it holds what I-JSON (RFC 7493,
//! which RFC 8785 §3.1 requires) forbids: a lone UTF-16 surrogate (`"\ud800"`; serde_json
//! cannot hold one in a string, and Python's `rfc8785` refuses it too), or a number
//! beyond the double range (`1e400`). A text nested deeper than
//! [`crate::depth::MAX_JSON_DEPTH`] levels is not read (every walk of JSON here is
//! bounded), and is refused too. Names that occur twice in one object keep the last value
//! (as `JSON.parse` and Python's `json` do); I-JSON forbids them, but they are not looked
//! for.

use serde_json::Value;

/// Why a JSON text has no commitment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// It holds a `\uD800`–`\uDFFF` escape that is not half of a pair.
    LoneSurrogate,
    /// It nests deeper than [`crate::depth::MAX_JSON_DEPTH`] levels.
    TooDeep(usize),
    /// It is not JSON, or holds a number no double can hold: serde_json's words.
    Unreadable(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::LoneSurrogate => {
                f.write_str("it holds a lone UTF-16 surrogate, which I-JSON and so RFC 8785 refuse")
            }
            Refusal::TooDeep(levels) => write!(
                f,
                "it nests {levels} levels deep, more than the {} mcptape reads",
                crate::depth::MAX_JSON_DEPTH
            ),
            Refusal::Unreadable(why) => write!(f, "it cannot be read as I-JSON: {why}"),
        }
    }
}

/// The canonical form of a value. A value serde_json read from JSON always has one (its
/// numbers are finite, its names are strings); one nested deeper than serde_json reads
/// is not expected here ([`canonical_text`] bounds it).
pub fn canonical(value: &Value) -> Vec<u8> {
    serde_jcs::to_vec(value).expect("a serde_json value has finite numbers and string names")
}

/// The canonical form of a JSON text, or why it has none.
pub fn canonical_text(text: &str) -> Result<Vec<u8>, Refusal> {
    let levels = crate::depth::depth(text.as_bytes());
    if levels > crate::depth::MAX_JSON_DEPTH {
        return Err(Refusal::TooDeep(levels));
    }
    if has_lone_surrogate(text) {
        return Err(Refusal::LoneSurrogate);
    }
    let value: Value =
        serde_json::from_str(text).map_err(|e| Refusal::Unreadable(e.to_string()))?;
    Ok(canonical(&value))
}

/// The commitment to a JSON text: the SHA-256 of its canonical form, lowercase hex.
pub fn commitment(text: &str) -> Result<String, Refusal> {
    canonical_text(text).map(|bytes| sha256_hex(&bytes))
}

/// The SHA-256 of `bytes`, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// True when a JSON text holds a surrogate escape that is not half of a pair (the
/// replacement [`crate::message::without_lone_surrogates`] makes is as long as what it
/// replaces, so a changed text is one that had one).
fn has_lone_surrogate(text: &str) -> bool {
    text.contains("\\u") && crate::message::without_lone_surrogates(text) != text
}

#[cfg(test)]
mod tests;
