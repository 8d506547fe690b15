//! The tap as a layer: it watches every message that passes and hands it to the tape
//! writer ([`crate::record::tap`]); it never changes, holds or drops one.
//!
//! Each line takes its length from the writer's queue budget. While the writer keeps up
//! that costs nothing; once it is [`crate::record::tap::MAX_QUEUED_BYTES`] behind, the
//! line is queued anyway and [`Layer::room`] makes the live path wait for the writer.
//! While it waits, the upstream behind it is not read further: a child's stdout is read
//! only when asked for, and an HTTP link holds at most
//! [`MAX_HELD_BYTES`](crate::upstream::http::link::MAX_HELD_BYTES) of server messages,
//! then leaves its sockets unread (TCP then slows the server). So what a server sends
//! while the disk stalls is held in bounded memory.

use crate::layer::{Later, Layer, Step};
use crate::message::Message;
use crate::record::tap::TapHandle;
use crate::tape::Direction;
use crate::tape::close::Close;
use crate::upstream::Event;

/// The recording tap of one connection, as a layer.
pub struct TapLayer {
    tap: TapHandle,
    /// Bytes queued past the budget, to wait for before the next message.
    owed: usize,
}

impl TapLayer {
    /// A layer that records into `tap`.
    pub fn new(tap: TapHandle) -> TapLayer {
        TapLayer { tap, owed: 0 }
    }

    /// Tells the tape writer, before any line, to drop result bodies (`--redact-results`).
    pub fn drop_results(&self) {
        self.tap.drop_results();
    }

    /// Records `msg`, with the stream it came on when the upstream said
    /// ([`Message::stream`]).
    fn record(&mut self, dir: Direction, msg: &Message) {
        let bytes = msg.bytes();
        let n = bytes.len();
        let budget = if self.tap.try_reserve(n) {
            n
        } else {
            self.owed += n;
            0
        };
        match msg.stream() {
            Some(stream) if dir == Direction::Recv => self.tap.line_on(Some(stream), bytes, budget),
            _ => self.tap.line_reserved(dir, bytes, budget),
        }
    }
}

impl Layer for TapLayer {
    fn client(&mut self, msg: Message) -> Step {
        self.record(Direction::Send, &msg);
        Step::Pass(msg)
    }

    fn server(&mut self, msg: Message) -> Step {
        self.record(Direction::Recv, &msg);
        Step::Pass(msg)
    }

    fn oversize(&mut self, dir: Direction, len: usize, prefix: &[u8]) {
        self.tap.oversize(dir, len, prefix);
    }

    fn event(&mut self, (kind, params): &Event) {
        self.tap.lifecycle(kind.clone(), params.clone());
    }

    fn close(&mut self, close: &Close) {
        self.tap.close(close);
    }

    fn room(&mut self) -> Option<Later<()>> {
        match std::mem::take(&mut self.owed) {
            0 => None,
            n => Some(Box::pin(self.tap.room(n))),
        }
    }
}
