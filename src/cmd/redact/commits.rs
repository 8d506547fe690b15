//! `mcptape redact` on a tape with commitments: when it changes a committed answer's
//! `result` (a secret the recording missed), that answer's `$commit` would still say
//! `kept` with the hash of the secret-bearing answer — `commitments verify` would report a
//! false MISMATCH, and the hash would let the secret be guessed. So the `$commit` is
//! rewritten as the recording writes one for an answer that held a secret
//! ([`crate::record::commits`]): `body: redacted`, no `sha256`, the `reason` saying why.
//!
//! A `$commit` comes before its answer (the next server response or error with its id on
//! its connection); the rewrite keeps where each one's line is in the new tape, and
//! replaces those lines once the whole tape is read. `--check` is not concerned: it only
//! reports.

use std::collections::HashMap;

use crate::commit::layer::id_key;
use crate::message::{Kind, Message};
use crate::record::commits::SECRET_REASON;
use crate::tape::Direction;
use crate::tape::commit::{Body, CommitEntry, Digest};
use crate::tape::format::Meta;

/// What an entry was, for the caller.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Seen {
    /// A `$commit` waiting for its answer: tell [`Pending::written`] where its line ends.
    Commit,
    /// Anything else.
    Other,
}

/// A commitment's place: server, connection, id made comparable.
type Key = (String, Option<String>, String);

/// A `$commit` line in the new tape.
struct Written {
    start: usize,
    end: usize,
    entry: CommitEntry,
}

/// The `$commit` entries waiting for their answers, and those to rewrite.
#[derive(Default)]
pub(super) struct Pending {
    waiting: HashMap<Key, Written>,
    /// The `$commit` just seen, until its line is written.
    last: Option<(Key, usize, CommitEntry)>,
    /// The lines to rewrite.
    fixes: Vec<Written>,
}

impl Pending {
    /// An entry (its message before and after redaction) about to be written at `start`.
    pub(super) fn entry(
        &mut self,
        meta: &Meta,
        message: &str,
        redacted: &str,
        start: usize,
    ) -> Seen {
        let key = |id: &str| (meta.server.clone(), meta.conn.clone(), id_key(id));
        match meta.dir {
            Direction::Lifecycle => {
                let Ok(value) = serde_json::from_str::<serde_json::Value>(message) else {
                    return Seen::Other;
                };
                if value["method"] != "$commit" {
                    return Seen::Other;
                }
                let Some(entry) = CommitEntry::read(&value["params"]) else {
                    return Seen::Other;
                };
                let Some(id) = entry.id.clone() else {
                    return Seen::Other;
                };
                self.last = Some((key(&id), start, entry));
                Seen::Commit
            }
            Direction::Recv => {
                if self.waiting.is_empty() {
                    return Seen::Other;
                }
                let msg = Message::new(message.to_owned());
                if !matches!(msg.kind(), Kind::Response | Kind::Error) {
                    return Seen::Other;
                }
                let Some(id) = msg.id() else {
                    return Seen::Other;
                };
                let Some(written) = self.waiting.remove(&key(id)) else {
                    return Seen::Other;
                };
                let result =
                    |text: &str| crate::message::raw_member(text, &["result"]).map(str::to_owned);
                if written.entry.body == Body::Kept && result(message) != result(redacted) {
                    self.fixes.push(written);
                }
                Seen::Other
            }
            Direction::Send => Seen::Other,
        }
    }

    /// The `$commit` just seen was written unchanged, ending at `end`.
    pub(super) fn written(&mut self, end: usize) {
        if let Some((key, start, entry)) = self.last.take() {
            self.waiting.insert(key, Written { start, end, entry });
        }
    }

    /// Rewrites the `$commit` lines whose answers the redaction changed; how many.
    pub(super) fn apply(&mut self, out: &mut Vec<u8>) -> usize {
        let mut fixes = std::mem::take(&mut self.fixes);
        fixes.sort_by_key(|w| std::cmp::Reverse(w.start));
        let mut n = 0;
        for w in fixes {
            let Ok(line) = std::str::from_utf8(&out[w.start..w.end]) else {
                continue;
            };
            let body = line.trim_end_matches(['\r', '\n']);
            let ending = line[body.len()..].to_owned();
            let Some(meta) = crate::message::raw_member(body, &["_meta"]) else {
                continue;
            };
            let entry = CommitEntry {
                digest: Digest::None(SECRET_REASON.to_owned()),
                body: Body::Redacted,
                ..w.entry
            };
            let new = format!(
                r#"{{"jsonrpc":"2.0","method":"$commit","params":{},"_meta":{meta}}}{ending}"#,
                entry.params()
            );
            out.splice(w.start..w.end, new.into_bytes());
            n += 1;
        }
        n
    }
}
