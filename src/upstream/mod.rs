//! Where client messages go.
//!
//! - [`child`]: a server process over its stdin/stdout, relayed byte for byte.
//! - [`replay`]: the replay engine, an in-memory transport that answers from a tape.

pub mod child;
pub mod replay;
