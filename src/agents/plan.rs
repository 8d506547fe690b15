//! One config file's plan: the new text `install` or `uninstall` would write, and what it
//! did to each entry. Planning reads and computes only; `cmd/install.rs` writes.
//!
//! Edits go through the file's [`Document`] one member at a time, the text read again
//! after each, so members added, replaced and removed in one entry never overlap; the
//! file is still written once, however many entries and containers changed.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::agents::agent::{self, ConfigFile, Place};
use crate::agents::dialect::Dialect;
use crate::agents::document::{DocError, Edit, Entry, Format, apply_edits};
use crate::agents::error::AgentError;
use crate::agents::record::{InstallRecord, RecordedEntry};
use crate::agents::wrap::{self, Member, Wrap};
use crate::cli::{AgentName, Scope};

/// One config file of one agent, with every container of it in the chosen scopes.
#[derive(Debug, Clone)]
pub struct Target {
    /// Whose file.
    pub agent: AgentName,
    /// Where it is.
    pub path: PathBuf,
    /// Its format.
    pub format: Format,
    /// How its entries are spelled.
    pub dialect: Dialect,
    /// Its containers, each with its scope.
    pub containers: Vec<(Scope, Vec<String>)>,
}

/// The files of `agents` in `scope` (both when `None`), one [`Target`] per file.
pub fn targets(agents: &[AgentName], scope: Option<Scope>, place: &Place) -> Vec<Target> {
    let mut out: Vec<Target> = Vec::new();
    for &name in agents {
        for ConfigFile {
            agent,
            scope: s,
            path,
            format,
            containers,
            dialect,
        } in agent::files(name, place)
        {
            if scope.is_some_and(|want| want != s) {
                continue;
            }
            let with_scope = containers.into_iter().map(|c| (s, c));
            let same = |t: &Target| t.agent == agent && same_file(&t.path, &path);
            match out.iter_mut().find(|t| same(t)) {
                Some(t) => {
                    for (s, c) in with_scope {
                        match t.containers.iter_mut().find(|(_, have)| *have == c) {
                            // One file both scopes name (`~/.cursor/mcp.json` from
                            // `$HOME`): one container, shown as user.
                            Some(have) if s == Scope::User => have.0 = s,
                            Some(_) => {}
                            None => t.containers.push((s, c)),
                        }
                    }
                }
                None => out.push(Target {
                    agent,
                    path,
                    format,
                    dialect,
                    containers: with_scope.collect(),
                }),
            }
        }
    }
    out
}

/// Whether `a` and `b` are one file: equal paths, or equal once canonical (a file that
/// does not exist yet is only its path).
fn same_file(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// What happened to one entry.
#[derive(Debug, Clone, PartialEq)]
pub enum Fate {
    /// Wrapped by this install.
    Wrapped,
    /// Already wrapped: left as it is.
    AlreadyWrapped,
    /// Not wrapped: left as it is (uninstall).
    NotWrapped,
    /// Restored to its recorded original bytes.
    Restored,
    /// Unwrapped from the wrapper's argv (no record of it).
    Unwrapped,
    /// Left alone, for this reason.
    Skipped(String),
}

/// One entry's line in a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The entry's key.
    pub server: String,
    /// Its container's scope.
    pub scope: Scope,
    /// What happened to it.
    pub fate: Fate,
}

/// A file's plan.
#[derive(Debug, Clone)]
pub struct FilePlan {
    /// The file.
    pub target: Target,
    /// Its text as read.
    pub before: String,
    /// Its text after the plan.
    pub after: String,
    /// Per entry, what happens.
    pub entries: Vec<Outcome>,
    /// The install record after the plan.
    pub record: InstallRecord,
}

impl FilePlan {
    /// True when the file's text changes.
    pub fn changes(&self) -> bool {
        self.before != self.after
    }
}

fn parse_err(path: &Path) -> impl Fn(DocError) -> AgentError + '_ {
    move |problem| AgentError::Parse {
        path: path.to_path_buf(),
        problem,
    }
}

