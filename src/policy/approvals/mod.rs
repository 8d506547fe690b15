//! The approvals desk: where a call a policy's `ask` holds waits for a person, who
//! decides from another terminal (`mcptape approvals`, `approve ID`, `deny ID`).
//!
//! The desk is a directory, `$MCPTAPE_HOME/recordings/.approvals`, that only this user
//! can reach (0700, ours; anything else is refused with the way to fix it:
//! [`files::check_dir`]). Nothing listens on the network, and no other user can see a
//! held call's arguments or decide it. Tape readers (`list`, the name suggestions) only
//! read `*.ndjson`, so the directory is not a session.
//!
//! - A held call is a file `<id>.json` ([`Pending`]: id, server, method, tool, the
//!   arguments as the holder redacted them, the rules, the holder's pid, since, and the
//!   deadline once the holder waits), 0600, written whole under a temporary name and
//!   put in place with a hard link, so that nobody reads half of one and two calls
//!   never share an id.
//! - A decision is a file `<id>.decision` ([`Decision`]) put in place the same way:
//!   the first one there wins. `approve`/`deny` write one; the holder writes its own
//!   when its time is up (`timed-out`) or when it is dropped (`withdrawn`), and so an
//!   approval that comes as the time runs out is either the one honoured or told it
//!   came too late — never both. The holder polls for it ([`POLL`]), answers, and
//!   removes `<id>.json`; the decision stays a minute ([`STALE_AFTER`]) so that a second
//!   `approve` is told what became of the call, then the next listing or hold sweeps it.
//! - A call whose holder process is gone (or that is long past its deadline) is stale:
//!   listings skip it and sweep it, and deciding it says so.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::error::Result;
use crate::tape::store;

mod error;
mod files;
mod record;

pub use error::ApprovalError;
pub use record::{Decision, Pending, Verdict};

/// The desk's directory, in the recordings directory (hidden: not a session name).
pub const DESK_DIR: &str = ".approvals";
/// How often a holder looks for its decision.
pub const POLL: Duration = Duration::from_millis(100);
/// How long a decision is kept after its call is over, and how far past its deadline a
/// pending call counts as stale whatever its pid says (a pid used again).
pub const STALE_AFTER: Duration = Duration::from_secs(60);
/// The longest `deny --reason` passed on to the agent, in bytes.
pub const MAX_REASON_BYTES: usize = 4096;
/// How many fresh ids a hold tries before it gives up (30 random bits each: a second
/// try is already rare).
const ID_TRIES: usize = 8;

/// What a held call shows a person (`mcptape approvals`).
#[derive(Debug, Clone)]
pub struct Request {
    /// The server's name.
    pub server: String,
    /// The method (`tools/call`, or another a rule names).
    pub method: String,
    /// The tool, for a `tools/call`.
    pub tool: Option<String>,
    /// The arguments, already redacted.
    pub arguments: Value,
    /// The ids of the rules that said `ask`.
    pub rules: Vec<String>,
}

/// What a person (or the clock) decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// `mcptape approve ID`.
    Approved {
        /// Who (`user@host`).
        by: String,
    },
    /// `mcptape deny ID [--reason]`.
    Denied {
        /// Who (`user@host`).
        by: String,
        /// `--reason`.
        reason: Option<String>,
    },
    /// Nobody decided within the timeout.
    TimedOut,
}

/// What a person decides on a pending call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// Let it through.
    Approve,
    /// Refuse it, saying why.
    Deny {
        /// Passed on to the agent.
        reason: Option<String>,
    },
}

/// The desk: a directory only the user can reach.
#[derive(Debug, Clone)]
pub struct Desk {
    dir: PathBuf,
}

/// A call on the desk. Dropping it withdraws it (the client cancelled, the connection
/// ended): it is no longer listed, and a later `approve` says it is gone.
#[derive(Debug)]
pub struct Held {
    /// The id a person names (`mcptape approve ID`).
    pub id: String,
    dir: PathBuf,
    pending: Pending,
    /// When it was put on the desk, on the clock the waits use.
    started: tokio::time::Instant,
    /// When, on the wall clock.
    since: SystemTime,
    /// The answer, once given: the files are gone, and a second wait gives it again.
    done: Option<Answer>,
}

