//! Multi-round-trip requests (MRTR, 2026-07-28) in verify.
//!
//! A server that needs input answers a request with `resultType: "input_required"`: its
//! `inputRequests`, and an opaque `requestState` the client echoes in its retry (a new
//! request, new id, with `inputResponses`). The state is the server's own: sealed, it
//! differs on every run, and a live server refuses the one the tape recorded. So verify
//!
//! - sends a recorded retry with the live server's `requestState` in place of the
//!   recorded one (the tape's state → the state this run's server gave for it);
//! - compares an `input_required` round with `result.requestState` left out of both
//!   sides (it is opaque);
//! - reports the chain — the first round, its retries, the final answer — as one call:
//!   the rounds are held until the retry that ends them, then reported as one outcome at
//!   the first round's line, `same` only when every round is, its differences all of
//!   theirs. A chain the tape never ends is reported at the end of the run
//!   ([`Chains::unfinished`]).
//!
//! The chains are the run's, across its connections: the HTTP front records each
//! stateless exchange as its own connection, so a retry is often in another one.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::era::{self, ResultType};
use crate::message::{self, Message};
use crate::verify::compare::{Class, Played};

/// The run's MRTR chains: the live `requestState` of each recorded one, and the rounds
/// held until their chain ends. Cloning shares them.
#[derive(Debug, Clone, Default)]
pub struct Chains(Arc<Mutex<Inner>>);

#[derive(Debug, Default)]
struct Inner {
    /// Recorded `requestState` (raw JSON) → the live server's, for the same round.
    live: HashMap<String, String>,
    /// The held report of a chain, by the recorded `requestState` its next retry echoes.
    held: HashMap<String, Played>,
}

impl Chains {
    /// What to send for the recorded request `msg`: a retry gets the live
    /// `requestState` of the round it answers, when this run has one.
    pub fn to_send(&self, msg: &Message) -> Message {
        let Some(recorded) = retry_state(msg) else {
            return msg.clone();
        };
        let live = self
            .0
            .lock()
            .ok()
            .and_then(|c| c.live.get(recorded).cloned());
        live.and_then(|l| era::with_request_state(msg, &l))
            .unwrap_or_else(|| msg.clone())
    }

    /// One round played (`request`, its recorded and live answers): the report to give
    /// now, or `None` while its chain goes on.
    pub fn round(
        &self,
        mut played: Played,
        request: &Message,
        recorded: Option<&Message>,
        live: Option<&Message>,
    ) -> Option<Played> {
        let Ok(mut chains) = self.0.lock() else {
            return Some(played);
        };
        if let Some(earlier) = retry_state(request).and_then(|s| chains.held.remove(s)) {
            played = joined(earlier, played);
        }
        let Some(state) = recorded.and_then(era::request_state) else {
            return Some(played);
        };
        if let Some(l) = live.and_then(era::request_state) {
            chains.live.insert(state.to_owned(), l.to_owned());
        }
        chains.held.insert(state.to_owned(), played);
        None
    }

    /// The chains the tape never ended, in tape order.
    pub fn unfinished(&self) -> Vec<Played> {
        let mut out: Vec<Played> = self
            .0
            .lock()
            .map(|mut c| c.held.drain().map(|(_, p)| p).collect())
            .unwrap_or_default();
        out.sort_by_key(|p| p.line);
        out
    }
}

/// The `requestState` (raw JSON) a retry echoes.
fn retry_state(msg: &Message) -> Option<&str> {
    era::is_retry(msg)
        .then(|| message::raw_member(msg.text(), &["params", "requestState"]))
        .flatten()
}

/// `recorded` and `live` (comparable forms) without the opaque `result.requestState`,
/// when the recorded answer is an `input_required` round.
pub fn without_state(recorded_msg: &Message, recorded: &mut Value, live: &mut Value) {
    if ResultType::of(recorded_msg) != Some(ResultType::InputRequired) {
        return;
    }
    for v in [recorded, live] {
        if let Some(result) = v.get_mut("result").and_then(Value::as_object_mut) {
            result.remove("requestState");
        }
    }
}

