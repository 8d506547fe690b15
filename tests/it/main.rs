//! mcptape's integration tests: real processes over real pipes, the bundled example
//! server, and real peers (the official Python and TypeScript SDK clients, the reference
//! server-everything, mcporter's tapes). Run `tests/peers/install` first.

mod bad_input;
mod call;
mod causal;
mod claude;
mod deep;
mod exit;
mod files;
mod front_edges;
mod front_order;
mod front_routes;
mod get_stream;
mod habits;
mod help;
mod http;
mod http_limits;
mod lifecycle;
mod line_mode;
mod loaders;
mod matrix;
mod meta;
mod progress;
mod record;
mod redact;
mod redact_gaps;
mod replay;
mod replay_edges;
mod stateless;
mod support;
mod tapes;
mod term;
mod torn;
mod verify;
mod verify_empty;
