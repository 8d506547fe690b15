//! A divergence: the client sent what the tape does not hold next. The client gets the
//! divergence error naming what was expected and what came, every request still waiting
//! gets it too, the verdict records a readable diff, and the script stops.

use super::*;

impl Replay {
    pub(super) fn diverge(&mut self, msg: &Message, expected: Option<usize>) -> Vec<Out> {
        let server = self.verdict.server.clone();
        let conn = self.verdict.conn.clone().unwrap_or_default();
        let got = summary(msg);
        let later = (self.pos..self.steps.len())
            .filter(|&i| {
                !self.steps[i].done && self.steps[i].dir == Direction::Send && Some(i) != expected
            })
            .find(|&i| self.step_matches(i, msg, &std::sync::OnceLock::new()))
            .map(|i| self.steps[i].line);
        let live = self.opts.matcher.normalize(msg);
        let (why, mismatch) = match expected {
            Some(i) => {
                let step = &self.steps[i];
                let want = summary(&step.message);
                let mut why = format!(
                    "mcptape replay of server `{server}` connection `{conn}`: expected {want} (tape line {}), got {got}",
                    step.line
                );
                if let Some(l) = later {
                    why.push_str(&format!(
                        "; that message is at tape line {l}, later in the script"
                    ));
                }
                let diff = matcher::diff(
                    &self.opts.matcher.normalize(&step.message),
                    &live,
                    &format!("expected (tape line {})", step.line),
                    "got",
                );
                (
                    why,
                    Mismatch {
                        line: Some(step.line),
                        expected: want,
                        got,
                        diff,
                        later_line: later,
                    },
                )
            }
            None => {
                let end = self.steps.last().map(|s| s.line).unwrap_or(0);
                let why = format!(
                    "mcptape replay of server `{server}` connection `{conn}`: expected nothing more from the client (the recording ends at tape line {end}), got {got}"
                );
                let diff = String::new();
                let _ = live;
                (
                    why,
                    Mismatch {
                        line: None,
                        expected: "nothing more".into(),
                        got,
                        diff,
                        later_line: None,
                    },
                )
            }
        };
        self.verdict.mismatch = Some(mismatch);
        self.diverged = Some(why.clone());
        // Every request still waiting for an answer gets the error too: none will come.
        let mut waiting = std::mem::take(&mut self.awaiting);
        if msg.kind() == Kind::Request {
            waiting.push(msg.id().unwrap_or("null").to_owned());
        }
        waiting
            .iter()
            .map(|id| self.now(error_line(id, DIVERGED_CODE, &why)))
            .collect()
    }
}
