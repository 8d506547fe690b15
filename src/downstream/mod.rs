//! Where the client is: one driver per kind of front, each driving any
//! [`crate::upstream::Link`].
//!
//! - [`pump`]: the stdio pump, our stdin/stdout line by line (the `proxy` without
//!   `--listen`, over a remote, the replay engine, or a child in line mode);
//!   [`relay`]: its fast path for a child, bytes as they come; [`stdio`]: our stdin and
//!   stdout as async streams; [`apart`]: both hold an answer back until the client has
//!   read the notification just before it.
//! - [`front`]: the HTTP front, one task per session.
//! - [`slow`]: how both write a message a fault marked slow (`slow-stream`).
//! - [`client`]: the built-in client behind `call` and `tools`; verify's player is
//!   [`crate::verify`].

pub mod apart;
pub mod client;
pub mod front;
pub mod pump;
pub mod relay;
pub mod slow;
pub mod stdio;
