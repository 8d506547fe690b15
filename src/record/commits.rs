//! The tap's side of the commitments: a `$commit` event ([`crate::commit::layer`]) is held
//! by the tape writer until its answer comes, then written just before it, with the
//! `body` the writer alone can tell:
//!
//! - `kept`: the answer's `result` is on the tape byte for byte as the server gave it;
//! - `redacted`: secret redaction ([`crate::redact`]) changed the `result`, so the tape's
//!   copy no longer hashes to the commitment — and the `$commit` keeps no `sha256`: a
//!   hash of an answer that held a secret would let the secret be guessed (hash each
//!   guess in place of the redaction mark until one matches). The entry's `reason` says
//!   so. The secret is looked for in the result as the server sent it (the layer hands
//!   it over, [`crate::commit::layer::RESULT_PARAM`]), so this holds too for an answer
//!   the tape never gets (a fault withheld it) or drops (`--redact-results`);
//! - `dropped` (`--redact-results`, asked for by the layer): the `result` is written
//!   without its body ([`crate::commit::body::dropped`]);
//! - `replaced`: an injected fault replaced the answer or withheld it: the `$commit` is
//!   written just before that `$fault` (or at once, when the fault — a `timeout` — was
//!   told before the answer came);
//! - `missing`: the answer never reached the tape — the client cancelled the call, a
//!   newer request took its id, or the connection ended first.
//!
//! Held commitments are found by id (a map, so a long session stays linear), and each is
//! written once: when its answer comes, when a fault replaces or withholds that answer,
//! when a cancel withdraws its request or a new request reuses its id (then it is
//! `missing`, and never paired with the newer request's answer), or at the close.

use std::collections::{HashMap, HashSet};
use std::time::SystemTime;

use serde_json::Value;

use crate::commit::body;
use crate::commit::layer::id_key;
use crate::message::{Kind, Message};
use crate::tape::commit::{Body, CommitEntry, Digest};

/// The `reason` of a `$commit` whose answer held a secret.
pub const SECRET_REASON: &str = "the answer held a secret, which the tape redacts: a hash of it would let the secret be guessed";

/// A `$commit` waiting for its answer.
pub(super) struct Waiting {
    /// When the layer told it.
    pub(super) ts: SystemTime,
    /// What it says (the body as the layer asked).
    pub(super) entry: CommitEntry,
    /// Its place among those told, for writing the unanswered ones in order.
    seq: u64,
}

impl Waiting {
    /// Its entry with `body`, as it is to be written now.
    fn with(self, body: Body) -> (SystemTime, CommitEntry) {
        (self.ts, CommitEntry { body, ..self.entry })
    }
}

/// The `$commit` events waiting for their answers.
#[derive(Default)]
pub(super) struct Held {
    /// By id, made comparable.
    waiting: HashMap<String, Waiting>,
    /// Ids whose answer a fault withholds (`timeout`, told when the request passed): their
    /// `$commit` is written at once, `replaced`.
    withheld: HashSet<String>,
    told: u64,
}

/// A `$commit` to write now.
pub(super) type Written = (SystemTime, CommitEntry);

impl Held {
    /// Holds a `$commit` event's entry until its answer. `secret`: its result held a secret
    /// (the `sha256` goes). Gives back what is to be written now: a commitment still
    /// waiting for the same id (`missing`), and this one when a fault withholds its answer
    /// (`replaced`). `Err`: the params are not a commitment to hold (no id, or another
    /// shape), to be written as they are.
    pub(super) fn hold(
        &mut self,
        ts: SystemTime,
        params: Value,
        secret: bool,
    ) -> Result<Vec<Written>, Value> {
        let Some(mut entry) = CommitEntry::read(&params) else {
            return Err(params);
        };
        let Some(key) = entry.id.as_deref().map(id_key) else {
            return Err(params);
        };
        if secret {
            entry.digest = Digest::None(SECRET_REASON.to_owned());
            if entry.body == Body::Kept {
                entry.body = Body::Redacted;
            }
        }
        let mut now = Vec::new();
        if let Some(stale) = self.waiting.remove(&key) {
            now.push(stale.with(Body::Missing));
        }
        if self.withheld.remove(&key) {
            now.push((
                ts,
                CommitEntry {
                    body: Body::Replaced,
                    ..entry
                },
            ));
            return Ok(now);
        }
        self.told += 1;
        let seq = self.told;
        self.waiting.insert(key, Waiting { ts, entry, seq });
        Ok(now)
    }

    /// True when nothing waits.
    pub(super) fn is_empty(&self) -> bool {
        self.waiting.is_empty() && self.withheld.is_empty()
    }

    /// The commitment a server message answers, when one waits for it.
    pub(super) fn answered_by(&mut self, msg: &Message) -> Option<Waiting> {
        if self.waiting.is_empty() || !matches!(msg.kind(), Kind::Response | Kind::Error) {
            return None;
        }
        self.waiting.remove(&id_key(msg.id()?))
    }

    /// A `$fault`'s effect on the commitments: the one waiting for the answer it replaced
    /// or withheld, to write now (`replaced`), before the `$fault`; a `timeout` told before
    /// its answer came is remembered, so that the commitment is written when told.
    pub(super) fn fault(&mut self, params: &Value) -> Option<Written> {
        let key = id_key(&params.get("id")?.to_string());
        let timeout = params["effect"].as_str() == Some("timeout");
        if params.get("replaced").is_none() && !timeout {
            return None;
        }
        match self.waiting.remove(&key) {
            Some(w) => Some(w.with(Body::Replaced)),
            None => {
                if timeout {
                    self.withheld.insert(key);
                }
                None
            }
        }
    }

    /// A client message naming request `key` — a new request with that id, or a cancel of
    /// it: a commitment still waiting for it will never get its answer (`missing`).
    pub(super) fn superseded(&mut self, key: &str) -> Option<Written> {
        self.withheld.remove(key);
        self.waiting
            .remove(key)
            .map(|stale| stale.with(Body::Missing))
    }

    /// Every commitment still waiting, in the order they were told (`missing`).
    pub(super) fn drain(&mut self) -> Vec<Written> {
        self.withheld.clear();
        let mut all: Vec<Waiting> = self.waiting.drain().map(|(_, w)| w).collect();
        all.sort_by_key(|w| w.seq);
        all.into_iter().map(|w| w.with(Body::Missing)).collect()
    }
}

/// The answer's text as the tape keeps it, before redaction: without its result's body
/// when the commitment drops it. An answer whose `result` cannot be replaced in place
/// (its members cannot be read) is written as a bare answer to the same id: nothing of
/// the server's body is kept.
pub(super) fn answer_text<'a>(entry: &CommitEntry, text: &'a str) -> std::borrow::Cow<'a, str> {
    if entry.body != Body::Dropped {
        return text.into();
    }
    let Some(result) = crate::message::raw_member(text, &["result"]) else {
        // An error (a fault's): no body to drop.
        return text.into();
    };
    let kept = body::dropped(result, entry);
    match crate::message::replace_member(text, &["result"], &kept) {
        Some(text) => text.into(),
        None => crate::record::results::bare(text, &kept).into(),
    }
}

/// The body the `$commit` says, once the answer `sent` (as the layer saw it) was redacted
/// to `written`.
pub(super) fn body(entry: &CommitEntry, sent: &str, written: &str) -> Body {
    match entry.body {
        Body::Kept
            if crate::message::raw_member(sent, &["result"])
                != crate::message::raw_member(written, &["result"]) =>
        {
            Body::Redacted
        }
        body => body,
    }
}
