//! Whether a client message would be answered from the script, asked without replaying
//! it: what `--record-mode new` consults before it sends a message to the live server.

use super::*;

impl Replay {
    /// True when `live` would be answered from the tape: a ping, an answer to a server
    /// request, an advisory notification, a listing the script holds, a probe, or what
    /// one of the current candidates expects. False after a divergence.
    pub fn accepts(&self, live: &Message) -> bool {
        if !live.is_object() || self.diverged.is_some() {
            return false;
        }
        match live.kind() {
            Kind::Request if live.method() == Some("ping") => return true,
            Kind::Request if live.method() == Some("server/discover") => return true,
            Kind::Response | Kind::Error => return true,
            Kind::Notification if live.method().is_some_and(|m| ADVISORY.contains(&m)) => {
                return true;
            }
            _ => {}
        }
        let live = self.as_recorded(live.clone());
        let norm = std::sync::OnceLock::new();
        if self
            .candidates()
            .iter()
            .any(|&c| self.step_matches(c, &live, &norm))
        {
            return true;
        }
        steps::is_listing(Direction::Send, &live)
            && (0..self.steps.len()).any(|i| {
                steps::is_listing(self.steps[i].dir, &self.steps[i].message)
                    && self.step_matches(i, &live, &norm)
            })
    }
}
