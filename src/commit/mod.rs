//! Commitments: the SHA-256 of a `tools/call` result's RFC 8785 (JCS) canonical form,
//! written in the tape (`$commit`, [`crate::tape::commit`]) so that what a server
//! answered can be proved later without keeping the answer.