impl Desk {
    /// The desk of this user's mcptape home: `$MCPTAPE_HOME` of our own environment,
    /// else of the environment that decides the mode (a proxy whose agent scrubbed its
    /// environment still finds the `record` parent's), else `~/.mcptape`.
    pub fn open() -> Result<Desk> {
        let own = crate::mode::own()?;
        let home = match own.get(crate::mode::ENV_HOME) {
            Some(home) => Some(PathBuf::from(home)),
            None => {
                let found = crate::mode::find()?;
                found
                    .get(crate::mode::ENV_HOME)
                    .map(|home| found.cwd.join(home))
            }
        };
        let home = store::home(home.as_deref().and_then(Path::to_str))?;
        Ok(Desk::in_home(&home))
    }

    /// The desk of the mcptape home `home`.
    pub fn in_home(home: &Path) -> Desk {
        Desk::at(store::recordings_dir(home).join(DESK_DIR))
    }

    /// A desk in `dir` (tests).
    pub fn at(dir: PathBuf) -> Desk {
        Desk { dir }
    }

    /// The desk's directory.
    #[cfg(test)]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Puts a call on the desk (making the directory, 0700, when it is missing).
    pub fn hold(&self, request: Request) -> Result<Held> {
        files::ensure_dir(&self.dir)?;
        self.sweep(SystemTime::now());
        let since = SystemTime::now();
        let started = tokio::time::Instant::now();
        let (arguments, arguments_bytes) = record::shown_arguments(request.arguments);
        for _ in 0..ID_TRIES {
            let id = crate::ids::approval_id().map_err(ApprovalError::from)?;
            // The decision of an earlier call of that id may still be kept.
            if files::exists(&self.decision_path(&id)) {
                continue;
            }
            let pending = Pending {
                id: id.clone(),
                server: request.server.clone(),
                method: request.method.clone(),
                tool: request.tool.clone(),
                arguments: arguments.clone(),
                arguments_bytes,
                rules: request.rules.clone(),
                pid: std::process::id(),
                since: crate::tape::format::timestamp(since),
                deadline: None,
            };
            if files::place_new(&self.dir, &pending_name(&id), &to_json(&pending))? {
                return Ok(Held {
                    id,
                    dir: self.dir.clone(),
                    pending,
                    started,
                    since,
                    done: None,
                });
            }
        }
        Err(ApprovalError::Dir {
            path: self.dir.clone(),
            source: std::io::Error::other(format!("no free id after {ID_TRIES} tries")),
        }
        .into())
    }

    /// The calls waiting for a decision, oldest first. Stale ones (their holder is gone)
    /// are skipped and swept, as are decisions kept past their time.
    pub fn pending(&self) -> Result<Vec<Pending>> {
        if files::check_dir(&self.dir)?.is_none() {
            return Ok(Vec::new());
        }
        let now = SystemTime::now();
        self.sweep(now);
        let mut waiting = Vec::new();
        for id in self.ids(record::PENDING_EXT)? {
            let Some(pending) = self.load_pending(&id) else {
                continue;
            };
            if files::exists(&self.decision_path(&id)) {
                // Decided: its holder is about to answer.
                continue;
            }
            if is_stale(&pending, now) {
                let _ = files::remove(&self.pending_path(&id));
                continue;
            }
            waiting.push(pending);
        }
        waiting.sort_by(|a, b| (&a.since, &a.id).cmp(&(&b.since, &b.id)));
        Ok(waiting)
    }

