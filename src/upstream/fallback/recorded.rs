//! What `new` reads from the replayed tape: the recorded handshake it plays to the real
//! server, and — until the replay engine says it ([`crate::upstream::pick::Picker`]) —
//! whether the tape holds a request like the client's at all.

use serde_json::Value;

use crate::message::{Kind, Message};
use crate::tape::{Direction, ServerTape};

/// Messages that never go to the real server: the replay answers them.
const REPLAYED_ALWAYS: &[&str] = &["initialize", "ping", "server/discover"];

/// The server's recorded client requests, and its first recorded handshake.
pub struct Recorded {
    /// Every recorded client request: its method and params without `_meta`.
    requests: Vec<(String, Value)>,
    /// The first recorded `initialize` request, and the `notifications/initialized`
    /// after it, as the client sent them.
    pub handshake: Option<(Message, Option<Message>)>,
}

impl Recorded {
    /// Reads them from every connection of the server.
    pub fn of(tape: &ServerTape) -> Recorded {
        let mut recorded = Recorded {
            requests: Vec::new(),
            handshake: None,
        };
        for i in 0..tape.len() {
            let (tape, conn) = tape.connection(i);
            let mut init: Option<Message> = None;
            let mut initialized: Option<Message> = None;
            for &e in &conn.entries {
                let entry = &tape.entries[e];
                if entry.meta.dir != Direction::Send {
                    continue;
                }
                let msg = &entry.message;
                match msg.method() {
                    Some("initialize") if init.is_none() => init = Some(msg.clone()),
                    Some("notifications/initialized") if initialized.is_none() => {
                        initialized = Some(msg.clone());
                    }
                    _ => {}
                }
                if msg.kind() == Kind::Request
                    && let Some(method) = msg.method()
                {
                    recorded.requests.push((method.to_owned(), params(msg)));
                }
            }
            if recorded.handshake.is_none()
                && let Some(init) = init
            {
                recorded.handshake = Some((init, initialized));
            }
        }
        recorded
    }

    /// True when `msg` is a request the tape holds (same method, same params but for
    /// `_meta`), or one the replay always answers (the handshake, `ping`).
    pub fn holds(&self, msg: &Message) -> bool {
        let Some(method) = msg.method() else {
            return true;
        };
        if REPLAYED_ALWAYS.contains(&method) {
            return true;
        }
        let params = params(msg);
        self.requests
            .iter()
            .any(|(m, p)| m == method && *p == params)
    }
}

/// A message's params without `_meta` (which carries progress tokens and the like).
fn params(msg: &Message) -> Value {
    let mut params = msg.value().get("params").cloned().unwrap_or(Value::Null);
    if let Value::Object(members) = &mut params {
        members.remove("_meta");
    }
    params
}
