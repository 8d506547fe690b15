//! mcptape's integration tests: real processes over real pipes, the bundled example
//! server, and real peers (the official Python and TypeScript SDK clients, the reference
//! server-everything, mcporter's tapes). Run `tests/peers/install` first.

mod bad_input;
mod call;
mod http;
mod record;
mod redact;
mod replay;
mod support;
mod tapes;
mod torn;
mod verify;
