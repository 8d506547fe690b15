//! A tape that does not exist, said helpfully: the closest session of its directory
//! ("did you mean `demo`?", by edit distance with [`strsim`], the crate clap uses for the
//! same hint), or a few of the sessions there when none is close, or that there are none.
//!
//! The directory is read when the error is made, once; a directory that cannot be read
//! counts as empty. `.prev` tapes are left out (they are kept copies, not sessions one
//! means), unless the name asked for is one.

use std::path::Path;

use super::store::EXTENSION;

/// How many sessions are named when none is close.
const LISTED: usize = 5;

/// The session name a tape path shows: its file name without `.ndjson`.
pub fn stem(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name.strip_suffix(&format!(".{EXTENSION}"))
        .map(str::to_owned)
        .unwrap_or(name)
}

/// The directory a tape path is in, as shown.
pub fn dir(path: &Path) -> String {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .display()
        .to_string()
}

/// What to say after "no tape `x` in `dir`": the closest session, a few sessions, or
/// that there are none.
pub fn hint(path: &Path) -> String {
    let want = stem(path);
    let names = sessions(path, want.ends_with(".prev"));
    if let Some(best) = closest(&want, &names) {
        return format!("did you mean `{best}`?");
    }
    match names.len() {
        0 => "no tape is recorded there yet (`mcptape record NAME -- CMD` records one)".into(),
        n => {
            let shown: Vec<String> = names
                .iter()
                .take(LISTED)
                .map(|n| format!("`{n}`"))
                .collect();
            let more = match n.saturating_sub(LISTED) {
                0 => String::new(),
                m => format!(" and {m} more"),
            };
            format!(
                "it holds {}{more} (`mcptape list` shows the recorded sessions)",
                shown.join(", ")
            )
        }
    }
}

/// The sessions beside `path`, sorted.
fn sessions(path: &Path, with_prev: bool) -> Vec<String> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = read
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix(&format!(".{EXTENSION}"))
                .map(str::to_owned)
        })
        .filter(|n| with_prev || !n.ends_with(".prev"))
        .collect();
    names.sort();
    names
}

/// The name nearest to `want`, if one is near enough: at most a third of its characters
/// (at least one) edited, transpositions counting once, or one a prefix of the other.
fn closest<'a>(want: &str, names: &'a [String]) -> Option<&'a str> {
    let limit = (want.chars().count() / 3).max(1);
    names
        .iter()
        .filter(|n| n.as_str() != want)
        .map(|n| (strsim::damerau_levenshtein(want, n), n))
        .filter(|(d, n)| *d <= limit || (want.len() >= 3 && n.starts_with(want)))
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_nearest_name_is_proposed() {
        let list = names(&["alpha", "demo", "release-1"]);
        assert_eq!(closest("demp", &list), Some("demo"));
        assert_eq!(closest("dmeo", &list), Some("demo"));
        assert_eq!(closest("release1", &list), Some("release-1"));
        assert_eq!(closest("rel", &list), Some("release-1"));
        assert_eq!(closest("zzzz", &list), None);
    }

    #[test]
    fn the_hint_names_a_few_sessions_or_none() {
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = dir.path().join("zzzz.ndjson");
        assert!(hint(&missing).contains("no tape is recorded there yet"));
        for n in ["a1", "b2", "c3", "d4", "e5", "f6", "demo.prev"] {
            std::fs::write(dir.path().join(format!("{n}.ndjson")), "").expect("write");
        }
        let h = hint(&missing);
        assert!(h.contains("`a1`, `b2`, `c3`, `d4`, `e5` and 1 more"), "{h}");
        assert!(!h.contains("prev"), "{h}");
        assert_eq!(hint(&dir.path().join("b3.ndjson")), "did you mean `b2`?");
    }
}
