//! Where Codex keeps its rollouts: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`,
//! `CODEX_HOME` defaulting to `~/.codex` (codex-rs/core `rollout/recorder.rs`). Also the
//! rollouts under paths a user names (a file is taken as it is, a directory is searched).
//!
//! The walk follows no symlink (a loop, or a link out of the tree, is not a session), goes
//! at most [`MAX_DEPTH`] levels down, and lists files in path order, which for rollouts
//! is time order. A file named on the command line is read whatever its name.

use std::path::{Path, PathBuf};

use crate::import::ImportError;

/// How many directory levels below a searched directory are looked into
/// (`sessions/YYYY/MM/DD` is three).
pub const MAX_DEPTH: usize = 8;

/// Codex's home: `$CODEX_HOME`, else `$HOME/.codex`, read through `get`.
pub fn codex_home(get: &dyn Fn(&str) -> Option<String>) -> Result<PathBuf, ImportError> {
    if let Some(dir) = get("CODEX_HOME").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    get("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(dirs::home_dir)
        .map(|home| home.join(".codex"))
        .ok_or(ImportError::NoPlace {
            agent: "Codex",
            why: "neither CODEX_HOME nor HOME is set".into(),
        })
}

/// Is `name` a rollout's file name (`rollout-….jsonl`)?
pub fn is_rollout_name(name: &str) -> bool {
    name.starts_with("rollout-") && name.ends_with(".jsonl")
}

/// The rollouts a user named: each file as it is, each directory searched.
pub fn rollouts_in(paths: &[PathBuf]) -> Result<Vec<PathBuf>, ImportError> {
    let mut out = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|source| ImportError::Read {
            path: path.clone(),
            source,
        })?;
        if meta.is_dir() {
            out.extend(rollouts_under(path)?);
        } else {
            out.push(path.clone());
        }
    }
    Ok(out)
}

/// The rollout files below `dir` (none when it does not exist).
pub fn rollouts_under(dir: &Path) -> Result<Vec<PathBuf>, ImportError> {
    let mut out = Vec::new();
    walk(dir, 0, &mut out)?;
    out.sort();
    Ok(out)
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) -> Result<(), ImportError> {
    let err = |source| ImportError::Read {
        path: dir.to_path_buf(),
        source,
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if depth == 0 && e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(err(e)),
    };
    for entry in entries {
        let entry = entry.map_err(err)?;
        let path = entry.path();
        let ty = entry.file_type().map_err(err)?;
        if ty.is_dir() {
            if depth < MAX_DEPTH {
                walk(&path, depth + 1, out)?;
            }
        } else if ty.is_file() && is_rollout_name(&entry.file_name().to_string_lossy()) {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rollouts_are_found_by_name_in_date_folders_and_nothing_else() {
        let dir = tempfile::tempdir().expect("tempdir");
        let day = dir.path().join("2025/11/20");
        std::fs::create_dir_all(&day).expect("mkdir");
        std::fs::write(day.join("rollout-2025-11-20T10-00-00-b.jsonl"), "").expect("write");
        std::fs::write(day.join("rollout-2025-11-20T09-00-00-a.jsonl"), "").expect("write");
        std::fs::write(day.join("notes.jsonl"), "").expect("write");
        std::os::unix::fs::symlink(dir.path(), day.join("loop")).expect("symlink");
        std::os::unix::fs::symlink(
            day.join("notes.jsonl"),
            day.join("rollout-2025-11-20T11-00-00-link.jsonl"),
        )
        .expect("symlink");
        let found = rollouts_under(dir.path()).expect("walk");
        let names: Vec<_> = found
            .iter()
            .map(|p| p.file_name().expect("name").to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "rollout-2025-11-20T09-00-00-a.jsonl",
                "rollout-2025-11-20T10-00-00-b.jsonl"
            ]
        );
        assert!(
            rollouts_under(&dir.path().join("absent"))
                .expect("absent")
                .is_empty()
        );
    }

    #[test]
    fn codex_home_is_the_variable_else_dot_codex_in_home() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        let set = vars(&[("CODEX_HOME", "/c"), ("HOME", "/h")]);
        assert_eq!(codex_home(&set).expect("home"), PathBuf::from("/c"));
        let empty = vars(&[("CODEX_HOME", ""), ("HOME", "/h")]);
        assert_eq!(
            codex_home(&empty).expect("home"),
            PathBuf::from("/h/.codex")
        );
    }
}
