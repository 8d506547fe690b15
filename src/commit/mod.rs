//! Commitments: the SHA-256 of a `tools/call` result's RFC 8785 (JCS) canonical form,
//! written in the tape (`$commit`, [`crate::tape::commit`]) so that what a server
//! answered can be proved later without keeping the answer.
//!
//! - [`jcs`]: the canonical form and the hash, and what has none (a lone surrogate, a
//!   number beyond a double, JSON nested too deep);
//! - [`layer`]: the layer nearest the server that hashes each `tools/call` result and
//!   tells a `$commit` up to the tap, which writes it just before the answer with what
//!   the tape kept of the body ([`crate::record::commits`]);
//! - [`body`]: the result a tape keeps when its body is dropped (`--redact-results`);
//! - [`settings`]: when commitments are on (`--commit`, `--redact-results`, a policy, or
//!   the mode's environment);
//! - [`check`]: a tape's commitments against its answers (`commitments verify`) or
//!   against an answer given (`commitments check`).
//!
//! The commitment is to the `result` member as the server sent it, before any layer
//! (a fault, the policy gate) changed what the client got, and before the tape's secret
//! redaction. A call the policy gate answers itself never reaches the server: it has no
//! commitment.

pub mod body;
pub mod check;
pub mod jcs;
pub mod layer;
pub mod settings;

pub use layer::CommitLayer;
pub use settings::Commitments;
