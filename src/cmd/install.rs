//! `mcptape install` and `mcptape uninstall`: wrap the servers of agents' configs with
//! `mcptape proxy`, and restore them.
//!
//! Each chosen config file is read once, planned ([`crate::agents::plan`]), and — unless
//! `--dry-run` or nothing changes — backed up, written once by an atomic rename, and its
//! install record saved. A file that fails stops the command before the files after it;
//! the files before it stay done (each is whole: a backup and a record of its own).

use std::io::Write;
use std::path::PathBuf;

use crate::agents::agent::{self, Place};
use crate::agents::plan::{self, Fate, FilePlan, Target};
use crate::agents::{record, write};
use crate::cli::{AgentName, Install, Scope, Targets, Uninstall};
use crate::error::{Error, Result};
use crate::outcome::Outcome;
use crate::table::{Align, Table};
use crate::term;

/// A line of the report on stderr. A closed stderr (`2>&1 | true`) loses the report but
/// never panics, as `eprintln!` would: the command still does its work and ends as usual.
macro_rules! say {
    ($($arg:tt)*) => {
        crate::style::eprint(&format!("{}\n", format_args!($($arg)*)))
    };
}

/// What the command does to each file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Job<'a> {
    Install { launcher: &'a [String] },
    Uninstall,
}

/// The place, the backups directory and the files of `targets` that exist, with text.
struct Found {
    place: Place,
    backups: PathBuf,
    files: Vec<(Target, String)>,
}

fn find(t: &Targets) -> Result<Found> {
    let home = dirs::home_dir()
        .ok_or_else(|| Error::Usage("cannot tell the home directory (HOME)".into()))?;
    let cwd = std::env::current_dir().map_err(|source| Error::Io {
        what: "cannot read the working directory".into(),
        source,
    })?;
    let mcptape_home = crate::tape::store::home(std::env::var("MCPTAPE_HOME").ok().as_deref())?;
    let place = Place::from_env(home, cwd);
    let agents: &[AgentName] = if t.agents.is_empty() {
        agent::ALL
    } else {
        &t.agents
    };
    let mut files = Vec::new();
    for target in plan::targets(agents, t.scope, &place) {
        if let Some(text) = write::read_config(&target.path)? {
            files.push((target, text));
        }
    }
    Ok(Found {
        place,
        backups: write::backups_dir(&mcptape_home),
        files,
    })
}

fn scope_name(s: Scope) -> &'static str {
    match s {
        Scope::User => "user",
        Scope::Project => "project",
    }
}

fn agent_name(a: AgentName) -> String {
    clap::ValueEnum::to_possible_value(&a)
        .map(|v| v.get_name().to_owned())
        .unwrap_or_default()
}

/// The launcher words of `--command`, or this binary's absolute path.
fn launcher(command: Option<&str>) -> Result<Vec<String>> {
    match command {
        Some(words) => {
            let words: Vec<String> = words.split_whitespace().map(str::to_owned).collect();
            if words.is_empty() {
                return Err(Error::Usage("--command is empty".into()));
            }
            Ok(words)
        }
        None => {
            let exe = std::env::current_exe().map_err(|source| Error::Io {
                what: "cannot tell this program's path (use --command)".into(),
                source,
            })?;
            Ok(vec![exe.to_string_lossy().into_owned()])
        }
    }
}

/// Stdout, with a closed pipe reported as [`Error::Stdout`].
fn out(text: &str) -> Result<()> {
    let mut o = std::io::stdout().lock();
    o.write_all(text.as_bytes())
        .and_then(|()| o.flush())
        .map_err(Error::Stdout)
}

/// How long `--dry-run` looks for the smallest diff of one file.
const DIFF_DEADLINE: std::time::Duration = std::time::Duration::from_secs(1);

fn unified_diff(plan: &FilePlan, shown: &str) -> String {
    let sep = if shown.starts_with('/') { "" } else { "/" };
    // A diff of a file with thousands of changed entries is quadratic at worst: past the
    // deadline `similar` gives a coarser diff, still exact, instead of taking minutes.
    similar::TextDiff::configure()
        .timeout(DIFF_DEADLINE)
        .diff_lines(&plan.before, &plan.after)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a{sep}{shown}"), &format!("b{sep}{shown}"))
        .to_string()
}

