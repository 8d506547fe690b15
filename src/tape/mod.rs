//! Tapes: NDJSON files of entries, one JSON-RPC message per line plus a top-level `_meta`.
//!
//! - [`format`]: one entry ⇄ one line (append `_meta` to the raw message; cut it out again).
//! - [`writer`]: appends whole lines to a shared tape (`O_APPEND`, one `write`, file lock).
//! - [`reader`]: loads a whole tape, skipping torn lines, and groups it into connections.
//! - [`store`]: session names ⇄ paths under `$MCPTAPE_HOME/recordings`, permissions, `.prev`.
//! - [`safety`]: what is never written: through a symlink, or into a directory others can
//!   write to (unless sticky and the file is ours).
//! - [`lifecycle`]: `$…` entries read as typed values: the one reader of their methods.
//! - [`close`]: a `$transport/close` entry's reason and exit status, read and written.
//! - [`lines`]: reads a tape's file line by line; what one line is (entry, torn, broken).
//! - [`torn`]: torn lines (a writer killed mid-write) and the connections they may belong to.
//! - [`group`]: the rule that groups entries into connections, one entry at a time.
//! - [`census`]: a tape's servers and connections in one streaming pass (`list`, `replay`).
//! - [`served`]: the connections of one server, held compactly (a replaying proxy).
//! - [`kind`]: opening a file without blocking (`O_NONBLOCK`), and what kind it is.
//! - [`stream`]: which HTTP stream a server message came on (`_meta.stream`).
//! - [`source`]: where an imported entry came from (`_meta.source`).
//! - [`fault`]: what a `$fault` entry (an injected fault) says.
//! - [`note`]: `$note` entries (a person's headings, in no connection), written.
//!
//! Invariant: the message part of every line is byte-for-byte what crossed the wire. The
//! format is specified in `docs/FORMAT.md`; every older version keeps loading.

pub mod census;
pub mod close;
pub mod commit;
mod error;
pub mod fault;
pub mod format;
pub mod group;
pub mod kind;
pub mod lifecycle;
pub mod lines;
pub mod near;
pub mod note;
pub mod policy;
pub mod reader;
pub mod safety;
pub mod served;
pub mod source;
pub mod store;
pub mod stream;
#[cfg(test)]
pub(crate) mod testing;
pub mod torn;
pub mod writer;

pub use census::Census;
pub use close::{Close, CloseReason, CloseStatus};
pub use error::TapeError;
pub use format::{Direction, Meta};
pub use lifecycle::{Lifecycle, LifecycleKind};
pub use reader::{Connection, Entry, Tape};
pub use served::ServerTape;
pub use writer::TapeWriter;
