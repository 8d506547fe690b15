//! A call the recorded client cancelled: verify sends the recorded
//! `notifications/cancelled` at its recorded point — its recorded delay after the request
//! was sent — instead of playing the call to completion, and classifies the call as
//! [`Class::Cancelled`]: it neither fails nor has its answer compared.
//!
//! Only a cancel recorded before the call's answer (or with no answer on the tape) counts:
//! a cancel that crossed an answer already on its way changed nothing. Once the cancel is
//! sent, an answer (many servers answer `-32800 Request cancelled`, the spec lets them
//! stay silent) is awaited for at most [`CANCEL_GRACE`]; a later answer to the cancelled
//! id is dropped without a problem.

use std::time::Duration;

use tokio::time::error::Elapsed;

use super::Player;
use crate::message::{self, Kind, Message};
use crate::tape::lifecycle::Lifecycle;
use crate::tape::{Direction, Entry};
use crate::upstream::Link;
use crate::verify::compare::{Class, Played};

/// How long an answer to a cancelled call is waited for once the cancel is sent.
pub const CANCEL_GRACE: Duration = Duration::from_secs(2);

/// A recorded cancel of one request.
pub(super) struct Cancel {
    /// The tape line of the `notifications/cancelled` entry.
    pub(super) line: usize,
    /// The recorded notification, sent as it is (verify plays the recorded ids).
    message: Message,
    /// Its recorded delay after the request.
    after: Duration,
    /// Made by closing the request's stream (`$http/cancelled`), as a client of the
    /// stateless revision cancels: played by closing the live request's stream too.
    by_stream: bool,
}

/// The request id (raw JSON) a `$http/cancelled` entry names: its client closed that
/// request's stream.
pub(super) fn by_stream(e: &Entry) -> Option<String> {
    match Lifecycle::of(e)? {
        Lifecycle::HttpCancelled { request_id, .. } => request_id,
        _ => None,
    }
}

/// The recorded cancel of `request` among the entries after it (`rest`), when it was
/// recorded before the request's answer.
pub(super) fn recorded(request: &Entry, rest: &[&Entry]) -> Option<Cancel> {
    let id = request.message.id()?;
    let answered = |e: &Entry| {
        e.meta.dir == Direction::Recv
            && e.message.id() == Some(id)
            && matches!(e.message.kind(), Kind::Response | Kind::Error)
    };
    let entry = rest.iter().take_while(|e| !answered(e)).find(|e| {
        let sent = e.meta.dir == Direction::Send
            && e.message.method() == Some("notifications/cancelled")
            && message::raw_member(e.message.text(), &["params", "requestId"]) == Some(id);
        sent || by_stream(e).is_some_and(|named| message::same_id(&named, id))
    })?;
    let ts = |e: &Entry| humantime::parse_rfc3339(e.meta.ts.as_deref()?).ok();
    let after = match (ts(request), ts(entry)) {
        (Some(a), Some(b)) => b.duration_since(a).unwrap_or_default(),
        _ => Duration::ZERO,
    };
    Some(Cancel {
        line: entry.line,
        message: entry.message.clone(),
        after,
        by_stream: entry.meta.dir == Direction::Lifecycle,
    })
}

impl<L: Link> Player<'_, L> {
    /// Waits for the answer to the request of tape line `line` (id `want`) until the
    /// recorded cancel's point: the answer if it came first (`Some`, to classify as
    /// usual), else sends the cancel, classifies `played` as cancelled and gives `None`.
    pub(super) async fn until_cancel(
        &mut self,
        played: &mut Played,
        line: usize,
        want: &str,
        cancel: &Cancel,
    ) -> Option<Result<Option<Message>, Elapsed>> {
        let point = cancel.after.min(self.opts.timeout);
        match tokio::time::timeout(point, self.answer(line, want)).await {
            Ok(live) => return Some(Ok(live)),
            Err(elapsed) if point < cancel.after => return Some(Err(elapsed)),
            Err(_) => {}
        }
        self.cancelled.insert(want.to_owned());
        self.played_cancels.insert(cancel.line);
        played.class = Class::Cancelled;
        if cancel.by_stream {
            // Its stream is gone: no answer can follow.
            self.link.cancel(want).await;
            played.reason = Some(format!(
                "cancelled at its recorded point, {} ms after the request, by closing its stream (tape line {})",
                cancel.after.as_millis(),
                cancel.line
            ));
            return None;
        }
        // A server that cannot take it shows as its end, in `next`.
        let _ = self.link.send(cancel.message.clone()).await;
        let after = tokio::time::timeout(CANCEL_GRACE, self.answer(line, want)).await;
        let answered = match after {
            Ok(Some(live)) => {
                played.live = Some(live.text().to_owned());
                "the server answered it; the answer is not compared"
            }
            Ok(None) => "the server closed its output after it",
            Err(_) => "no answer followed it",
        };
        played.reason = Some(format!(
            "cancelled at its recorded point, {} ms after the request (tape line {}): {answered}",
            cancel.after.as_millis(),
            cancel.line
        ));
        None
    }
}