/// The entries of every container of `target` in `text`, each with its scope.
pub fn entries(target: &Target, text: &str) -> Result<Vec<(Scope, Entry)>, AgentError> {
    let doc = crate::agents::open(target.format, text).map_err(parse_err(&target.path))?;
    let mut out = Vec::new();
    for (scope, container) in &target.containers {
        let c: Vec<&str> = container.iter().map(String::as_str).collect();
        for entry in doc.entries(&c).map_err(parse_err(&target.path))? {
            if !entry.value.is_object() {
                return Err(AgentError::NotObject {
                    path: target.path.clone(),
                    name: entry.name().to_owned(),
                });
            }
            out.push((*scope, entry));
        }
    }
    Ok(out)
}

/// The entries of `doc` at the key paths of `paths`, looked up one container at a time,
/// each container's entries read once and found by key in O(1).
struct Lookup<'d> {
    doc: &'d dyn crate::agents::Document,
    found: Vec<(Vec<String>, Container)>,
}

/// One container's entries, and where each is by key.
struct Container {
    entries: Vec<Entry>,
    by_name: HashMap<String, usize>,
}

impl<'d> Lookup<'d> {
    fn new(doc: &'d dyn crate::agents::Document) -> Lookup<'d> {
        Lookup {
            doc,
            found: Vec::new(),
        }
    }

    /// The entry at `path` (its container, then its key).
    fn get(&mut self, path: &[String]) -> Result<&Entry, DocError> {
        let container = &path[..path.len().saturating_sub(1)];
        let at = match self.found.iter().position(|(c, _)| c == container) {
            Some(at) => at,
            None => {
                let c: Vec<&str> = container.iter().map(String::as_str).collect();
                let entries = self.doc.entries(&c)?;
                let by_name = (entries.iter().enumerate())
                    .map(|(i, e)| (e.name().to_owned(), i))
                    .collect();
                self.found
                    .push((container.to_vec(), Container { entries, by_name }));
                self.found.len() - 1
            }
        };
        let (_, Container { entries, by_name }) = &self.found[at];
        path.last()
            .and_then(|name| by_name.get(name))
            .map(|&i| &entries[i])
            .ok_or_else(|| {
                DocError::Unsupported(format!("entry `{}` went missing", path.join(".")))
            })
    }
}

/// `text` with each entry's members set in order. Round N sets every entry's Nth member
/// from one parse of the text: the edits of different entries never overlap, so a file
/// is read as many times as an entry has members, not once per member of every entry.
fn set_all(
    format: Format,
    text: &str,
    changes: &[(Vec<String>, Vec<Member>)],
) -> Result<String, DocError> {
    let mut cur = text.to_owned();
    let rounds = changes.iter().map(|(_, m)| m.len()).max().unwrap_or(0);
    for round in 0..rounds {
        let doc = crate::agents::open(format, &cur)?;
        let mut lookup = Lookup::new(doc.as_ref());
        let mut edits = Vec::new();
        for (path, members) in changes {
            if let Some((key, value)) = members.get(round) {
                let entry = lookup.get(path)?.clone();
                edits.extend(doc.set_member(&entry, key, value.as_ref())?);
            }
        }
        cur = apply_edits(&cur, edits)?;
    }
    Ok(cur)
}

/// How deep an entry's value may nest for the install record (JSON, read back with
/// serde_json's limit of 128 levels, the entry's value 3 levels down) to hold it.
const MAX_RECORD_DEPTH: usize = 120;

/// The nesting depth of `value`: 0 for a scalar, 1 for a flat object or array.
fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0)];
    while let Some((v, d)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match v {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(members) => Box::new(members.values()),
            _ => continue,
        };
        deepest = deepest.max(d + 1);
        stack.extend(children.map(|c| (c, d + 1)));
    }
    deepest
}

/// [`wrap::wrap`], but an entry the install record could not hold is skipped (its
/// record could not be read back, and uninstall would fail for good).
fn wrap_within_record(value: &Value, key: &str, d: &Dialect, launcher: &[String]) -> Wrap {
    match wrap::wrap(value, key, d, launcher) {
        Wrap::Members(_) if depth(value) > MAX_RECORD_DEPTH => Wrap::Skip(format!(
            "nested deeper than {MAX_RECORD_DEPTH} levels, more than the install record holds"
        )),
        other => other,
    }
}

