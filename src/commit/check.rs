//! A tape's commitments against the answers it holds (`commitments verify`), or against
//! an answer given (`commitments check`).
//!
//! A `$commit`'s answer is the next server response or error on the same connection with
//! the same id. A commitment is checked when that answer's body is on the tape as the
//! server gave it (`body: kept`): the `result` member's text is canonicalized and hashed
//! again ([`crate::commit::jcs`]). It cannot be checked when the tape's copy was redacted
//! or dropped, when the answer is missing, when an injected fault replaced it (a
//! `$fault` with `replaced` for that id on the connection before the answer: the tap
//! writes it as the fault happens, and the `$commit` just before the answer), or when the
//! result had no commitment to begin with (the `$commit` says why).

use std::collections::{HashMap, HashSet};

use crate::commit::jcs;
use crate::commit::layer::id_key;
use crate::message::Kind;
use crate::tape::commit::{ALG, Body, CommitEntry, Digest};
use crate::tape::lifecycle::Lifecycle;
use crate::tape::{Direction, Tape};

/// One `$commit` of a tape.
#[derive(Debug, Clone)]
pub struct Commitment {
    /// Its tape line.
    pub line: usize,
    /// Its connection's server.
    pub server: String,
    /// What it says.
    pub entry: CommitEntry,
}

/// What became of one commitment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The answer at this tape line hashes to it.
    Ok(usize),
    /// The answer at this tape line does not: why, in words.
    Mismatch(usize, String),
    /// It cannot be checked: why, in words.
    Unchecked(String),
}

impl Verdict {
    /// The verdict's word, as reports show it.
    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Ok(_) => "ok",
            Verdict::Mismatch(..) => "MISMATCH",
            Verdict::Unchecked(_) => "not checkable",
        }
    }
}

/// Every commitment of a tape, with its answer's verdict, in tape order.
pub fn verify(tape: &Tape) -> Vec<(Commitment, Verdict)> {
    let mut found: Vec<(Commitment, Option<Verdict>)> = Vec::new();
    for conn in tape.connections() {
        // This connection's commitments still waiting, by id: their index into `found`,
        // and whether a fault replaced their answer. A newer one for the same id takes
        // the older one's place (whose answer then is not on the tape).
        let mut waiting: HashMap<String, (usize, bool)> = HashMap::new();
        // Ids whose answer a fault replaced, its answer not seen yet.
        let mut replaced: HashSet<String> = HashSet::new();
        for &i in &conn.entries {
            let e = &tape.entries[i];
            match e.meta.dir {
                Direction::Lifecycle => match Lifecycle::of(e) {
                    Some(Lifecycle::Commit(entry)) => {
                        let key = entry.id.as_deref().map(id_key);
                        let body = entry.body;
                        let at = found.len();
                        found.push((
                            Commitment {
                                line: e.line,
                                server: conn.server.clone(),
                                entry,
                            },
                            None,
                        ));
                        let verdict = match (key, body) {
                            (None, _) => unchecked("it names no request id"),
                            (Some(_), Body::Replaced) => unchecked(REPLACED),
                            (Some(_), Body::Missing) => unchecked(MISSING),
                            (Some(key), _) => {
                                let faulted = replaced.contains(&key);
                                waiting.insert(key, (at, faulted));
                                continue;
                            }
                        };
                        found[at].1 = Some(verdict);
                    }
                    Some(Lifecycle::Fault(fault)) if fault.replaced.is_some() => {
                        let Some(key) = fault.id.as_deref().map(id_key) else {
                            continue;
                        };
                        if let Some(w) = waiting.get_mut(&key) {
                            w.1 = true;
                        }
                        replaced.insert(key);
                    }
                    _ => {}
                },
                Direction::Recv if matches!(e.message.kind(), Kind::Response | Kind::Error) => {
                    let Some(key) = e.message.id().map(id_key) else {
                        continue;
                    };
                    replaced.remove(&key);
                    let Some((at, faulted)) = waiting.remove(&key) else {
                        continue;
                    };
                    let verdict = if faulted {
                        unchecked(REPLACED)
                    } else {
                        judge(&found[at].0.entry, e.line, e.message.text())
                    };
                    found[at].1 = Some(verdict);
                }
                _ => {}
            }
        }
    }
    let mut all: Vec<(Commitment, Verdict)> = found
        .into_iter()
        .map(|(c, v)| (c, v.unwrap_or_else(|| unchecked(MISSING))))
        .collect();
    all.sort_by_key(|(c, _)| c.line);
    all
}

