//! Where a cut recording ends, for the engine ([`crate::upstream::script::Ending`]): a
//! request whose answer the tape lost (cut off, or in a server message too long to
//! record, [`crate::upstream::script::Lost`]), or a client message past the script's end
//! (a cut, or a client message too long to record), gets the divergence error saying so,
//! the script stops, and the verdict records where.

use super::{DIVERGED_CODE, Out, Replay, error_line, summary};
use crate::message::{Kind, Message};

impl Replay {
    /// For request step `i`, just matched: when a cut recording lost its answer, the
    /// errors for it and every request still waiting (after what the tape still gave for
    /// it, its progress, never ahead of it).
    pub(super) fn lost_answer(&mut self, i: usize) -> Vec<Out> {
        if !self.pairs.unanswered(i) {
            return Vec::new();
        }
        let step = &self.steps[i];
        let Some(why) = (self.lost.answer_to(step.line))
            .or_else(|| self.ending.is_cut().then(|| self.ending.why()))
        else {
            return Vec::new();
        };
        let what = format!(
            "it holds no answer to {} (tape line {})",
            summary(&step.message),
            step.line
        );
        let errors = self.tape_ends(&format!("{what}; {why}"), None).into_iter();
        errors
            .map(|o| Out {
                immediate: false,
                ..o
            })
            .collect()
    }

    /// For a client message the script has no place for: when the recording is cut,
    /// the errors that say the tape ends here (none when it is whole: a divergence).
    pub(super) fn past_end(&mut self, msg: &Message) -> Option<Vec<Out>> {
        if !self.ending.is_cut() {
            return None;
        }
        let what = format!(
            "it holds nothing more from the client, and {} came",
            summary(msg)
        );
        let end = format!("{what}; {}", self.ending.why());
        Some(self.tape_ends(&end, Some(msg)))
    }

    /// Stops the script: `msg`, if a request, and every request still waiting get the
    /// error; the verdict says where the tape ends (`end`: what it lacks, and why).
    fn tape_ends(&mut self, end: &str, msg: Option<&Message>) -> Vec<Out> {
        let server = &self.verdict.server;
        let conn = self.verdict.conn.as_deref().unwrap_or_default();
        let end = end.to_owned();
        let why = format!(
            "mcptape replay of server `{server}` connection `{conn}`: the tape ends here: {end}"
        );
        self.verdict.tape_end = Some(end);
        self.diverged = Some(why.clone());
        let mut waiting = std::mem::take(&mut self.awaiting);
        if let Some(m) = msg.filter(|m| m.kind() == Kind::Request) {
            waiting.push(m.id().unwrap_or("null").to_owned());
        }
        waiting
            .iter()
            .map(|id| self.now(error_line(id, DIVERGED_CODE, &why)))
            .collect()
    }
}
