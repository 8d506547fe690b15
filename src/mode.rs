//! Which mode a proxy runs in, and where that came from.
//!
//! A proxy records when `--record` is given, or when `MCPTAPE_RECORD` is set; it replays
//! when `MCPTAPE_REPLAY` is set. The official SDK clients start servers with a scrubbed
//! environment (only `HOME`, `PATH` and a few more), so a proxy whose own environment has
//! neither variable looks at its ancestors, nearest first: on Linux,
//! `/proc/<pid>/environ` holds the environment each process was started with. The first
//! ancestor that has either variable decides, and all of that process's `MCPTAPE_*`
//! variables are used together (a relative path or name is resolved against that
//! process's `MCPTAPE_HOME` and working directory). Other systems see only their own
//! environment.
//!
//! A variable that is present but empty decides too: `MCPTAPE_RECORD=` turns the mode
//! off for everything below, whatever older ancestors say. The walk never crosses to a
//! process of another user (a root proxy under `sudo` does not take a user's tape path).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::cli;
use crate::error::{Error, Result};
use crate::matcher::{self, Matcher};
use crate::redact::Redactor;
use crate::tape::store;

/// Record into this tape (a session name or path).
pub const ENV_RECORD: &str = "MCPTAPE_RECORD";
/// Replay from this tape (a session name or path).
pub const ENV_REPLAY: &str = "MCPTAPE_REPLAY";
/// A directory where proxies leave their reports for the `record`/`replay` parent.
pub const ENV_REPORT: &str = "MCPTAPE_REPORT";
/// Comma-separated server names the mode applies to (set by `--server`); others pass through.
pub const ENV_SERVERS: &str = "MCPTAPE_SERVERS";
/// The mcptape home (tapes in `$MCPTAPE_HOME/recordings`).
pub const ENV_HOME: &str = "MCPTAPE_HOME";
/// The variables that, set but empty, turn both modes off below (for the servers a
/// `call` that records in process starts).
pub const OFF: [&str; 2] = [ENV_RECORD, ENV_REPLAY];

/// Where a mode's variables were found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// This process's own environment.
    Own,
    /// The environment an ancestor process was started with.
    Ancestor {
        /// Its process id.
        pid: u32,
        /// Its command name.
        name: String,
    },
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Own => f.write_str("proxy's own environment"),
            Source::Ancestor { pid, name } => {
                write!(f, "environment of ancestor `{name}` (pid {pid})")
            }
        }
    }
}

/// The `MCPTAPE_*` variables of one process, and where they came from.
#[derive(Debug, Clone)]
pub struct ModeEnv {
    /// The variables, by name.
    pub vars: HashMap<String, String>,
    /// Whose they are.
    pub source: Source,
    /// That process's working directory, for relative paths.
    pub cwd: PathBuf,
}

