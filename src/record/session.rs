//! A recording's lifetime: [`RecordSession::open`] the tape, put its
//! [`RecordSession::layer`] in front of the live path's `Link` (which records the
//! connection's start: [`crate::layer::Layered::new`]), then [`RecordSession::finish`] —
//! whose result cannot be dropped — and [`report`] what it says.
//!
//! Used by every path that records: the stdio proxy, each session of the HTTP front, and
//! the built-in client behind `call`/`tools`.

use std::path::Path;

use crate::error::TapeError;
use crate::mode::Recording;
use crate::record::layer::TapLayer;
use crate::record::tap::{Tap, TapHandle, new_conn_id};
use crate::report;
use crate::tape::{TapeWriter, store};

/// One connection being recorded into a tape.
pub struct RecordSession {
    tap: Tap,
    /// The connection's id (`_meta.conn`).
    conn: String,
}

/// A finished recording: how many entries it wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recorded {
    /// Entries written.
    pub entries: usize,
}

impl RecordSession {
    /// Opens (or creates) the tape at `path` for one connection of `server`: its
    /// directory made safe, the file checked ([`crate::tape::safety`]), the size limit and
    /// redaction of `recording` applied. Nothing is written yet.
    pub fn open(
        path: &Path,
        server: &str,
        recording: &Recording,
    ) -> Result<RecordSession, TapeError> {
        store::ensure_dir(path)?;
        let writer = TapeWriter::open(path)?.limit(recording.max_bytes);
        let conn = new_conn_id()?;
        let tap = Tap::start(
            writer,
            server.to_owned(),
            conn.clone(),
            recording.redactor.clone(),
        );
        Ok(RecordSession { tap, conn })
    }

    /// The tap as the first layer of the live path.
    pub fn layer(&self) -> TapLayer {
        TapLayer::new(self.tap.handle())
    }

    /// The connection's id in the tape (`_meta.conn`).
    pub fn conn(&self) -> &str {
        &self.conn
    }

    /// The tap's raw handle, for the byte relay.
    pub fn handle(&self) -> TapHandle {
        self.tap.handle()
    }

    /// Writes what is queued, syncs the tape and stops the writer. A write error, a full
    /// tape or a writer that panicked is an error: the recording is not whole.
    #[must_use = "a recording's result must reach the exit status"]
    pub fn finish(self) -> Result<Recorded, TapeError> {
        let outcome = self.tap.finish();
        match outcome.error {
            Some(e) => Err(e),
            None => Ok(Recorded {
                entries: outcome.entries,
            }),
        }
    }
}

/// Says what a finished recording found: nothing when it is whole; otherwise the problem
/// goes to the `record` parent's report directory, or, standalone, to stderr. True when
/// the recording is whole.
pub fn report(result: &Result<Recorded, TapeError>, server: &str, dir: Option<&Path>) -> bool {
    let Err(e) = result else {
        return true;
    };
    let problem = crate::error::chain(e);
    match dir {
        Some(dir) => report::leave_problem(dir, server, &problem),
        None => crate::outcome::problem(&format!(
            "the recording of server `{server}` is incomplete: {problem}"
        )),
    }
    false
}
