//! Slow writes: how a message marked [`crate::message::Message::slowly`] (the
//! `slow-stream` fault) reaches its client, on stdio and on the HTTP front alike — in
//! pieces of [`SLOW_PIECE_BYTES`] with [`SLOW_PAUSE`] between them, and never more than
//! [`SLOW_MAX_PIECES`] pieces (a bigger message gets bigger pieces), so that a large
//! answer still ends within about `SLOW_MAX_PIECES × SLOW_PAUSE` (1.28 s).
//!
//! The client still gets the whole message, byte for byte; the tape records it once,
//! whole (the tap saw it before it was cut).

use std::ops::Range;
use std::time::Duration;

/// The size of one piece of a slow write, in bytes.
pub const SLOW_PIECE_BYTES: usize = 16;

/// The pause between two pieces of a slow write.
pub const SLOW_PAUSE: Duration = Duration::from_millis(20);

/// The most pieces one slow write is cut into.
pub const SLOW_MAX_PIECES: usize = 64;

/// Where the pieces of a `len`-byte slow write lie, in order.
pub fn pieces(len: usize) -> impl Iterator<Item = Range<usize>> {
    let size = SLOW_PIECE_BYTES.max(len.div_ceil(SLOW_MAX_PIECES));
    (0..len)
        .step_by(size)
        .map(move |start| start..(start + size).min(len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_message_is_cut_in_pieces_of_sixteen_bytes_that_cover_it() {
        let cut: Vec<_> = pieces(40).collect();
        assert_eq!(cut, vec![0..16, 16..32, 32..40]);
    }

    #[test]
    fn a_large_message_is_cut_in_at_most_the_cap_of_pieces() {
        let len = 1_000_003;
        let cut: Vec<_> = pieces(len).collect();
        assert!(cut.len() <= SLOW_MAX_PIECES, "{}", cut.len());
        assert_eq!(cut.first().map(|r| r.start), Some(0));
        assert_eq!(cut.last().map(|r| r.end), Some(len));
        assert!(cut.windows(2).all(|w| w[0].end == w[1].start));
    }

    #[test]
    fn nothing_to_write_is_no_piece() {
        assert_eq!(pieces(0).count(), 0);
    }
}
