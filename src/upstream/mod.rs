//! Where client messages go.
//!
//! - [`child`]: a server process over its stdin/stdout, relayed byte for byte.
//! - [`http`]: a remote Streamable HTTP server, behind a stdio front.
//! - [`replay`]: the replay engine, an in-memory transport that answers from a tape.
//! - [`pick`]: which recorded connection a live client gets.
//! - [`script`]: answers paired with requests by recorded order; how a recording ended.

pub mod child;
pub mod http;
pub mod pick;
pub mod replay;
pub mod script;
pub mod sse;
