//! The tap's side of the commitments: a `$commit` event ([`crate::commit::layer`]) is held
//! by the tape writer until its answer comes, then written just before it, with the
//! `body` the writer alone can tell:
//!
//! - `kept`: the answer's `result` is on the tape byte for byte as the server gave it;
//! - `redacted`: secret redaction ([`crate::redact`]) changed the `result`, so the tape's
//!   copy no longer hashes to the commitment;
//! - `dropped` (`--redact-results`, asked for by the layer): the `result` is written
//!   without its body ([`crate::commit::body::dropped`]), and a `$fault` that kept the
//!   server's original answer (`replaced`) keeps it without its body too.
//!
//! A commitment whose answer never comes (a dropped or timed-out answer, a hang-up) is
//! written before the connection's close, or at the end of the recording.

use std::time::SystemTime;

use serde_json::Value;

use crate::commit::body;
use crate::commit::layer::id_key;
use crate::message::{Kind, Message};
use crate::tape::commit::{Body, CommitEntry};

/// A `$commit` waiting for its answer.
pub(super) struct Waiting {
    /// The answer's id, made comparable.
    key: String,
    /// When the layer told it.
    pub(super) ts: SystemTime,
    /// What it says (the body as the layer asked).
    pub(super) entry: CommitEntry,
}

/// The `$commit` events waiting for their answers.
#[derive(Default)]
pub(super) struct Held {
    waiting: Vec<Waiting>,
}

impl Held {
    /// Holds a `$commit` event's params until its answer; gives them back when they are
    /// not a commitment to hold (no id, or another shape: written as they are).
    pub(super) fn hold(&mut self, ts: SystemTime, params: Value) -> Result<(), Value> {
        match CommitEntry::read(&params) {
            Some(entry) => match entry.id.as_deref().map(id_key) {
                Some(key) => {
                    self.waiting.push(Waiting { key, ts, entry });
                    Ok(())
                }
                None => Err(params),
            },
            None => Err(params),
        }
    }

    /// True when nothing waits.
    pub(super) fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    /// The commitment a server message answers, when one waits for it.
    pub(super) fn answered_by(&mut self, text: &[u8]) -> Option<Waiting> {
        if self.waiting.is_empty() {
            return None;
        }
        let msg = Message::new(bytes::Bytes::copy_from_slice(text));
        if !matches!(msg.kind(), Kind::Response | Kind::Error) {
            return None;
        }
        let key = id_key(msg.id()?);
        let at = self.waiting.iter().position(|w| w.key == key)?;
        Some(self.waiting.remove(at))
    }

    /// A `$fault`'s params with the body of the answer it replaced dropped, when that
    /// answer's commitment drops its body.
    pub(super) fn fault(&self, params: &Value) -> Option<Value> {
        let id = params.get("id")?;
        let key = id_key(&id.to_string());
        let waiting = self
            .waiting
            .iter()
            .find(|w| w.key == key && w.entry.body == Body::Dropped)?;
        let result = params.get("replaced")?.get("result")?;
        let kept = body::dropped(&result.to_string(), &waiting.entry);
        let mut params = params.clone();
        params["replaced"]["result"] = serde_json::from_str(&kept).ok()?;
        Some(params)
    }

    /// Every commitment still waiting, in the order they were told.
    pub(super) fn drain(&mut self) -> Vec<Waiting> {
        std::mem::take(&mut self.waiting)
    }
}

/// The answer's text as the tape keeps it, before redaction: without its result's body
/// when the commitment drops it.
pub(super) fn answer_text<'a>(waiting: &Waiting, text: &'a str) -> std::borrow::Cow<'a, str> {
    if waiting.entry.body != Body::Dropped {
        return text.into();
    }
    let Some(result) = crate::message::raw_member(text, &["result"]) else {
        // An error (a fault's): no body to drop.
        return text.into();
    };
    let kept = body::dropped(result, &waiting.entry);
    crate::message::replace_member(text, &["result"], &kept)
        .map(Into::into)
        .unwrap_or_else(|| text.into())
}

/// The body the `$commit` says, once the answer `sent` (as the layer saw it) was redacted
/// to `written`.
pub(super) fn body(waiting: &Waiting, sent: &str, written: &str) -> Body {
    match waiting.entry.body {
        Body::Kept
            if crate::message::raw_member(sent, &["result"])
                != crate::message::raw_member(written, &["result"]) =>
        {
            Body::Redacted
        }
        body => body,
    }
}
