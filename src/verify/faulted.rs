//! Requests whose recorded answer was an injected fault (a `$fault` on the tape: an
//! error, a tool error or a malformed line in place of the answer, or no answer at all):
//! the live server's answer has nothing of its own to be compared with, so verify plays
//! the request and skips it, saying which rule made the recorded answer.

use crate::tape::Entry;
use crate::tape::fault::FaultEffect;
use crate::tape::lifecycle::{Lifecycle, LifecycleKind};
use crate::verify::compare::{Class, Played};

/// Marks `played` skipped when the tape after `entry` (`rest`) holds a `$fault` that
/// replaced or swallowed its answer.
pub fn skip(played: &mut Played, entry: &Entry, rest: &[&Entry]) {
    let Some(id) = entry.message.id() else {
        return;
    };
    let fault = rest.iter().find_map(|e| match Lifecycle::of(e) {
        Some(Lifecycle::Fault(f))
            if f.id
                .as_deref()
                .is_some_and(|f| crate::message::same_id(f, id)) =>
        {
            Some(f)
        }
        _ => None,
    });
    let Some(fault) = fault else {
        return;
    };
    let replaced = matches!(
        fault.effect,
        FaultEffect::Error | FaultEffect::ToolError | FaultEffect::Malformed | FaultEffect::Timeout
    );
    if replaced {
        played.class = Class::Skipped;
        played.reason = Some(format!(
            "played, not compared: the recorded answer is an injected fault ({} by rule {} `{}`)",
            fault.effect.as_str(),
            fault.index,
            crate::term::line(&fault.rule)
        ));
    }
}

/// True for a `$fault` entry.
pub fn is_fault(e: &Entry) -> bool {
    LifecycleKind::of(e) == Some(LifecycleKind::Fault)
}
