//! mcptape records the JSON-RPC traffic between MCP clients and servers at the transport
//! level, one NDJSON line per message, into tapes, and plays tapes back.
//!
//! # Roles
//!
//! - **Upstream** — where client messages go, behind one interface, [`Link`]
//!   (`upstream/`): a server process ([`ChildLink`]), a Streamable HTTP session
//!   ([`HttpLink`], over [`Remote`]), or the replay engine ([`ReplayLink`], which answers
//!   from a tape through the connection [`Picker`] and its [`Replay`] script).
//! - **Downstream** — where the client is, one driver per kind (`downstream/`), each
//!   driving any `Link`: the stdio pump ([`pump`]) and its byte-relay fast path for a
//!   child (`downstream/relay.rs`), the HTTP front (`downstream/front/`: accept, one task
//!   per session that owns its `Link`, the hyper handler), the built-in client behind
//!   `call`/`tools` (`downstream/client.rs`), and verify's player (`verify/player.rs`).
//! - **Layers** — what sits between the two, written once: a [`Layers`] stack in front of
//!   any `Link` is a `Link` itself ([`Layered`]); [`AnyLink`] is whichever upstream the
//!   command line chose, behind its layers. The recording tap is the first layer
//!   ([`TapLayer`]; `record/`), and a recording's lifetime is a [`RecordSession`] whose
//!   finish cannot be dropped.
//!
//! # Tap order
//!
//! On every message path (the stdio pump, the HTTP front's sessions, the built-in client)
//! the tap, as the first layer, sees a client message just before it is handed to the
//! upstream, and a server message just before it is given to the client (written to
//! stdout, routed to an HTTP stream). The byte relay records each line right after it
//! forwarded its last byte, with no await in between. Either way a request is on the tape
//! before its answer, and the tap never changes, holds or drops live traffic: past its
//! queue budget it slows the live path instead.
//!
//! # The rest
//!
//! `tape/` is the file format (one serialiser for lifecycle entries), the shared-append
//! writer and the readers; `framing` and `message` cut and classify lines without changing
//! a byte; `era` tells the two protocol eras apart (a session opened by `initialize`, or
//! sessionless 2026-07-28 requests, `resultType`, multi-round-trip retries), for the HTTP
//! front, the replay of sessionless requests (`upstream/replay/stateless.rs`), verify and
//! `call`; `matcher` normalizes and compares for replay and verify; `redact/` keeps
//! secrets off tapes; `mode` decides record or replay from flags and the environment (our
//! own or the nearest ancestor's); `process` owns child processes; `term` escapes what a
//! terminal would obey, `style` colours what `term` escaped (`--color`, `NO_COLOR`),
//! `github` writes GitHub workflow commands (`--format github`), `progress` draws bars on
//! a terminal's stderr and `table` aligns columns; `cmd/` holds one file per subcommand,
//! each returning an [`Outcome`]; [`outcome`] is the one place that maps outcomes and
//! errors to exit codes and prints errors.
//!
//! The modules are private; what other crates (the binary, the tests, the benchmarks and
//! the fuzz targets) use is re-exported below.

mod agents;
mod check;
mod cli;
mod cmd;
mod commit;
mod config;
mod depth;
mod diff;
mod downstream;
mod duration;
mod era;
mod error;
mod exchange;
mod export;
mod fault;
mod framing;
mod github;
mod ids;
mod import;
mod layer;
mod matcher;
mod message;
mod mode;
pub mod outcome;
mod policy;
mod process;
mod progress;
mod receipt;
mod record;
mod redact;
mod reference;
mod report;
mod style;
mod table;
mod tape;
mod term;
mod upstream;
mod usage;
mod verdict;
mod verify;
mod view;

pub use cli::{Cli, MatchMode};
pub use config::Config;
pub use downstream::pump;
pub use error::{ClientError, Error, HttpError, LinkError, Result, TapeError};
pub use framing::{Frame, LineCodec};
pub use layer::{AnyLink, Flow, Later, Layer, Layered, Layers, Step};
pub use matcher::{Glob, Matcher};
pub use message::{Kind, Message, Shape};
pub use outcome::Outcome;
pub use record::layer::TapLayer;
pub use record::session::{RecordSession, Recorded};
pub use redact::Redactor;
pub use tape::{
    Close, CloseReason, CloseStatus, Connection, Direction, Entry, Lifecycle, LifecycleKind, Meta,
    ServerTape, Tape, TapeWriter,
};
pub use upstream::child::ChildLink;
pub use upstream::http::{HttpLink, Remote};
pub use upstream::pick::Picker;
pub use upstream::refusals::Refusals;
pub use upstream::replay::{Options as ReplayOptions, Replay, ReplayLink, ServerFacts};
pub use upstream::sse::Sse;
pub use upstream::{Closed, Event, Incoming, Link};

/// Functions on lines and messages that the fuzz targets and benchmarks drive directly.
pub mod lines {
    pub use crate::framing::content;
    pub use crate::message::shape;
    pub use crate::tape::format::encode;
}

/// Replay's and verify's comparison of messages, for the fuzz targets.
pub mod compare {
    pub use crate::matcher::{diff, differences, expand_json_text};
}

/// `mcptape show`'s trace of a tape, for the fuzz targets.
pub use cmd::show::trace;

/// The fault rule language and its files, for the fuzz targets.
pub mod fault_rules {
    pub use crate::fault::FaultPlan;
    pub use crate::fault::file::parse as parse_file;
}

/// The policy file's language (`--policy`), for the fuzz targets: any text parses or
/// fails with an error naming its line.
pub mod policy_toml {
    pub use crate::policy::Policy;
    pub use crate::policy::file::parse;
}

/// The config formats' documents (`install`'s JSON/JSONC, TOML and YAML), for the fuzz
/// targets: parse any text, list entries, edit a member, apply the edits.
pub mod config_documents {
    pub use crate::agents::document::{DocError, Document, Edit, Entry, apply_edits};
    pub use crate::agents::json::JsonDocument;
    pub use crate::agents::toml::TomlDocument;
    pub use crate::agents::yaml::YamlDocument;
}

/// The agents' transcript readers behind `import` and `scan`, for the fuzz targets.
pub mod transcripts {
    pub use crate::import::claude::{Transcript as ClaudeTranscript, read as read_claude};
    pub use crate::import::codex::Rollout;
    pub use crate::import::codex::parse as parse_codex;
    pub use crate::import::{Answer, ImportError, ImportedCall, ImportedSession};
}

/// RFC 8785 (JCS) canonical JSON and the commitments made of it, for the fuzz targets and
/// the cross-check against other implementations (tests/it/jcs.rs).
pub mod jcs {
    pub use crate::commit::jcs::{Refusal, canonical, canonical_text, commitment, sha256_hex};
}
