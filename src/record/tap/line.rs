//! One line the tap saw, turned into its tape entries: a message as it is (with the
//! commitments it settles, for a server answer), each element of a batch as an entry of
//! its own marked with the batch's number, and anything else as `$transport/invalid`.

use std::time::SystemTime;

use serde_json::value::RawValue;

use super::{Entries, State};
use crate::framing;
use crate::message::{Shape, shape};
use crate::record::results;
use crate::tape::format::{Direction, Meta};
use crate::tape::lifecycle::{Invalid, Lifecycle};
use crate::tape::stream::Stream;

/// The entries of the line `bytes` (its newline included) sent in `dir` at `ts`.
pub(super) fn entries(
    entries: &Entries,
    state: &mut State,
    dir: Direction,
    ts: SystemTime,
    bytes: &[u8],
    stream: Option<Stream>,
) -> Vec<Vec<u8>> {
    let text = framing::content(bytes);
    if text.trim_ascii().is_empty() {
        return Vec::new();
    }
    let meta = |batch| Meta {
        stream,
        ..entries.meta(dir, ts, batch)
    };
    match shape(text) {
        Shape::Object => message(entries, state, dir, text, &meta(None)),
        Shape::Array => {
            let elements: Vec<&RawValue> = std::str::from_utf8(text)
                .ok()
                .and_then(|t| serde_json::from_str(t).ok())
                .unwrap_or_default();
            if elements.is_empty() {
                return vec![invalid(entries, state, dir, ts, text)];
            }
            state.batches += 1;
            let batch = meta(Some(state.batches));
            let mut lines = Vec::new();
            for el in elements {
                let el = el.get().as_bytes();
                match shape(el) {
                    Shape::Object => lines.extend(message(entries, state, dir, el, &batch)),
                    _ => lines.push(invalid(entries, state, dir, ts, el)),
                }
            }
            lines
        }
        Shape::Invalid => vec![invalid(entries, state, dir, ts, text)],
    }
}

/// One message (a whole line, or an element of a batch): a server's answer settles the
/// commitment held for its request; a client's request may supersede one (a reused id).
fn message(
    entries: &Entries,
    state: &mut State,
    dir: Direction,
    text: &[u8],
    meta: &Meta,
) -> Vec<Vec<u8>> {
    let in_batch = meta.batch.is_some();
    if dir == Direction::Recv {
        return entries.answer(text, meta, state, in_batch);
    }
    let mut lines = entries.commits(state.sent(text).into_iter().collect());
    lines.push(entries.line(text, meta));
    lines
}

/// `$transport/invalid` for a line (or batch element) that is not a JSON-RPC message; its
/// text left out when result bodies are ([`results::without_text`]).
fn invalid(
    entries: &Entries,
    state: &State,
    dir: Direction,
    ts: SystemTime,
    text: &[u8],
) -> Vec<u8> {
    let (kind, params) = Lifecycle::Invalid(Invalid {
        dir: Some(dir),
        text: String::from_utf8_lossy(text).into_owned(),
    })
    .event();
    let params = match state.drop_results {
        true => results::without_text(params, "text"),
        false => params,
    };
    entries.lifecycle(&kind, &params, ts)
}
