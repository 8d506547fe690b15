//! Random ids: the HTTP front's session ids and the tap's connection ids.
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

#[cfg(test)]
mod tests;
