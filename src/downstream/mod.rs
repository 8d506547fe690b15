//! Where the client is: one driver per kind of front, each driving any
//! [`crate::upstream::Link`].
//!
//! - [`stdio`]: our own stdin/stdout (the `proxy` without `--listen`), line by line.
//! - the HTTP front ([`crate::front`]), the built-in client ([`client`]) and
//!   verify's player ([`crate::verify`]).

pub mod client;
pub mod pump;
pub mod relay;
pub mod stdio;