impl ModeEnv {
    /// Any variable of that process's environment (not only `MCPTAPE_*`): for the
    /// values `MCPTAPE_REDACT` names.
    pub fn lookup(&self, name: &str) -> Option<String> {
        match &self.source {
            Source::Own => std::env::var(name).ok(),
            Source::Ancestor { pid, .. } => {
                let raw = std::fs::read(proc_path(*pid, "environ")).ok()?;
                raw.split(|&b| b == 0)
                    .filter_map(|kv| std::str::from_utf8(kv).ok())
                    .filter_map(|kv| kv.split_once('='))
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_owned())
            }
        }
    }

    /// What a recording into `tape` made under this environment redacts, and how big the
    /// tape may grow. Its warnings (no redaction, naming the tape; `MCPTAPE_REDACT`
    /// problems) are printed once: by the `record` parent, not again by the proxies under
    /// it that record into its tape (they have its `MCPTAPE_REPORT`, and its tape in
    /// `MCPTAPE_RECORD`) unless a proxy's own `--no-redact` says more. Anything else (a
    /// `call --record` under `replay`, or into another tape) warns for itself.
    pub fn recording(&self, no_redact: bool, tape: &Path) -> Recording {
        let (redactor, mut warnings) = if no_redact {
            (Redactor::off(), Vec::new())
        } else {
            Redactor::for_recording(&|name| self.lookup(name))
        };
        if redactor.is_off() {
            let why = if no_redact {
                "--no-redact".to_owned()
            } else {
                format!("{} is set", crate::redact::ENV_NO_REDACT)
            };
            // One line, in place of the redactor's own.
            warnings = vec![format!(
                "recording into `{}` without redaction ({why}); review the tape before sharing it",
                tape.display()
            )];
        }
        // A `record` parent gives its proxies its report directory and its tape's
        // absolute path; `replay` gives a report directory too, and warned of nothing.
        let parent_said = !no_redact
            && self.get(ENV_REPORT).is_some()
            && self.get(ENV_RECORD).is_some_and(|t| Path::new(t) == tape);
        if self.source == Source::Own && !parent_said {
            for w in warnings {
                crate::term::eprintln_escaped!("mcptape: warning: {w}");
            }
        }
        let max_bytes = self.get(ENV_MAX_BYTES).and_then(|v| v.parse().ok());
        Recording {
            redactor,
            max_bytes,
        }
    }

    /// A variable's value; empty counts as unset.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// True when the mode applies to `server` (`MCPTAPE_SERVERS` unset, or naming it).
    pub fn covers(&self, server: &str) -> bool {
        self.get(ENV_SERVERS)
            .is_none_or(|list| list.split(',').any(|s| s.trim() == server))
    }

    /// True when this environment says something about the mode (even "off").
    fn decides(&self) -> bool {
        self.vars.contains_key(ENV_RECORD) || self.vars.contains_key(ENV_REPLAY)
    }
}

/// The tape a SESSION argument names, in our own `MCPTAPE_HOME` and working directory.
pub fn session_path(arg: &str) -> Result<PathBuf> {
    let own = own()?;
    let home = store::home(own.get(ENV_HOME))?;
    Ok(store::resolve(arg, &home, &own.cwd)?)
}

/// Checks a server name given on the command line: not empty, no `,` (it separates
/// names in `MCPTAPE_SERVERS`), no control characters.
pub fn check_server_name(name: &str) -> Result<()> {
    if name.is_empty() || name.contains(',') || name.chars().any(char::is_control) {
        return Err(Error::Usage(format!(
            "invalid --server `{}`: a server name is not empty and has no `,` or control characters",
            name.escape_debug()
        )));
    }
    Ok(())
}

/// Our own `MCPTAPE_*` variables. Other variables may hold any bytes and are not read
/// here; one of ours whose value is not UTF-8 is a usage error that names it.
pub fn own() -> Result<ModeEnv> {
    let mut vars = HashMap::new();
    for (key, value) in std::env::vars_os() {
        let Some(key) = key.to_str().filter(|k| k.starts_with("MCPTAPE_")) else {
            continue;
        };
        let value = value.into_string().map_err(|raw| {
            Error::Usage(format!(
                "environment variable `{key}` is not valid UTF-8 ({raw:?})"
            ))
        })?;
        vars.insert(key.to_owned(), value);
    }
    Ok(ModeEnv {
        vars,
        source: Source::Own,
        cwd: std::env::current_dir().unwrap_or_default(),
    })
}

/// The environment that decides the mode: our own when it names one, else the nearest
/// ancestor's that does (Linux), else our own (which then means passthrough).
pub fn find() -> Result<ModeEnv> {
    let mine = own()?;
    if mine.decides() {
        return Ok(mine);
    }
    Ok(ancestors().find(ModeEnv::decides).unwrap_or(mine))
}

/// Our ancestors' environments, nearest first, as far as they can be read.
fn ancestors() -> impl Iterator<Item = ModeEnv> {
    let mut pid = parent_of(std::process::id());
    std::iter::from_fn(move || {
        let current = pid.filter(|&p| p > 1 && same_user(p))?;
        pid = parent_of(current);
        Some(read_env(current))
    })
    .flatten()
}

fn proc_path(pid: u32, what: &str) -> PathBuf {
    Path::new("/proc").join(pid.to_string()).join(what)
}

