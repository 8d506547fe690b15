//! Where an agent's transcripts are: the files a PATH argument names (a file as it is, a
//! directory walked), or the agent's usual place.
//!
//! A walk takes `*.jsonl` files, goes at most [`MAX_DEPTH`] directories down, follows no
//! symlink (to a file or a directory) and skips the directories a session keeps beside
//! its transcript (`subagents/`, read with their session, and `tool-results/`). Files come
//! sorted by path, so every run lists them in one order.

use std::path::{Path, PathBuf};

use crate::import::ImportError;

/// How deep a walk goes below the directory named: `projects/<project>/<session>.jsonl`
/// is two levels, Codex's `sessions/YYYY/MM/DD/rollout-….jsonl` four.
pub const MAX_DEPTH: usize = 4;
/// Directories beside a session that are not sessions of their own.
const NOT_SESSIONS: &[&str] = &["subagents", "tool-results"];

/// Claude Code's transcripts directories: `$CLAUDE_CONFIG_DIR/projects` when it is set;
/// else `~/.claude/projects` and, where older versions kept them,
/// `$XDG_CONFIG_HOME/claude/projects` (`~/.config/claude/projects`) — those that exist,
/// or the first when none does.
pub fn claude_projects(get: &dyn Fn(&str) -> Option<String>) -> Result<Vec<PathBuf>, ImportError> {
    if let Some(dir) = get("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Ok(vec![PathBuf::from(dir).join("projects")]);
    }
    let home = get("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(dirs::home_dir)
        .ok_or(ImportError::NoPlace {
            agent: "Claude Code",
            why: "neither CLAUDE_CONFIG_DIR nor HOME is set".into(),
        })?;
    let config = get("XDG_CONFIG_HOME")
        .filter(|d| !d.is_empty())
        .map_or_else(|| home.join(".config"), PathBuf::from);
    let all = [
        home.join(".claude").join("projects"),
        config.join("claude").join("projects"),
    ];
    let found: Vec<PathBuf> = all.iter().filter(|d| d.is_dir()).cloned().collect();
    Ok(if found.is_empty() {
        all[..1].to_vec()
    } else {
        found
    })
}

/// The transcript files `paths` name: each file as it is (whatever its name), each
/// directory walked. A path that does not exist is an error naming it.
pub fn transcripts(paths: &[PathBuf]) -> Result<Vec<PathBuf>, ImportError> {
    let mut out = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|source| ImportError::Read {
            path: path.clone(),
            source,
        })?;
        if meta.is_dir() {
            walk(path, 0, &mut out).map_err(|source| ImportError::Read {
                path: path.clone(),
                source,
            })?;
        } else {
            out.push(path.clone());
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.filter_map(|e| e.ok()).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        // The entry's own type: a symlink is neither a file nor a directory here.
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_file() && path.extension().is_some_and(|x| x == "jsonl") {
            out.push(path);
        } else if kind.is_dir()
            && depth < MAX_DEPTH
            && !NOT_SESSIONS.iter().any(|n| entry.file_name() == *n)
        {
            walk(&path, depth + 1, out)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_walk_takes_sessions_and_leaves_their_side_directories() {
        let dir = tempfile::tempdir().expect("tempdir");
        let project = dir.path().join("-tmp-work");
        std::fs::create_dir_all(project.join("s1/subagents")).expect("mkdir");
        std::fs::create_dir_all(project.join("s1/tool-results")).expect("mkdir");
        for f in [
            "s1.jsonl",
            "s2.jsonl",
            "notes.txt",
            "s1/subagents/agent-a.jsonl",
        ] {
            std::fs::write(project.join(f), "").expect("write");
        }
        std::os::unix::fs::symlink(project.join("s2.jsonl"), project.join("s3.jsonl"))
            .expect("symlink");
        let found = transcripts(&[dir.path().to_path_buf()]).expect("found");
        assert_eq!(found, [project.join("s1.jsonl"), project.join("s2.jsonl")]);
        let err = transcripts(&[dir.path().join("nope")]).expect_err("missing");
        assert!(err.to_string().contains("nope"), "{err}");
    }

    #[test]
    fn claude_code_config_dir_is_honoured() {
        let get = |k: &str| match k {
            "CLAUDE_CONFIG_DIR" => Some("/c".to_owned()),
            "HOME" => Some("/h".to_owned()),
            _ => None,
        };
        assert_eq!(
            claude_projects(&get).expect("dir"),
            [Path::new("/c/projects")]
        );
        let get = |k: &str| (k == "HOME").then(|| "/nonexistent-h".to_owned());
        assert_eq!(
            claude_projects(&get).expect("dir"),
            [Path::new("/nonexistent-h/.claude/projects")]
        );
        let home = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(home.path().join(".config/claude/projects")).expect("mkdir");
        let h = home.path().to_string_lossy().into_owned();
        let get = move |k: &str| (k == "HOME").then(|| h.clone());
        assert_eq!(
            claude_projects(&get).expect("dir"),
            [home.path().join(".config/claude/projects")]
        );
    }
}
