//! Giving the client what is due ([`super::causes`]): every recv step whose causes have
//! happened, in step order, rewritten for the live client; and the client messages the
//! script takes out of order: a listing request, or an answer to a server request the
//! tape holds no answer to.

use super::*;

impl Replay {
    /// Step `i` has happened (matched, given, or passed over).
    pub(super) fn happened(&mut self, i: usize) {
        self.steps[i].done = true;
        self.causes.happened(i);
        // The scan for the client's next message starts at `pos`: past what is done, and
        // past what never holds it up (recv steps, repeated listings, which are matched
        // out of order), so a step left undone for ever does not make each scan longer.
        while let Some(s) = self.steps.get(self.pos) {
            let listing = s.optional && steps::is_listing(s.dir, &s.message);
            if !(s.done || s.dir == Direction::Recv || listing) {
                break;
            }
            self.pos += 1;
        }
    }

    /// Send step `c` matched the client's `msg`: what is due now.
    pub(super) fn matched(&mut self, c: usize, msg: &Message) -> Vec<Out> {
        self.consume(c, msg);
        let mut out = self.advance();
        out.extend(self.lost_answer(c));
        out
    }

    /// Gives the client every recv step whose causes have happened.
    pub(super) fn advance(&mut self) -> Vec<Out> {
        let mut out = Vec::new();
        while let Some(i) = self.causes.next_ready() {
            if !self.steps[i].done {
                self.emit(i, &mut out);
            }
        }
        out
    }

    fn emit(&mut self, i: usize, out: &mut Vec<Out>) {
        let step = &self.steps[i];
        let delay = match (self.last_ts, step.ts) {
            (Some(a), Some(b)) => b.duration_since(a).unwrap_or_default(),
            _ => Duration::ZERO,
        };
        let ts = step.ts;
        let stream = step.stream;
        let msg = step.message.clone();
        self.happened(i);
        if msg.kind() == Kind::Request
            && let Some(answer) = self.pairs.answer_of(i)
        {
            self.owed.push(answer);
        }
        let hold = self.causes.hold(i);
        if hold.is_some() && self.opts.skip_unanswered {
            self.verdict.notes.push(format!(
                "not given: {}, which the tape holds no answer to",
                summary(&msg)
            ));
            return;
        }
        if hold.is_none()
            && let Some(ts) = ts
        {
            // A held message is timed by its hold, not by the messages around it.
            self.last_ts = Some(ts);
        }
        if hold.is_some()
            && let Some(id) = msg.id()
        {
            self.unasked.insert(id.to_owned());
        }
        // Progress for a token the live client never issued would reach a stranger.
        if msg.method() == Some("notifications/progress")
            && let Some(t) = message::raw_member(msg.text(), &["params", "progressToken"])
            && self.recorded_tokens.contains(t)
            && !self.tokens.contains_key(t)
        {
            return;
        }
        if let Some(live) = self.live_id(i)
            && let Some(at) = self.awaiting.iter().position(|a| a == live)
        {
            self.awaiting.remove(at);
        }
        self.verdict.answered += 1;
        out.push(Out {
            delay: if hold.is_some() {
                Duration::ZERO
            } else {
                delay
            },
            immediate: false,
            line: self.rewrite(i, &msg),
            hold,
            stream,
        });
    }

    /// The client's answer to a server request the tape holds no answer to: noted.
    pub(super) fn unrecorded_answer(&mut self, msg: &Message) -> Option<Vec<Out>> {
        if !matches!(msg.kind(), Kind::Response | Kind::Error) {
            return None;
        }
        let id = msg.id()?;
        if !self.unasked.remove(id) {
            return None;
        }
        self.verdict.notes.push(format!(
            "the client answered a server request the tape holds no answer to: {}",
            summary(msg)
        ));
        Some(Vec::new())
    }

    /// A listing request off the script's order: the next recorded listing it matches,
    /// or, when the client repeats one the tape holds fewer of, the recorded answer to it
    /// again (noted).
    pub(super) fn listing(&mut self, msg: &Message, live_id: &str) -> Option<Vec<Out>> {
        if !steps::is_listing(Direction::Send, msg) {
            return None;
        }
        let norm = std::sync::OnceLock::new();
        let listings: Vec<usize> = (0..self.steps.len())
            .filter(|&i| steps::is_listing(self.steps[i].dir, &self.steps[i].message))
            .filter(|&i| self.step_matches(i, msg, &norm))
            .collect();
        if let Some(&c) = listings.iter().find(|&&i| !self.steps[i].done) {
            return Some(self.matched(c, msg));
        }
        let answer = listings.iter().find_map(|&i| self.pairs.answer_of(i))?;
        let text = msg_with_id(&self.steps[answer].message, live_id)?;
        self.verdict.notes.push(format!(
            "the client repeated {}: given the recorded answer of tape line {} again",
            summary(msg),
            self.steps[answer].line
        ));
        Some(vec![self.now(text)])
    }
}

/// The recorded answer `answer` with the live id, as a line.
fn msg_with_id(answer: &Message, live_id: &str) -> Option<Vec<u8>> {
    let mut text = answer.with_id(live_id)?;
    text.push('\n');
    Some(text.into_bytes())
}
