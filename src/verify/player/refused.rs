//! A request the recording holds a refusal for, not an answer: the upstream answered it
//! with an HTTP status (`$http/status`), as a 2025-era server answers a 2026-07-28 probe
//! (`server/discover` with no session) with `400`. Through the HTTP front the client got
//! that status itself, so the tape has no JSON-RPC answer to compare with; verify
//! compares the refusals instead: the same status live is `same`, another status is
//! `changed`, and an answer where there was a refusal is `gone-error`.
//!
//! A live refusal reaches the player as the JSON-RPC error [`crate::upstream::refusals`]
//! makes of it (code [`UPSTREAM_ERROR_CODE`], message `HTTP <status> from …`).

use std::collections::HashMap;

use crate::message::{Kind, Message};
use crate::tape::lifecycle::Lifecycle;
use crate::tape::{Connection, Direction, Tape};
use crate::upstream::http::UPSTREAM_ERROR_CODE;
use crate::verify::compare::{Class, Played};

/// The status each request of a connection was refused with, by the request's tape line:
/// a `$http/status` recorded after the request and before the client's next message.
pub(super) fn by_request(tape: &Tape, conn: &Connection) -> HashMap<usize, u16> {
    let mut out = HashMap::new();
    let mut last_request = None;
    for entry in conn.entries.iter().map(|&i| &tape.entries[i]) {
        match entry.meta.dir {
            Direction::Send => {
                last_request = (entry.message.kind() == Kind::Request).then_some(entry.line);
            }
            Direction::Lifecycle => {
                if let (Some(line), Some(Lifecycle::HttpStatus { status, .. })) =
                    (last_request, Lifecycle::of(entry))
                {
                    out.entry(line).or_insert(status);
                    last_request = None;
                }
            }
            Direction::Recv => {}
        }
    }
    out
}

/// Classifies `live` against a recorded refusal with `status`.
pub(super) fn classify(played: &mut Played, status: u16, live: &Message) {
    played.live = Some(live.text().to_owned());
    match live_status(live) {
        Some(now) if now == status => played.class = Class::Same,
        Some(now) => {
            played.class = Class::Changed;
            played.reason = Some(format!("refused with HTTP {now}; recorded: HTTP {status}"));
        }
        None => {
            played.class = Class::GoneError;
            played.reason = Some(format!("answered; recorded: refused with HTTP {status}"));
        }
    }
}

/// The HTTP status of a live refusal, as the player is given it.
fn live_status(live: &Message) -> Option<u16> {
    if live.kind() != Kind::Error {
        return None;
    }
    let error = &live.value()["error"];
    if error["code"].as_i64() != Some(UPSTREAM_ERROR_CODE) {
        return None;
    }
    let words = error["message"].as_str()?.strip_prefix("HTTP ")?;
    words.split(' ').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn played() -> Played {
        Played {
            server: "s".into(),
            conn: "c".into(),
            line: 2,
            method: "server/discover".into(),
            tool: None,
            class: Class::Same,
            reason: None,
            differences: Vec::new(),
            answer_line: None,
            live: None,
        }
    }

    fn refusal(status: u16) -> Message {
        let why = format!("HTTP {status} from `http://127.0.0.1:1/mcp`: Bad Request");
        let line = crate::upstream::http::error_for(
            &Message::new(
                b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\"}".to_vec(),
            ),
            &why,
        );
        Message::new(line.unwrap_or_default())
    }

    #[test]
    fn the_same_status_is_same_another_is_changed_an_answer_is_gone_error() {
        let mut p = played();
        classify(&mut p, 400, &refusal(400));
        assert_eq!(p.class, Class::Same);
        let mut p = played();
        classify(&mut p, 400, &refusal(404));
        assert_eq!(p.class, Class::Changed);
        assert_eq!(
            p.reason.as_deref(),
            Some("refused with HTTP 404; recorded: HTTP 400")
        );
        let mut p = played();
        let ok = Message::new(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}".to_vec());
        classify(&mut p, 400, &ok);
        assert_eq!(p.class, Class::GoneError);
    }
}
