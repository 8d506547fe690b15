//! mcptape's integration tests: real processes over real pipes, the bundled example
//! server, and real peers (the official Python and TypeScript SDK clients, the reference
//! server-everything, mcporter's tapes). Run `tests/peers/install` first.

mod action;
mod bad_input;
mod call;
mod call_listing;
mod causal;
mod claude;
mod colour;
mod deep;
mod exit;
mod files;
mod fixes_c;
mod formats;
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
mod npm;
mod package;
mod precommit;
mod progress;
mod progress_bars;
mod readme;
mod record;
mod redact;
mod redact_gaps;
mod replay;
mod replay_edges;
mod stateless;
mod support;
mod tables;
mod tapes;
mod term;
mod torn;
mod verify;
mod verify_empty;