    /// Decides the pending call `id`: the call it was (its server, its tool), or why it
    /// cannot be decided — no such call (the ones waiting are named), decided already
    /// (and how), or its holder gone.
    pub fn decide(&self, id: &str, choice: Choice) -> Result<Pending> {
        if let Choice::Deny {
            reason: Some(reason),
        } = &choice
            && reason.len() > MAX_REASON_BYTES
        {
            return Err(ApprovalError::ReasonTooLong {
                len: reason.len(),
                max: MAX_REASON_BYTES,
            }
            .into());
        }
        let unknown = || -> Result<Pending> {
            Err(ApprovalError::Unknown {
                id: crate::term::line(id).into_owned(),
                waiting: self.waiting_ids(),
            }
            .into())
        };
        if !crate::ids::is_approval_id(id) || files::check_dir(&self.dir)?.is_none() {
            return unknown();
        }
        if let Some(decided) = self.load_decision(id) {
            return Err(ApprovalError::Decided {
                id: id.to_owned(),
                what: decided.said(),
                waiting: self.waiting_ids(),
            }
            .into());
        }
        let Some(pending) = self.load_pending(id) else {
            return unknown();
        };
        if is_stale(&pending, SystemTime::now()) {
            let _ = files::remove(&self.pending_path(id));
            return Err(ApprovalError::Stale {
                id: id.to_owned(),
                pid: pending.pid,
                waiting: self.waiting_ids(),
            }
            .into());
        }
        let (verdict, reason) = match choice {
            Choice::Approve => (Verdict::Approved, None),
            Choice::Deny { reason } => (Verdict::Denied, reason),
        };
        let decision = Decision::now(id, verdict, Some(record::who()), reason);
        // The first decision there wins; the holder honours whichever it is.
        if !files::place_new(&self.dir, &decision_name(id), &to_json(&decision))? {
            let what = self
                .load_decision(id)
                .map_or_else(|| "it was decided just now".to_owned(), |d| d.said());
            return Err(ApprovalError::Decided {
                id: id.to_owned(),
                what,
                waiting: self.waiting_ids(),
            }
            .into());
        }
        Ok(pending)
    }

    /// The ids waiting, for an error's words (none when they cannot be read).
    fn waiting_ids(&self) -> Vec<String> {
        self.pending()
            .map(|all| all.into_iter().map(|p| p.id).collect())
            .unwrap_or_default()
    }

    /// The ids of the files of the desk with extension `ext`.
    fn ids(&self, ext: &str) -> Result<Vec<String>> {
        let read = std::fs::read_dir(&self.dir).map_err(|source| ApprovalError::Dir {
            path: self.dir.clone(),
            source,
        })?;
        let suffix = format!(".{ext}");
        Ok(read
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let id = name.strip_suffix(&suffix)?;
                crate::ids::is_approval_id(id).then(|| id.to_owned())
            })
            .collect())
    }

    /// Removes what is kept past its time: decisions of calls that are over, and
    /// temporary files a crash left. Best effort: a desk that cannot be swept still
    /// works.
    fn sweep(&self, now: SystemTime) {
        let Ok(read) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for entry in read.filter_map(|e| e.ok()) {
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            let old = entry
                .metadata()
                .ok()
                .and_then(|m| m.modified().ok())
                .and_then(|t| now.duration_since(t).ok())
                .is_some_and(|age| age > STALE_AFTER);
            if !old {
                continue;
            }
            let over = match name.strip_suffix(&format!(".{}", record::DECISION_EXT)) {
                Some(id) => !files::exists(&self.pending_path(id)),
                None => name.starts_with('.') && name.ends_with(".tmp"),
            };
            if over {
                let _ = files::remove(&entry.path());
            }
        }
    }

    fn pending_path(&self, id: &str) -> PathBuf {
        self.dir.join(pending_name(id))
    }

    fn decision_path(&self, id: &str) -> PathBuf {
        self.dir.join(decision_name(id))
    }

    /// The pending call `id`, when its file is there and reads.
    fn load_pending(&self, id: &str) -> Option<Pending> {
        load(&self.pending_path(id))
    }

    /// The decision on call `id`, when there is one.
    fn load_decision(&self, id: &str) -> Option<Decision> {
        load(&self.decision_path(id))
    }
}