fn chosen(servers: &[String], name: &str) -> bool {
    servers.is_empty() || servers.iter().any(|s| s == name)
}

/// The install plan of `target` (text `before`): each chosen entry wrapped to start
/// through `launcher`, and the record updated with what was wrapped.
pub fn install(
    target: &Target,
    before: &str,
    launcher: &[String],
    servers: &[String],
    record: Option<InstallRecord>,
) -> Result<FilePlan, AgentError> {
    let mut record = record.unwrap_or_else(|| InstallRecord::new(&target.path));
    let mut outcomes = Vec::new();
    let mut changes: Vec<(Vec<String>, Vec<Member>)> = Vec::new();
    let mut originals: Vec<String> = Vec::new();
    for (scope, entry) in entries(target, before)? {
        let server = entry.name().to_owned();
        if !chosen(servers, &server) {
            continue;
        }
        let fate = match wrap_within_record(&entry.value, &server, &target.dialect, launcher) {
            Wrap::Wrapped => Fate::AlreadyWrapped,
            Wrap::Skip(why) => Fate::Skipped(why),
            Wrap::Members(members) => {
                originals.push(before[entry.span.clone()].to_owned());
                changes.push((entry.path.clone(), members));
                Fate::Wrapped
            }
        };
        outcomes.push(Outcome {
            server,
            scope,
            fate,
        });
    }
    let parse = parse_err(&target.path);
    let after = set_all(target.format, before, &changes).map_err(&parse)?;
    if !changes.is_empty() {
        let doc = crate::agents::open(target.format, &after).map_err(&parse)?;
        let mut lookup = Lookup::new(doc.as_ref());
        let mut wrapped = Vec::new();
        for ((path, _), original) in changes.into_iter().zip(originals) {
            let installed = lookup.get(&path).map_err(&parse)?.value.clone();
            wrapped.push(RecordedEntry {
                path,
                original,
                installed,
            });
        }
        record.put_all(wrapped);
    }
    Ok(FilePlan {
        target: target.clone(),
        before: before.to_owned(),
        after,
        entries: outcomes,
        record,
    })
}

/// The uninstall plan of `target`: each chosen wrapped entry restored to its recorded
/// bytes when it still equals what install wrote, unwrapped from its argv when there is
/// no record of it, and left alone (with the reason) when it was edited since.
pub fn uninstall(
    target: &Target,
    before: &str,
    servers: &[String],
    record: Option<InstallRecord>,
) -> Result<FilePlan, AgentError> {
    let mut record = record.unwrap_or_else(|| InstallRecord::new(&target.path));
    let mut outcomes = Vec::new();
    // Restores replace whole entries of `before` (disjoint spans, applied together);
    // unwraps then set members of the restored text.
    let mut restores = Vec::new();
    let mut unwraps: Vec<(Vec<String>, Vec<Member>)> = Vec::new();
    let mut done: HashSet<Vec<String>> = HashSet::new();
    let recorded: HashMap<&[String], &RecordedEntry> = (record.entries.iter())
        .map(|e| (e.path.as_slice(), e))
        .collect();
    for (scope, entry) in entries(target, before)? {
        let server = entry.name().to_owned();
        if !chosen(servers, &server) {
            continue;
        }
        let recorded = recorded.get(entry.path.as_slice()).copied().cloned();
        let is_wrapped = wrap::wrapped(&entry.value, &target.dialect).is_some();
        let fate = match (recorded, is_wrapped) {
            (Some(rec), _) if rec.installed == entry.value => {
                restores.push(Restore {
                    outcome: outcomes.len(),
                    path: entry.path.clone(),
                    edit: Edit {
                        span: entry.span.clone(),
                        text: rec.original,
                    },
                });
                Fate::Restored
            }
            (Some(_), true) => Fate::Skipped(
                "edited since install (its wrapper changed); left alone, restore it by hand".into(),
            ),
            (Some(_), false) => {
                // Unwrapped by someone else: the record has nothing left to do.
                done.insert(entry.path.clone());
                Fate::NotWrapped
            }
            (None, false) => Fate::NotWrapped,
            (None, true) => match wrap::unwrap_stdio(&entry.value, &target.dialect) {
                Some(members) => {
                    unwraps.push((entry.path.clone(), members));
                    Fate::Unwrapped
                }
                None => Fate::Skipped(
                    "a wrapped remote entry with no install record (its headers are only in the record); left alone"
                        .into(),
                ),
            },
        };
        outcomes.push(Outcome {
            server,
            scope,
            fate,
        });
    }
    for at in refused_restores(target, before, &mut restores) {
        outcomes[at].fate = Fate::Skipped(
            "its install record does not hold one entry of this file (edited?); left wrapped"
                .into(),
        );
    }
    done.extend(restores.iter().map(|r| r.path.clone()));
    record.entries.retain(|e| !done.contains(&e.path));
    let parse = parse_err(&target.path);
    let edits = restores.into_iter().map(|r| r.edit).collect();
    let restored = apply_edits(before, edits).map_err(&parse)?;
    let after = set_all(target.format, &restored, &unwraps).map_err(&parse)?;
    Ok(FilePlan {
        target: target.clone(),
        before: before.to_owned(),
        after,
        entries: outcomes,
        record,
    })
}

