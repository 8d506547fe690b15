//! The calls both tapes made: a client request of the old tape and one of the new tape
//! with the same method and params, normalized as replay matches them (`id`, `jsonrpc`
//! and `params._meta` dropped; [`crate::matcher::Matcher::normalize`]), are one call;
//! their answers are compared as verify compares a recorded answer with a live one
//! ([`crate::verify::compare::compare`]: same, changed with JSON paths, new-error,
//! gone-error; `result._meta` left out).
//!
//! Each old request pairs with the first unpaired new one that matches, in tape order.
//! The handshake and the list requests are not calls here (the lists are compared item
//! by item), nor is `ping`; requests without an answer on either side are skipped.
//! What pairs with nothing is counted, never a failure.

use std::collections::HashMap;

use serde::Serialize;

use crate::exchange::{Exchange, Exchanges};
use crate::matcher::{self, Difference, Matcher};
use crate::tape::{Direction, Tape};
use crate::verify::Class;

/// Requests that are not compared as calls.
const NOT_CALLS: &[&str] = &[
    "initialize",
    "server/discover",
    "ping",
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
];

/// One call both tapes made.
#[derive(Debug, Clone, Serialize)]
pub struct Call {
    /// Its method.
    pub method: String,
    /// For `tools/call`, the tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Same, changed, new-error or gone-error.
    pub class: Class,
    /// The old tape's line of the request.
    pub old_line: usize,
    /// The new tape's line of the request.
    pub new_line: usize,
    /// Where the answers differ.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub differences: Vec<Difference>,
}

impl Call {
    /// `tools/call lookup`, for reports.
    pub fn title(&self) -> String {
        match &self.tool {
            Some(t) => format!("{} {t}", self.method),
            None => self.method.clone(),
        }
    }
}

/// The calls compared, and how many of each side paired with nothing.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Calls {
    /// In the old tape's order.
    pub calls: Vec<Call>,
    /// Old requests the new tape did not make.
    pub unmatched_old: usize,
    /// New requests the old tape did not make.
    pub unmatched_new: usize,
}

impl Calls {
    /// How many calls' answers differ.
    pub fn changed(&self) -> usize {
        self.calls
            .iter()
            .filter(|c| c.class.is_difference())
            .count()
    }
}

/// The answered client requests of `server` that are calls.
fn requests<'t>(tape: &'t Tape, exchanges: &'t Exchanges, server: &str) -> Vec<&'t Exchange> {
    exchanges
        .exchanges
        .iter()
        .filter(|e| {
            e.from == Direction::Send
                && e.answer.is_some()
                && exchanges.connections[e.conn].server == server
                && !NOT_CALLS.contains(&e.method.as_str())
                && tape.entries[e.request].message.kind() == crate::message::Kind::Request
        })
        .collect()
}

/// Compares the calls of `old_server` in `old` with those of `new_server` in `new`.
pub fn compare(old: &Tape, old_server: &str, new: &Tape, new_server: &str) -> Calls {
    let (xa, xb) = (Exchanges::of(old), Exchanges::of(new));
    let (ra, rb) = (
        requests(old, &xa, old_server),
        requests(new, &xb, new_server),
    );
    let matcher = Matcher::default();
    let norm = |tape: &Tape, e: &Exchange| matcher.normalize(&tape.entries[e.request].message);
    let nb: Vec<_> = rb.iter().map(|e| norm(new, e)).collect();
    // The new requests by method and tool, each bucket in tape order: a request is only
    // compared with those that can match it.
    let mut buckets: HashMap<(&str, Option<&str>), Vec<usize>> = HashMap::new();
    for (j, e) in rb.iter().enumerate() {
        buckets
            .entry((&e.method, e.tool.as_deref()))
            .or_default()
            .push(j);
    }
    let mut used = vec![false; rb.len()];
    let mut out = Calls::default();
    for a in &ra {
        let na = norm(old, a);
        let bucket = buckets.get(&(a.method.as_str(), a.tool.as_deref()));
        let found = bucket
            .into_iter()
            .flatten()
            .copied()
            .find(|&j| !used[j] && matcher::equal(&na, &nb[j]));
        let Some(j) = found else {
            out.unmatched_old += 1;
            continue;
        };
        used[j] = true;
        let b = rb[j];
        let answer = |tape: &Tape, e: &Exchange| {
            let msg = &tape.entries[e.answer.unwrap_or(e.request)].message;
            matcher::without_result_meta(matcher::comparable(msg), false)
        };
        let (class, differences) =
            crate::verify::compare::compare(&answer(old, a), &answer(new, b), &[], &mut []);
        out.calls.push(Call {
            method: a.method.clone(),
            tool: a.tool.clone(),
            class,
            old_line: old.entries[a.request].line,
            new_line: new.entries[b.request].line,
            differences,
        });
    }
    out.unmatched_new = used.iter().filter(|u| !**u).count();
    out
}
