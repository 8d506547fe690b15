//! The gate's refusal of what it cannot read ([`crate::policy::read`]): a line that does
//! not parse whole, a gated request whose id is neither a string nor an integer, a gated
//! message too deep to read whole. Answered here with a JSON-RPC error (`id: null`),
//! never forwarded, and told as a `$policy/decision` (`deny`, no rule, the code in
//! `error`).

use super::{Facts, PolicyLayer};
use crate::layer::Step;
use crate::message::Message;
use crate::policy::read::{self, INVALID_REQUEST, UNKNOWN_METHOD, Unreadable};
use crate::tape::policy::{Decision, PolicyEntry, Resolution};

/// Why a message of a gated method cannot be read as one (`deep`: nested deeper than the
/// gate reads); `None` when it can.
pub(super) fn unreadable(facts: &Facts, deep: bool) -> Option<Unreadable> {
    let invalid = |why: String| {
        Some(Unreadable {
            code: INVALID_REQUEST,
            why,
        })
    };
    if let Some(id) = &facts.id
        && !serde_json::from_str(id).is_ok_and(|v| read::valid_id(&v))
    {
        let shown = crate::term::line(id).into_owned();
        return invalid(format!(
            "the id of a `{}` request is a string or an integer, not {shown}",
            facts.method
        ));
    }
    if deep {
        return invalid(format!(
            "a `{}` nested deeper than {} levels",
            facts.method,
            crate::depth::MAX_JSON_DEPTH
        ));
    }
    None
}

impl PolicyLayer {
    /// Refuses `msg`, which the gate cannot read (`facts`: what it could read of it).
    pub(super) fn unread(
        &self,
        msg: &Message,
        facts: Option<&Facts>,
        unreadable: Unreadable,
    ) -> Step {
        self.tell(&entry(msg, facts, &unreadable));
        // Its id is `null`, as JSON-RPC asks when the request's own cannot be read; the
        // HTTP front still ends the request's stream with it (the strict head's id, when
        // there is one, says which).
        let answer = read::error(&unreadable).answering(msg.id().map(Into::into));
        Step::Answer(vec![answer])
    }
}

/// The `$policy/decision` of a refused unreadable message: its id and method as far as
/// they can be read (a strict head, when the whole line cannot be), else `?`.
pub(super) fn entry(msg: &Message, facts: Option<&Facts>, unreadable: &Unreadable) -> PolicyEntry {
    let id = match facts {
        Some(f) => f.id.clone(),
        None => msg.id().map(str::to_owned),
    };
    let method = facts
        .map(|f| f.method.clone())
        .or_else(|| msg.method().map(str::to_owned))
        .unwrap_or_else(|| UNKNOWN_METHOD.to_owned());
    PolicyEntry {
        id,
        method,
        tool: facts.and_then(|f| f.tool.clone()),
        decision: Decision::Deny,
        rules: Vec::new(),
        resolution: Resolution::Refused,
        approval: None,
        by: None,
        reason: Some(unreadable.why.clone()),
        waited_ms: None,
        error: Some(unreadable.code),
    }
}
