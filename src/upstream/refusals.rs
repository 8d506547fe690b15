//! A JSON-RPC client's view of a refusal: an upstream's [`Incoming::Refused`] of a
//! request becomes the JSON-RPC error the client is given ([`error_for`]) before the
//! layers see it, so the tap records what the client got and a replay gives the same
//! answer. A refused notification or answer has nobody to tell. Every downstream that
//! speaks JSON-RPC lines (the stdio pump, the built-in client, verify's player) drives its
//! remote through this; the HTTP front answers a refusal with the upstream's status.

use bytes::Bytes;

use crate::error::{LinkError, Result};
use crate::message::Message;
use crate::tape::close::CloseReason;
use crate::upstream::http::error_for;
use crate::upstream::{Closed, Event, Incoming, Link};

/// `L` with its refusals of requests turned into JSON-RPC errors.
pub struct Refusals<L>(pub L);

impl<L: Link> Link for Refusals<L> {
    fn started(&self) -> Option<Event> {
        self.0.started()
    }

    async fn send(&mut self, msg: Message) -> Result<(), LinkError> {
        self.0.send(msg).await
    }

    async fn next(&mut self) -> Option<Incoming> {
        loop {
            match self.0.next().await? {
                Incoming::Refused { request, error } => {
                    if let Some(line) = error_for(&request, &error.to_string()) {
                        return Some(Incoming::Message(Message::new(line)));
                    }
                }
                other => return Some(other),
            }
        }
    }

    async fn oversize(&mut self, len: usize, prefix: Bytes) {
        self.0.oversize(len, prefix).await;
    }

    async fn end_input(&mut self) {
        self.0.end_input().await;
    }

    async fn cancel(&mut self, id: &str) {
        self.0.cancel(id).await;
    }

    async fn interrupt(&mut self, reason: &CloseReason) -> bool {
        self.0.interrupt(reason).await
    }

    async fn close(self, reason: CloseReason) -> Result<Closed> {
        self.0.close(reason).await
    }
}
