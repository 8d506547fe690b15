//! `verify`'s progress bar: the recorded requests of the server's connections, counted as
//! the player plays (or skips) each one ([`crate::verify::Options::progress`]), and which
//! connection is playing. Drawn only on a terminal ([`crate::progress`]).

use crate::message::Kind;
use crate::progress::Progress;
use crate::tape::{Direction, Tape};

/// The bar of verifying `server`'s connections in `tape`: one step per recorded request
/// the player will come to (the handshake's `initialize` included); none when there is
/// no request.
pub(super) fn verify_bar(tape: &Tape, server: &str) -> Progress {
    let calls = tape
        .connections()
        .iter()
        .filter(|c| c.server == server)
        .flat_map(|c| c.entries.iter().map(|&i| &tape.entries[i]))
        .filter(|e| e.meta.dir == Direction::Send && e.message.kind() == Kind::Request)
        .count();
    if calls == 0 {
        return Progress::off();
    }
    Progress::counts(
        &format!("verify `{server}`"),
        u64::try_from(calls).unwrap_or(u64::MAX),
        "requests",
    )
}