impl Held {
    /// Waits for a decision, at most `timeout` from when the call was put on the desk
    /// (which the pending file then shows as its deadline). Cancel-safe: dropped and
    /// called again, it goes on with the same deadline.
    pub async fn wait(&mut self, timeout: Duration) -> Answer {
        if let Some(answer) = &self.done {
            return answer.clone();
        }
        self.show_deadline(timeout);
        let far = Duration::from_secs(100 * 365 * 24 * 3600);
        let deadline = self.started + timeout.min(far);
        loop {
            if let Some(answer) = self.answered() {
                return self.finish(answer);
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                // An approval written first still wins over the clock.
                let answer = match self.close_with(Verdict::TimedOut) {
                    true => Answer::TimedOut,
                    false => self.answered().unwrap_or(Answer::TimedOut),
                };
                return self.finish(answer);
            }
            tokio::time::sleep_until(deadline.min(now + POLL)).await;
        }
    }

    /// Writes the deadline into the pending file, for `approvals` to show.
    fn show_deadline(&mut self, timeout: Duration) {
        let Some(at) = self.since.checked_add(timeout) else {
            return;
        };
        let deadline = Some(crate::tape::format::timestamp(at));
        let path = self.dir.join(pending_name(&self.id));
        if self.pending.deadline == deadline || !files::exists(&path) {
            return;
        }
        self.pending.deadline = deadline;
        let _ = files::replace(&self.dir, &pending_name(&self.id), &to_json(&self.pending));
    }

    /// The decision a person wrote, when there is one.
    fn answered(&self) -> Option<Answer> {
        let decision: Decision = load(&self.dir.join(decision_name(&self.id)))?;
        let by = decision.by.unwrap_or_default();
        Some(match decision.decision {
            Verdict::Approved => Answer::Approved { by },
            Verdict::Denied => Answer::Denied {
                by,
                reason: decision.reason,
            },
            Verdict::TimedOut | Verdict::Withdrawn => Answer::TimedOut,
        })
    }

    /// Writes the holder's own decision: true when it is the one that counts (no person
    /// decided first).
    fn close_with(&self, verdict: Verdict) -> bool {
        let decision = Decision::now(&self.id, verdict, None, None);
        files::place_new(&self.dir, &decision_name(&self.id), &to_json(&decision)).unwrap_or(false)
    }

    /// The call is over: it leaves the desk (its decision stays a while).
    fn finish(&mut self, answer: Answer) -> Answer {
        let _ = files::remove(&self.dir.join(pending_name(&self.id)));
        self.done = Some(answer.clone());
        answer
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if self.done.is_none() {
            // A decision that comes now finds the call withdrawn.
            self.close_with(Verdict::Withdrawn);
            let _ = files::remove(&self.dir.join(pending_name(&self.id)));
        }
    }
}

/// True when the call's holder is gone, or the call is long past its deadline.
fn is_stale(pending: &Pending, now: SystemTime) -> bool {
    let overdue = pending
        .deadline
        .as_deref()
        .and_then(record::parse_time)
        .and_then(|deadline| now.duration_since(deadline).ok())
        .is_some_and(|late| late > STALE_AFTER);
    overdue || !files::alive(pending.pid)
}

fn pending_name(id: &str) -> String {
    format!("{id}.{}", record::PENDING_EXT)
}

fn decision_name(id: &str) -> String {
    format!("{id}.{}", record::DECISION_EXT)
}

fn to_json<T: serde::Serialize>(value: &T) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(value).expect("a desk record serialises");
    bytes.push(b'\n');
    bytes
}

/// A desk file, read and parsed; None when it is missing or does not read.
fn load<T: serde::de::DeserializeOwned>(path: &Path) -> Option<T> {
    let bytes = files::read(path).ok()??;
    serde_json::from_slice(&bytes).ok()
}

#[cfg(test)]
mod tests;
