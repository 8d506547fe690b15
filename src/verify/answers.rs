//! The client answers a tape recorded to the server's own requests (sampling,
//! elicitation, roots, ping), by method and in order, given again when the live server
//! asks the same.

use std::collections::HashMap;

use crate::message::{self, Kind, Message};
use crate::tape::{Direction, Entry};

/// The recorded client answers to server requests, by method, in order.
pub(super) struct Answers {
    by_method: HashMap<String, Vec<Message>>,
}

impl Answers {
    pub(super) fn new(entries: &[&Entry]) -> Answers {
        let mut by_method: HashMap<String, Vec<Message>> = HashMap::new();
        for (i, e) in entries.iter().enumerate() {
            if e.meta.dir != Direction::Recv || e.message.kind() != Kind::Request {
                continue;
            }
            let (Some(method), Some(id)) = (e.message.method(), e.message.id()) else {
                continue;
            };
            let answer = entries[i + 1..].iter().find(|a| {
                a.meta.dir == Direction::Send
                    && matches!(a.message.kind(), Kind::Response | Kind::Error)
                    && a.message.id() == Some(id)
            });
            if let Some(a) = answer {
                by_method
                    .entry(method.to_owned())
                    .or_default()
                    .push(a.message.clone());
            }
        }
        for list in by_method.values_mut() {
            list.reverse();
        }
        Answers { by_method }
    }

    /// The next recorded answer to a request of this method, with the live id.
    pub(super) fn take(&mut self, method: &str, live_id: &str) -> Option<String> {
        let answer = self.by_method.get_mut(method)?.pop()?;
        message::replace_member(answer.text(), &["id"], live_id)
    }
}

#[cfg(test)]
mod tests;
