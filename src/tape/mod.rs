//! Tapes: NDJSON files of entries, one JSON-RPC message per line plus a top-level `_meta`.
//!
//! - [`format`]: one entry ⇄ one line (append `_meta` to the raw message; cut it out again).
//! - [`writer`]: appends whole lines to a shared tape (`O_APPEND`, one `write`, file lock).
//! - [`reader`]: loads a tape, tolerating a torn last line, and groups it into connections.
//! - [`store`]: session names ⇄ paths under `$MCPTAPE_HOME/recordings`, permissions, `.prev`.
//! - [`safety`]: what is never written: through a symlink, or into a directory others can
//!   write to (unless sticky and the file is ours).
//! - [`lifecycle`]: `$…` entries read as typed values (close reasons and exit statuses).
//!
//! Invariant: the message part of every line is byte-for-byte what crossed the wire. The
//! format is specified in `docs/FORMAT.md`; every older version keeps loading.

pub mod format;
pub mod lifecycle;
pub mod reader;
pub mod safety;
pub mod store;
pub mod writer;

pub use format::{Direction, Meta};
pub use reader::{Connection, Entry, Tape};
pub use writer::TapeWriter;
