//! Requests the policy gate answered when the tape was recorded (a `$policy/decision`
//! after the request says `refused` or `dry-run`), or that the client withdrew while
//! they were held: the server never saw them, so verify does not play them — a new
//! server is not held to the gate's answer, and a call the policy refused is not run
//! against it — and reports each as skipped, naming the decision.

use crate::message::Kind;
use crate::tape::lifecycle::{Lifecycle, LifecycleKind};
use crate::tape::policy::Resolution;
use crate::tape::{Direction, Entry};

/// Why the request `entry` is not played, when the gate answered it or it was withdrawn
/// (`rest`: what the tape holds after it, up to its answer).
pub fn not_played(entry: &Entry, rest: &[&Entry]) -> Option<String> {
    let id = entry.message.id()?;
    let same = |other: &str| crate::message::same_id(other, id);
    for e in rest {
        let kind = e.message.kind();
        let answer = e.meta.dir == Direction::Recv && matches!(kind, Kind::Response | Kind::Error);
        let again = e.meta.dir == Direction::Send && kind == Kind::Request;
        if (answer || again) && e.message.id().is_some_and(same) {
            return None;
        }
        let Some(Lifecycle::Policy(p)) = Lifecycle::of(e) else {
            continue;
        };
        // The entry of a request the gate could not read keeps an id no JSON value can
        // hold (`1e400`) as its text, in a string.
        let unread_id = |pid: &str| {
            p.error.is_some() && serde_json::from_str::<String>(pid).is_ok_and(|s| s == id)
        };
        if !p
            .id
            .as_deref()
            .is_some_and(|pid| same(pid) || unread_id(pid))
            || p.resolution == Resolution::Allowed
        {
            continue;
        }
        let rules = match p.rules.as_slice() {
            _ if p.error.is_some() => format!(
                "the gate, which could not read it (error {})",
                p.error.unwrap_or_default()
            ),
            [] => "the default".to_owned(),
            ids => format!("rule {}", ids.join(", ")),
        };
        return Some(match p.resolution {
            Resolution::Withdrawn => format!(
                "not played: the client withdrew it while the policy held it ({} by {rules}); the server never saw it",
                p.decision.as_str()
            ),
            _ => format!(
                "not played: the policy answered it when it was recorded ({} by {rules}: {}); the server never saw it",
                p.decision.as_str(),
                p.resolution.as_str()
            ),
        });
    }
    None
}

/// True for a `$policy/decision` entry.
pub fn is_decision(e: &Entry) -> bool {
    LifecycleKind::of(e) == Some(LifecycleKind::PolicyDecision)
}