fn run(t: &Targets, job: Job<'_>) -> Result<Outcome> {
    let found = find(t)?;
    let home = &found.place.home;
    let verb = match job {
        Job::Install { .. } => "install",
        Job::Uninstall => "uninstall",
    };
    if found.files.is_empty() {
        say!("mcptape {verb}: no config file of the chosen agents was found; nothing to change");
        return Ok(Outcome::Ok);
    }
    let mut plans = Vec::new();
    for (target, text) in &found.files {
        let rec_path = record::path_of(&found.backups, &target.path);
        let rec = record::load(&rec_path)?;
        let p = match job {
            Job::Install { launcher } => plan::install(target, text, launcher, &t.servers, rec)?,
            Job::Uninstall => plan::uninstall(target, text, &t.servers, rec)?,
        };
        plans.push((p, rec_path));
    }
    if let Some(missing) = t.servers.iter().find(|s| {
        !plans
            .iter()
            .any(|(p, _)| p.entries.iter().any(|e| &e.server == *s))
    }) {
        return Err(Error::Usage(format!(
            "no server `{}` in the chosen agents' config files",
            term::line(missing)
        )));
    }
    let mut changed = 0;
    for (p, rec_path) in &plans {
        let shown = agent::shown_path(&p.target.path, home);
        let agent = agent_name(p.target.agent);
        report(p, &agent, &shown, t.dry_run);
        if !p.changes() {
            continue;
        }
        changed += 1;
        if t.dry_run {
            out(&term::block(&unified_diff(p, &shown)))?;
            continue;
        }
        let backup = write::backup(&found.backups, &p.target.path, p.before.as_bytes())?;
        // The record is saved on the side that keeps it useful when the other step
        // fails: before an install's write (a record of an unwritten install is cleared
        // by the next uninstall), after an uninstall's (its entries stay until restored).
        match job {
            Job::Install { .. } => {
                record::save(rec_path, &p.record)?;
                write::replace(&p.target.path, p.after.as_bytes())?;
            }
            Job::Uninstall => {
                write::replace(&p.target.path, p.after.as_bytes())?;
                record::save(rec_path, &p.record)?;
            }
        }
        say!(
            "  backup: {}",
            term::line(&agent::shown_path(&backup, home))
        );
    }
    if changed == 0 {
        say!("mcptape {verb}: nothing to change");
    } else if t.dry_run {
        say!("mcptape {verb}: --dry-run: {changed} file(s) would change; nothing was written");
    }
    Ok(Outcome::Ok)
}

/// One line per entry on stderr: what happened to it and why.
fn report(p: &FilePlan, agent: &str, shown: &str, dry_run: bool) {
    say!("{agent} {}", term::line(shown));
    for e in &p.entries {
        let (what, why) = match &e.fate {
            Fate::Wrapped => ("wrapped", String::new()),
            Fate::AlreadyWrapped => ("already wrapped", String::new()),
            Fate::NotWrapped => ("not wrapped", String::new()),
            Fate::Restored => ("restored", String::new()),
            Fate::Unwrapped => (
                "unwrapped",
                ": note: no install record; its command was read back from the wrapper".into(),
            ),
            Fate::Skipped(why) => ("skipped", format!(": {why}")),
        };
        // A dry run says what would happen, never that it did.
        let what = match (&e.fate, dry_run) {
            (Fate::Wrapped, true) => "would wrap",
            (Fate::Restored, true) => "would restore",
            (Fate::Unwrapped, true) => "would unwrap",
            _ => what,
        };
        let warn = if matches!(e.fate, Fate::Skipped(_)) {
            "warning: "
        } else {
            ""
        };
        say!(
            "  {warn}{} ({}): {what}{}",
            term::line(&e.server),
            scope_name(e.scope),
            term::line(&why)
        );
    }
}

fn list(t: &Targets) -> Result<Outcome> {
    let found = find(t)?;
    let mut table = Table::new(&[
        ("AGENT", Align::Left),
        ("SCOPE", Align::Left),
        ("FILE", Align::Left),
        ("SERVER", Align::Left),
        ("WRAPPED", Align::Left),
    ]);
    for (target, text) in &found.files {
        let shown = agent::shown_path(&target.path, &found.place.home);
        for (scope, entry) in plan::entries(target, text)? {
            if !t.servers.is_empty() && !t.servers.iter().any(|s| s == entry.name()) {
                continue;
            }
            let wrapped = if plan::is_wrapped(&entry.value, &target.dialect) {
                "yes"
            } else {
                "no"
            };
            table.row(&[
                agent_name(target.agent),
                scope_name(scope).to_owned(),
                term::line(&shown).into_owned(),
                term::line(entry.name()).into_owned(),
                wrapped.to_owned(),
            ]);
        }
    }
    if found.files.is_empty() {
        say!("mcptape install --list: no config file of the chosen agents was found");
        return Ok(Outcome::Ok);
    }
    if table.is_empty() {
        say!("mcptape install --list: no server entry in the chosen agents' config files");
        return Ok(Outcome::Ok);
    }
    out(&table.render(""))?;
    Ok(Outcome::Ok)
}

impl Install {
    /// Wraps the chosen agents' server entries (or lists them, with `--list`).
    pub fn run(self) -> Result<Outcome> {
        if self.list {
            return list(&self.targets);
        }
        let launcher = launcher(self.command.as_deref())?;
        run(
            &self.targets,
            Job::Install {
                launcher: &launcher,
            },
        )
    }
}

impl Uninstall {
    /// Restores the wrapped entries of the chosen agents' configs.
    pub fn run(self) -> Result<Outcome> {
        run(&self.targets, Job::Uninstall)
    }
}
