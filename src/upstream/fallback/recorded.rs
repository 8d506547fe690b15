//! What `new` reads from the replayed tape: the recorded handshake it plays to the real
//! server. (Whether the tape answers a request is the replay's to say:
//! [`crate::upstream::pick::Picker::accepts`].)

use crate::message::Message;
use crate::tape::{Direction, ServerTape};

/// The server's first recorded `initialize` request, and the `notifications/initialized`
/// the client sent after it in that connection, as sent; none when no connection holds
/// an `initialize`. Connections are decoded one at a time, only until one has it.
pub fn handshake(tape: &ServerTape) -> Option<(Message, Option<Message>)> {
    (0..tape.len()).find_map(|i| {
        let (tape, conn) = tape.connection(i);
        let mut init: Option<Message> = None;
        let mut initialized: Option<Message> = None;
        let sent = conn
            .entries
            .iter()
            .map(|&e| &tape.entries[e])
            .filter(|e| e.meta.dir == Direction::Send);
        for entry in sent {
            let msg = &entry.message;
            match msg.method() {
                Some("initialize") if init.is_none() => init = Some(msg.clone()),
                Some("notifications/initialized") if init.is_some() => {
                    initialized = Some(msg.clone());
                    break;
                }
                _ => {}
            }
        }
        init.map(|init| (init, initialized))
    })
}
