//! The session names of an import run's tapes: one function for `import` and for
//! `scan --json`'s `tape`, so that scan says the name import writes.
//!
//! A name is `<agent>-<first 8 characters of the session id>`, characters a session name
//! may not hold becoming `_`. Within one run names are distinct: a taken name falls back
//! to the whole (safe) id, and a taken fallback gets `-2`, `-3`, … — so a session's tape
//! is never overwritten by another session's of the same run (`c/1`, `c.1` and `c:1`
//! all make `c_1`).

use std::collections::HashSet;

use crate::import::ImportedSession;

/// How many characters of a session id a tape's name keeps.
const NAME_ID_CHARS: usize = 8;

/// The session name of an imported session's tape, alone (see [`Names`] for a run's).
fn name(agent: &str, session: &ImportedSession) -> String {
    with_id(agent, &safe_id(&session.id, Some(NAME_ID_CHARS)))
}

/// The names one run has given, so that the next is distinct from all of them.
#[derive(Debug, Default)]
pub struct Names {
    used: HashSet<String>,
}

impl Names {
    /// The name of `session`'s tape in this run: [`name`], else its whole id, else either
    /// with the first free `-N` suffix.
    pub fn next(&mut self, agent: &str, session: &ImportedSession) -> String {
        let short = name(agent, session);
        let whole = with_id(agent, &safe_id(&session.id, None));
        let pick = [short, whole.clone()]
            .into_iter()
            .find(|n| !self.used.contains(n))
            .unwrap_or_else(|| {
                (2u64..)
                    .map(|n| format!("{whole}-{n}"))
                    .find(|n| !self.used.contains(n))
                    .expect("a run names fewer tapes than u64 holds")
            });
        self.used.insert(pick.clone());
        pick
    }
}

/// `id`'s characters a session name may hold (others become `_`; control characters go),
/// at most `limit` of them.
fn safe_id(id: &str, limit: Option<usize>) -> String {
    id.chars()
        .filter(|c| !c.is_control())
        .take(limit.unwrap_or(usize::MAX))
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn with_id(agent: &str, id: &str) -> String {
    if id.is_empty() {
        agent.to_owned()
    } else {
        format!("{agent}-{id}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(id: &str) -> ImportedSession {
        ImportedSession {
            id: id.into(),
            source: "s.jsonl".into(),
            started: None,
            cwd: None,
            calls: Vec::new(),
            skipped_tools: 0,
        }
    }

    #[test]
    fn names_of_one_run_are_distinct_even_when_ids_make_the_same_name() {
        let mut names = Names::default();
        let got: Vec<String> = ["c/1", "c.1", "c:1", "aaaaaaaa-1", "aaaaaaaa", "", ""]
            .iter()
            .map(|id| names.next("claude-code", &session(id)))
            .collect();
        assert_eq!(
            got,
            [
                "claude-code-c_1",
                "claude-code-c_1-2",
                "claude-code-c_1-3",
                "claude-code-aaaaaaaa",
                // The whole id `aaaaaaaa` is the name taken: a suffix.
                "claude-code-aaaaaaaa-2",
                "claude-code",
                "claude-code-2",
            ]
        );
        for n in &got {
            crate::tape::store::check_name(n).expect("a valid session name");
        }
    }
}
