//! Random ids: the HTTP front's session ids, the tap's connection ids, and the ids of
//! calls held for approval.
//!
//! Both come from the operating system's generator through the `getrandom` crate. A
//! session id is a bearer secret (whoever holds it talks to that session), so there is no
//! fallback to a guessable id (a pid, a clock, a hash): a failure is an [`IdError`] for the
//! caller to report. A connection id only keeps a tape's connections apart, but it is drawn
//! the same way rather than from anything another process could predict or repeat.

use thiserror::Error;

/// Random bytes in a session id: 128 bits, written as 32 hex digits.
pub const SESSION_ID_BYTES: usize = 16;
/// Random bytes in a connection id: 32 bits, written as 8 hex digits before `-1`.
pub const CONN_ID_BYTES: usize = 4;
/// Characters in the id of a call held for approval: 30 random bits, one character of
/// [`APPROVAL_ID_ALPHABET`] for every 5.
pub const APPROVAL_ID_LEN: usize = 6;
/// The characters of an approval id: RFC 4648 base32, lowercase — short and easy to type
/// (no `0`/`o`, `1`/`l` pairs to confuse: the digits are 2–7).
const APPROVAL_ID_ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";

/// The operating system gave no random bytes.
#[derive(Debug, Error)]
#[error("cannot draw a random {what} from the operating system")]
pub struct IdError {
    /// What the id was for: `session id`, `connection id`.
    what: &'static str,
    /// The generator's own error.
    #[source]
    source: getrandom::Error,
}

/// `N` random bytes as lowercase hex.
fn hex<const N: usize>(what: &'static str) -> Result<String, IdError> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|source| IdError { what, source })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A fresh `Mcp-Session-Id` for the HTTP front: 32 random hex digits.
pub fn session_id() -> Result<String, IdError> {
    hex::<SESSION_ID_BYTES>("session id")
}

/// A fresh connection id for a tape's `_meta.conn`: 8 random hex digits, then `-1` (one
/// connection per tap).
pub fn conn_id() -> Result<String, IdError> {
    Ok(format!("{}-1", hex::<CONN_ID_BYTES>("connection id")?))
}

/// A fresh id for a call held for approval (`mcptape approve ID`): [`APPROVAL_ID_LEN`]
/// lowercase base32 characters. A person types it, so it is short; the desk makes sure
/// no two pending calls share one.
pub fn approval_id() -> Result<String, IdError> {
    let mut bytes = [0u8; APPROVAL_ID_LEN];
    getrandom::fill(&mut bytes).map_err(|source| IdError {
        what: "approval id",
        source,
    })?;
    Ok(bytes
        .iter()
        .map(|b| char::from(APPROVAL_ID_ALPHABET[usize::from(b & 31)]))
        .collect())
}

/// True when `id` has the shape of an approval id (so it is safe in a file name).
pub fn is_approval_id(id: &str) -> bool {
    id.len() == APPROVAL_ID_LEN && id.bytes().all(|b| APPROVAL_ID_ALPHABET.contains(&b))
}

#[cfg(test)]
mod tests;
