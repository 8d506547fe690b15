//! Where the client is: one driver per kind of front, each driving any
//! [`crate::upstream::Link`].
//!
//! - [`stdio`]: our own stdin/stdout (the `proxy` without `--listen`), line by line.
//! - [`front`]: the HTTP front, one task per session.
//! - the built-in client ([`crate::client`]) and
//!   verify's player ([`crate::verify`]).

pub mod front;
pub mod pump;
pub mod stdio;