/// A restore splices a record's `original` text, which anyone may have edited. It is
/// sound when the restored text parses, the entry there spans exactly that text (one
/// value of the file's format, nothing after it), and every other entry is unchanged.
fn restores_sound(target: &Target, before: &str, restores: &[Restore]) -> bool {
    let Ok(old) = entries(target, before) else {
        return false;
    };
    let edits: Vec<Edit> = restores.iter().map(|r| r.edit.clone()).collect();
    let Some(new) = apply_edits(before, edits)
        .ok()
        .and_then(|text| entries(target, &text).ok())
    else {
        return false;
    };
    if new.len() != old.len() {
        return false;
    }
    // Where each restored entry must start in the new text: edits are applied in
    // position order, each shifting what follows by its change of length.
    let mut order: Vec<&Restore> = restores.iter().collect();
    order.sort_by_key(|r| r.edit.span.start);
    let mut shift: isize = 0;
    let mut spans: HashMap<&[String], Option<std::ops::Range<usize>>> = HashMap::new();
    for Restore { path, edit: e, .. } in order {
        let start = e.span.start.checked_add_signed(shift);
        spans.insert(path, start.map(|s| s..s + e.text.len()));
        shift += e.text.len() as isize - e.span.len() as isize;
    }
    old.iter().zip(&new).all(|((_, o), (_, n))| {
        if o.path != n.path {
            return false;
        }
        match spans.get(o.path.as_slice()) {
            Some(span) => span.as_ref() == Some(&n.span),
            None => o.value == n.value,
        }
    })
}

/// One entry to restore from its install record.
struct Restore {
    /// Its line in the plan's outcomes.
    outcome: usize,
    /// Its key path.
    path: Vec<String>,
    /// Its recorded original over its wrapped text.
    edit: Edit,
}

/// Keeps in `restores` only the sound ones (all of them, checked with one parse, when
/// they are); returns the outcome lines of those it refused.
fn refused_restores(target: &Target, before: &str, restores: &mut Vec<Restore>) -> Vec<usize> {
    if restores.is_empty() || restores_sound(target, before, restores) {
        return Vec::new();
    }
    let mut refused = Vec::new();
    restores.retain(|r| {
        let sound = restores_sound(target, before, std::slice::from_ref(r));
        if !sound {
            refused.push(r.outcome);
        }
        sound
    });
    refused
}

/// Whether an entry's value is wrapped, for `--list`.
pub fn is_wrapped(value: &Value, dialect: &Dialect) -> bool {
    wrap::wrapped(value, dialect).is_some()
}
