//! Which stream a replayed server message goes back on, for a front with more than one
//! (the HTTP front's GET stream; the stdio fronts have one and ignore it).
//!
//! A server message recorded with `_meta.stream` goes back on that stream. One recorded
//! without it — through the stdio front, by an older mcptape or by mcporter — goes on
//! the GET stream when it is a request or a notification that the recorded server sent
//! while no client request was waiting for its answer: tied to no request (a
//! `roots/list` after `initialized`, a log line), it had no request's stream to come on
//! over HTTP. Everything else goes back on its request's stream. This only marks; the
//! order in which the engine releases steps is not touched.

use std::collections::HashSet;

use crate::message::Kind;
use crate::tape::Direction;
use crate::tape::stream::Stream;

use super::steps::Step;

/// Marks the server requests and notifications tied to no request for the GET stream.
pub(super) fn mark(steps: &mut [Step]) {
    let mut waiting: HashSet<String> = HashSet::new();
    for step in steps.iter_mut() {
        let msg = &step.message;
        match (step.dir, msg.kind()) {
            (Direction::Send, Kind::Request) => {
                if let Some(id) = msg.id() {
                    waiting.insert(id.to_owned());
                }
            }
            (Direction::Recv, Kind::Response | Kind::Error) => {
                if let Some(id) = msg.id() {
                    waiting.remove(id);
                }
            }
            (Direction::Recv, Kind::Request | Kind::Notification)
                if step.stream.is_none() && waiting.is_empty() =>
            {
                step.stream = Some(Stream::Get);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Message;

    fn step(dir: Direction, text: &str, stream: Option<Stream>) -> Step {
        Step {
            line: 0,
            dir,
            message: Message::new(text.to_owned()),
            ts: None,
            done: false,
            optional: false,
            normalized: std::sync::OnceLock::new(),
            stream,
            synthesized: false,
        }
    }

    #[test]
    fn only_what_no_request_waited_for_goes_to_the_get_stream() {
        let mut steps = vec![
            step(Direction::Send, r#"{"id":1,"method":"initialize"}"#, None),
            step(Direction::Recv, r#"{"id":1,"result":{}}"#, None),
            step(
                Direction::Send,
                r#"{"method":"notifications/initialized"}"#,
                None,
            ),
            step(Direction::Recv, r#"{"id":0,"method":"roots/list"}"#, None),
            step(Direction::Send, r#"{"id":0,"result":{"roots":[]}}"#, None),
            step(Direction::Send, r#"{"id":2,"method":"tools/call"}"#, None),
            step(
                Direction::Recv,
                r#"{"method":"notifications/message"}"#,
                None,
            ),
            step(
                Direction::Recv,
                r#"{"method":"notifications/message"}"#,
                Some(Stream::Get),
            ),
            step(Direction::Recv, r#"{"id":2,"result":{}}"#, None),
            step(
                Direction::Recv,
                r#"{"method":"notifications/message"}"#,
                None,
            ),
        ];
        mark(&mut steps);
        let marked: Vec<Option<Stream>> = steps.iter().map(|s| s.stream).collect();
        let get = Some(Stream::Get);
        assert_eq!(
            marked,
            [None, None, None, get, None, None, None, get, None, get]
        );
    }
}