/// Why a commitment whose answer a fault replaced or withheld cannot be checked.
const REPLACED: &str = "an injected fault replaced or withheld the answer (see its `$fault`)";
/// Why a commitment whose answer is not on the tape cannot be checked.
const MISSING: &str = "its answer is not on the tape";

fn unchecked(why: &str) -> Verdict {
    Verdict::Unchecked(why.to_owned())
}

/// The verdict on one commitment, given its answer (the message's text, at `line`).
fn judge(entry: &CommitEntry, line: usize, answer: &str) -> Verdict {
    if entry.alg != ALG {
        return Verdict::Unchecked(format!(
            "its algorithm `{}` is not {ALG}",
            crate::term::line(&entry.alg)
        ));
    }
    let want = match &entry.digest {
        Digest::Sha256(hex) => hex,
        Digest::None(reason) => {
            return Verdict::Unchecked(format!(
                "the result had no commitment: {}",
                crate::term::line(reason)
            ));
        }
    };
    let Some(result) = crate::message::raw_member(answer, &["result"]) else {
        return Verdict::Mismatch(line, "the answer is an error, not a result".into());
    };
    match entry.body {
        Body::Redacted => {
            Verdict::Unchecked("the tape's copy of the answer was redacted (secrets)".into())
        }
        Body::Dropped => {
            let marker = serde_json::from_str(result)
                .ok()
                .and_then(|v: serde_json::Value| {
                    crate::commit::body::marker(&v).map(|m| m["sha256"].clone())
                });
            match marker {
                Some(serde_json::Value::String(named)) if !named.eq_ignore_ascii_case(want) => {
                    Verdict::Mismatch(
                        line,
                        format!(
                            "the dropped result names the commitment {}",
                            crate::term::line(&named)
                        ),
                    )
                }
                _ => unchecked("the answer's body was dropped (--redact-results)"),
            }
        }
        Body::Replaced => unchecked(REPLACED),
        Body::Missing => unchecked(MISSING),
        Body::Kept => match jcs::commitment(result) {
            Ok(got) if got.eq_ignore_ascii_case(want) => Verdict::Ok(line),
            Ok(got) => Verdict::Mismatch(line, format!("the answer hashes to {got}")),
            Err(refusal) => {
                Verdict::Mismatch(line, format!("the answer has no commitment: {refusal}"))
            }
        },
    }
}

/// Every commitment of a tape, in tape order.
pub fn commitments(tape: &Tape) -> Vec<Commitment> {
    let mut all = Vec::new();
    for conn in tape.connections() {
        for &i in &conn.entries {
            let e = &tape.entries[i];
            if let Some(Lifecycle::Commit(entry)) = Lifecycle::of(e) {
                all.push(Commitment {
                    line: e.line,
                    server: conn.server.clone(),
                    entry,
                });
            }
        }
    }
    all.sort_by_key(|c| c.line);
    all
}

/// The commitments among `all` whose hash is `sha256`.
pub fn matching<'a>(all: &'a [Commitment], sha256: &str) -> Vec<&'a Commitment> {
    all.iter()
        .filter(|c| {
            c.entry.alg == ALG
                && c.entry
                    .digest
                    .sha256()
                    .is_some_and(|hex| hex.eq_ignore_ascii_case(sha256))
        })
        .collect()
}

/// The `result` text of an answer given for `commitments check`: a JSON-RPC response's
/// `result`, or the whole text when it is a result itself; an error response has none.
pub fn result_of(text: &str) -> Result<&str, &'static str> {
    let Ok(members) = crate::message::members(text) else {
        return Ok(text);
    };
    let has = |name: &str| members.iter().any(|(k, _)| k == name);
    if !(has("jsonrpc") || has("id")) {
        return Ok(text);
    }
    match members.iter().rev().find(|(k, _)| k == "result") {
        Some((_, raw)) => Ok(raw.get()),
        None if has("error") => Err("it is a JSON-RPC error response: there is no result"),
        None => Ok(text),
    }
}

#[cfg(test)]
mod tests;