/// The parent pid from `/proc/<pid>/stat` (the field after the `)` that ends the name).
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(proc_path(pid, "stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

/// True when the process's real and effective uids are ours.
fn same_user(pid: u32) -> bool {
    let Ok(status) = std::fs::read_to_string(proc_path(pid, "status")) else {
        return false;
    };
    let ids: Vec<u32> = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .map(|l| {
            l.split_whitespace()
                .filter_map(|n| n.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    let ours = [
        nix::unistd::getuid().as_raw(),
        nix::unistd::geteuid().as_raw(),
    ];
    ids.len() >= 2 && ids[..2] == ours
}

fn read_env(pid: u32) -> Option<ModeEnv> {
    let raw = std::fs::read(proc_path(pid, "environ")).ok()?;
    let vars = raw
        .split(|&b| b == 0)
        .filter_map(|kv| std::str::from_utf8(kv).ok())
        .filter(|kv| kv.starts_with("MCPTAPE_"))
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    let name = std::fs::read_to_string(proc_path(pid, "comm"))
        .map(|s| s.trim().to_owned())
        .unwrap_or_default();
    Some(ModeEnv {
        vars,
        source: Source::Ancestor { pid, name },
        cwd: std::fs::read_link(proc_path(pid, "cwd")).unwrap_or_default(),
    })
}

/// Ignore globs for replay, comma-separated (set by `mcptape replay --ignore`).
pub const ENV_IGNORE: &str = "MCPTAPE_IGNORE";
/// `1`: match `initialize` strictly (set by `mcptape replay --strict-initialize`).
pub const ENV_STRICT_INITIALIZE: &str = "MCPTAPE_STRICT_INITIALIZE";
/// `1`: match any pending send entry of the burst (set by `mcptape replay --unordered`).
pub const ENV_UNORDERED: &str = "MCPTAPE_UNORDERED";
/// The matching mode, `strict`, `unordered` or `any` (set by `mcptape replay --match`).
pub const ENV_MATCH: &str = "MCPTAPE_MATCH";
/// `1`: unused recorded requests fail an `any` replay (set by `replay --fail-on-unused`).
pub const ENV_FAIL_ON_UNUSED: &str = "MCPTAPE_FAIL_ON_UNUSED";
/// The record mode, `none`, `once`, `new` or `all` (`mcptape replay --record-mode`); the
/// proxies under `replay` read `new` from it.
pub const ENV_MODE: &str = "MCPTAPE_MODE";
/// Fault rules, a JSON array of texts or one a line (set by `record`/`replay --fault` for the proxies below).
pub const ENV_FAULT: &str = "MCPTAPE_FAULT";
/// A fault rules file's absolute path (set by `record`/`replay --faults`).
pub const ENV_FAULTS: &str = "MCPTAPE_FAULTS";
/// A policy file's absolute path (`--policy`, set by `record --policy`).
pub const ENV_POLICY: &str = "MCPTAPE_POLICY";
/// `--approval-timeout` in seconds (set by `record --approval-timeout`).
pub const ENV_APPROVAL_TIMEOUT: &str = "MCPTAPE_APPROVAL_TIMEOUT";
/// `1`: `--commit` (set by `record --commit`).
pub const ENV_COMMIT: &str = "MCPTAPE_COMMIT";
/// `1`: `--redact-results` (set by `record --redact-results`).
pub const ENV_REDACT_RESULTS: &str = "MCPTAPE_REDACT_RESULTS";

/// A matching mode's name as `--match` spells it.
fn parse_match(v: &str) -> Option<cli::MatchMode> {
    <cli::MatchMode as clap::ValueEnum>::from_str(v, true).ok()
}

/// `1`: compare `params._meta` when matching (set by `mcptape replay --match-meta`).
pub const ENV_MATCH_META: &str = "MCPTAPE_MATCH_META";
/// `1`: keep the recorded delays (set by `mcptape replay --pace`).
pub const ENV_PACE: &str = "MCPTAPE_PACE";
/// `1`: never give a server request the tape holds no answer to (set by
/// `mcptape replay --skip-unanswered-requests`).
pub const ENV_SKIP_UNANSWERED: &str = "MCPTAPE_SKIP_UNANSWERED";

/// Environment variable: the most bytes a tape may grow to (set by `record --max-bytes`).
pub const ENV_MAX_BYTES: &str = "MCPTAPE_MAX_BYTES";

/// How a recording is made.
#[derive(Debug, Clone)]
pub struct Recording {
    /// The redaction rules.
    pub redactor: Redactor,
    /// The most bytes the tape may grow to.
    pub max_bytes: Option<u64>,
}

/// What a proxy (or `call`) does with the traffic.
#[derive(Debug)]
pub enum Mode {
    /// Relay only.
    Passthrough,
    /// Relay and record.
    Record {
        /// The tape.
        tape: PathBuf,
        /// Where to report a problem to the `record` parent.
        report: Option<PathBuf>,
        /// Where the mode came from, for stderr.
        source: String,
        /// Redaction and size limit.
        recording: Recording,
    },
    /// Recording was asked for by the environment but cannot happen: the session goes on
    /// unrecorded (a proxy left in an agent's config must never break it), with a warning
    /// and a report to the `record` parent.
    RecordFailed {
        /// Why.
        error: Error,
        /// Where to report it to the `record` parent.
        report: Option<PathBuf>,
    },
    /// Answer from a tape; start no server.
    Replay {
        /// The tape.
        tape: PathBuf,
        /// Where to leave the verdict for the `replay` parent.
        report: Option<PathBuf>,
        /// Where the mode came from, for stderr.
        source: String,
        /// How to match.
        settings: ReplaySettings,
    },
}

/// Where a mode came from, for stderr.
fn describe(source: &Source, var: &str) -> String {
    match source {
        Source::Own => format!("{var} is set in its own environment"),
        other => format!("{var} from the {other}"),
    }
}

/// How replay matches the client's messages and paces the server's: the flags
/// (`cli::Matching`) with the mode's environment (set by `mcptape replay`) added.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplaySettings {
    /// Paths left out when matching (globs, as given).
    pub ignore: Vec<String>,
    /// Match `initialize` on params too.
    pub strict_initialize: bool,
    /// How client messages are matched (`--match`; `--unordered` is `unordered`).
    pub matching: cli::MatchMode,
    /// With `--match any`, unused recorded requests fail the verdict.
    pub fail_on_unused: bool,
    /// Keep the recorded delays.
    pub pace: bool,
    /// Compare `_meta` too.
    pub match_meta: bool,
    /// Never give a server request the tape holds no answer to.
    pub skip_unanswered: bool,
    /// `MCPTAPE_MODE=new`: what does not match goes to the real server and is added to
    /// the tape ([`crate::upstream::fallback`]).
    pub record_new: bool,
}

impl From<&cli::Matching> for ReplaySettings {
    fn from(flags: &cli::Matching) -> ReplaySettings {
        ReplaySettings {
            ignore: flags.ignore.clone(),
            strict_initialize: flags.strict_initialize,
            matching: match (flags.match_mode, flags.unordered) {
                (Some(m), _) => m,
                (None, true) => cli::MatchMode::Unordered,
                (None, false) => cli::MatchMode::Strict,
            },
            fail_on_unused: flags.fail_on_unused,
            pace: flags.pace,
            match_meta: flags.match_meta,
            skip_unanswered: flags.skip_unanswered_requests,
            record_new: false,
        }
    }
}

impl ReplaySettings {
    /// The replay engine's options; a glob that does not parse is a usage error.
    pub fn options(&self) -> Result<crate::upstream::replay::Options> {
        let globs = matcher::parse_globs(&self.ignore).map_err(Error::Usage)?;
        Ok(crate::upstream::replay::Options {
            matcher: Matcher::new(globs, self.strict_initialize).match_meta(self.match_meta),
            matching: self.matching,
            fail_on_unused: self.fail_on_unused,
            skip_unanswered: self.skip_unanswered,
        })
    }

    /// These settings with the mode's environment (set by `mcptape replay`) added.
    fn with_env(&self, env: &ModeEnv) -> ReplaySettings {
        // Off for the words clap's own reading of `MCPTAPE_MATCH_META` takes as false.
        let off = |v: &str| {
            matches!(
                v.to_ascii_lowercase().as_str(),
                "0" | "n" | "no" | "f" | "false" | "off"
            )
        };
        let flag = |name| env.get(name).is_some_and(|v| !off(v));
        let mut ignore: Vec<String> = env
            .get(ENV_IGNORE)
            .map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|g| !g.is_empty())
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default();
        ignore.extend(self.ignore.iter().cloned());
        let record_new = self.record_new || env.get(ENV_MODE) == Some("new");
        ReplaySettings {
            ignore,
            strict_initialize: self.strict_initialize || flag(ENV_STRICT_INITIALIZE),
            matching: if self.matching != cli::MatchMode::Strict {
                self.matching
            } else if let Some(m) = env.get(ENV_MATCH).and_then(parse_match) {
                m
            } else if flag(ENV_UNORDERED) {
                cli::MatchMode::Unordered
            } else if record_new {
                // `new` implies `any`, as `replay --record-mode new` says.
                cli::MatchMode::Any
            } else {
                cli::MatchMode::Strict
            },
            fail_on_unused: self.fail_on_unused || flag(ENV_FAIL_ON_UNUSED),
            pace: self.pace || flag(ENV_PACE),
            match_meta: self.match_meta || flag(ENV_MATCH_META),
            skip_unanswered: self.skip_unanswered || flag(ENV_SKIP_UNANSWERED),
            record_new,
        }
    }
}

/// Decides what a proxy or `call` does for `server`: the flags first, then the
/// environment (own or nearest ancestor's, see the module doc).
pub fn decide(
    record: Option<&str>,
    replay: Option<&str>,
    matching: &ReplaySettings,
    no_redact: bool,
    server: &str,
) -> Result<Mode> {
    let own = own()?;
    match (record, replay) {
        (Some(_), Some(_)) => {
            return Err(Error::Usage(
                "--record and --replay exclude each other".into(),
            ));
        }
        (Some(session), None) => {
            let home = store::home(own.get(ENV_HOME))?;
            let tape = store::resolve(session, &home, &own.cwd)?;
            return Ok(Mode::Record {
                recording: own.recording(no_redact, &tape),
                tape,
                report: None,
                source: "--record".into(),
            });
        }
        (None, Some(session)) => {
            let home = store::home(own.get(ENV_HOME))?;
            return Ok(Mode::Replay {
                tape: store::resolve(session, &home, &own.cwd)?,
                report: None,
                source: "--replay".into(),
                settings: matching.with_env(&own),
            });
        }
        (None, None) => {}
    }
    let env = find()?;
    if !env.covers(server) {
        return Ok(Mode::Passthrough);
    }
    let report = env.get(ENV_REPORT).map(PathBuf::from);
    let home = match store::home(env.get(ENV_HOME)) {
        Ok(home) => home,
        Err(e) if env.get(ENV_REPLAY).is_none() => {
            return Ok(Mode::RecordFailed {
                error: e.into(),
                report,
            });
        }
        Err(e) => return Err(e.into()),
    };
    match (env.get(ENV_RECORD), env.get(ENV_REPLAY)) {
        (Some(_), Some(_)) => Err(Error::Usage(format!(
            "both {ENV_RECORD} and {ENV_REPLAY} are set in the {}; set one",
            env.source
        ))),
        (Some(session), None) => Ok(match store::resolve(session, &home, &env.cwd) {
            Ok(tape) => Mode::Record {
                recording: env.recording(no_redact, &tape),
                tape,
                report,
                source: describe(&env.source, ENV_RECORD),
            },
            Err(e) => Mode::RecordFailed {
                error: e.into(),
                report,
            },
        }),
        (None, Some(session)) => Ok(Mode::Replay {
            tape: store::resolve(session, &home, &env.cwd)?,
            report,
            source: describe(&env.source, ENV_REPLAY),
            settings: matching.with_env(&env),
        }),
        (None, None) => Ok(Mode::Passthrough),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_parent_is_of_our_user() {
        let parent = parent_of(std::process::id()).expect("parent");
        assert!(same_user(parent));
        assert!(!same_user(u32::MAX), "no such process");
    }

    #[test]
    fn reads_our_parent() {
        // The test runner's parent chain exists; our parent is not us.
        let parent = parent_of(std::process::id()).expect("parent");
        assert_ne!(parent, std::process::id());
    }

    #[test]
    fn servers_filter() {
        let mut env = ModeEnv {
            vars: HashMap::new(),
            source: Source::Own,
            cwd: PathBuf::new(),
        };
        assert!(env.covers("a"));
        env.vars.insert(ENV_SERVERS.into(), "a, b".into());
        assert!(env.covers("b"));
        assert!(!env.covers("c"));
    }
}