/// The rounds `first` and `then` as one call: at the first round's line, with the last
/// round's answer; `same` only when both are.
fn joined(first: Played, then: Played) -> Played {
    let class = match (first.class, then.class) {
        (Class::Same, c) => c,
        (c, _) => c,
    };
    let mut differences = first.differences;
    differences.extend(then.differences);
    Played {
        line: first.line,
        class,
        reason: first.reason.or(then.reason),
        differences,
        ..then
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(text: &str) -> Message {
        Message::new(text.as_bytes().to_vec())
    }

    fn played(line: usize, class: Class) -> Played {
        Played {
            server: "py".into(),
            conn: "c".into(),
            line,
            method: "tools/call".into(),
            tool: Some("confirm".into()),
            class,
            reason: None,
            differences: Vec::new(),
            answer_line: Some(line + 1),
            live: None,
        }
    }

    const ASK: &str = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"confirm","arguments":{"name":"tape"}}}"#;
    const ASKED_REC: &str = r#"{"jsonrpc":"2.0","id":5,"result":{"inputRequests":{"ok":{"method":"elicitation/create","params":{"message":"confirm tape?"}}},"requestState":"v1.recorded","resultType":"input_required"}}"#;
    const ASKED_LIVE: &str = r#"{"jsonrpc":"2.0","id":5,"result":{"inputRequests":{"ok":{"method":"elicitation/create","params":{"message":"confirm tape?"}}},"requestState":"v1.live","resultType":"input_required"}}"#;
    const RETRY: &str = r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"inputResponses":{"ok":{"action":"accept","content":{"ok":true}}},"requestState":"v1.recorded","name":"confirm","arguments":{"name":"tape"}}}"#;
    const DONE: &str = r#"{"jsonrpc":"2.0","id":6,"result":{"content":[{"text":"confirmed tape","type":"text"}],"resultType":"complete"}}"#;

    #[test]
    fn a_retry_goes_with_the_live_state_and_the_chain_is_one_call() {
        let chains = Chains::default();
        let retry = msg(RETRY);
        assert_eq!(chains.to_send(&retry).text(), RETRY, "no live state yet");
        let first = chains.round(
            played(10, Class::Same),
            &msg(ASK),
            Some(&msg(ASKED_REC)),
            Some(&msg(ASKED_LIVE)),
        );
        assert!(first.is_none(), "the first round waits for its retry");
        assert_eq!(
            chains.to_send(&retry).text(),
            RETRY.replace("v1.recorded", "v1.live")
        );
        let done = chains
            .round(
                played(12, Class::Changed),
                &retry,
                Some(&msg(DONE)),
                Some(&msg(DONE)),
            )
            .expect("the retry ends the chain");
        assert_eq!(
            (done.line, done.class, done.answer_line),
            (10, Class::Changed, Some(13))
        );
        assert!(chains.unfinished().is_empty());
    }

    #[test]
    fn a_chain_the_tape_never_ends_is_reported_at_the_end() {
        let chains = Chains::default();
        assert!(
            chains
                .round(
                    played(4, Class::Same),
                    &msg(ASK),
                    Some(&msg(ASKED_REC)),
                    None
                )
                .is_none()
        );
        let left = chains.unfinished();
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].line, 4);
    }

    #[test]
    fn the_opaque_state_is_not_compared() {
        let rec = msg(ASKED_REC);
        let mut a = rec.value();
        let mut b = msg(ASKED_LIVE).value();
        without_state(&rec, &mut a, &mut b);
        assert_eq!(a, b);
        let done = msg(DONE);
        let mut c = done.value();
        let mut d = msg(ASKED_LIVE).value();
        without_state(&done, &mut c, &mut d);
        assert!(
            d["result"]["requestState"].is_string(),
            "only input_required rounds"
        );
    }
}
