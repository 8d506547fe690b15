//! mcptape records the JSON-RPC traffic between MCP clients and servers at the transport
//! level, one NDJSON line per message, into tapes.
//!
//! Architecture: a **downstream** (where the client is: our stdio, the HTTP [`front`], or
//! the built-in [`client`]) talks to an **upstream** — a child server process
//! ([`upstream::child`]), a remote Streamable HTTP server ([`upstream::http`]), or the
//! replay engine that answers from a tape ([`upstream::replay`], [`upstream::pick`]); a **tap** sees every line after it is
//! forwarded and appends it to a tape, never changing, delaying or dropping live traffic.
//!
//! - [`framing`] cuts byte streams into lines without changing a byte; [`message`] tells
//!   what a line is, lazily.
//! - [`tape`] is the file format, the shared-append writer, the reader, and names → paths.
//! - [`tap`] turns forwarded lines into tape entries on a thread of its own.
//! - [`matcher`] normalizes and compares messages for replay; [`verdict`] is what a
//!   replayed connection found, and [`report`] the directory it reaches its parent by.
//! - [`verify`] plays a tape's client side against a live server (the player, a
//!   downstream) and classifies each answer; [`cmd::verify`] reports what it found.
//! - [`process`] owns child processes; [`mode`] decides whether a proxy records or
//!   replays, from its own environment or its nearest ancestor's.
//! - [`term`] escapes what a terminal would obey in text printed for people.
//! - The HTTP [`front`] is guarded by [`listen`] (connection bound, `EMFILE` pause,
//!   header timeout), [`guard`] (`Origin`/`Host`, body limits) and [`idle`] (session
//!   expiry); at shutdown it awaits its sessions' upstream `DELETE`s.
//! - [`redact`] keeps secrets off tapes with the rules of [`redact::rules`]; [`redact::entropy`] is
//!   `redact --check`'s guess at secrets no rule knows.
//! - [`cmd`] holds one file per subcommand, each returning an [`outcome::Outcome`];
//!   [`cli`] their arguments (clap data and value parsers); [`error`] the errors;
//!   [`outcome`] the one place that maps outcomes and errors to exit codes and prints
//!   errors.
//! - [`duration`] checks every duration flag as it is parsed.
//! - [`depth`] bounds every walk of JSON: deeper parts are skipped iteratively and read as
//!   a marker; the redactor's scanner is iterative at any depth.

pub mod cli;
pub use downstream::client;
pub mod cmd;
pub mod config;
pub mod depth;
pub mod downstream;
pub mod duration;
pub mod error;
pub mod framing;
pub use downstream::front;
pub mod guard;
pub mod idle;
pub mod ids;
pub mod layer;
pub mod listen;
pub mod matcher;
pub mod message;
pub mod mode;
pub mod outcome;
pub mod process;
pub mod record;
pub mod redact;
pub mod report;
pub mod tape;
pub mod term;
pub mod upstream;
pub mod verdict;
pub mod verify;
