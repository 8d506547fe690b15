//! `--update`: the recorded answers that differ, rewritten with the live ones.

use crate::error::{Result, TapeError};
use crate::message;
use crate::redact::Redactor;
use crate::tape::{Tape, safety, store};
use crate::verify::Played;

/// Rewrites the recorded answers that differ with the live ones (redacted like any
/// recording), keeping each line's `_meta`; the previous tape becomes `.prev.ndjson`. The
/// lines are the bytes the tape was loaded from ([`Tape::original`]), numbered as its
/// entries are; a tape whose file changed since is left alone.
pub(super) fn update(tape: &Tape, outcomes: &[Played]) -> Result<usize> {
    let path = tape.path.as_path();
    let (redactor, _) = Redactor::from_env(&|name| std::env::var(name).ok());
    let original = tape
        .original()
        .expect("a tape loaded from its file keeps its bytes");
    safety::check_replace(path)?;
    let now = std::fs::symlink_metadata(path)
        .map_err(|source| TapeError::Read {
            path: path.to_path_buf(),
            source,
        })?
        .len();
    let was = original.len() as u64;
    if now != was {
        return Err(TapeError::Changed {
            path: path.to_path_buf(),
            was,
            now,
        }
        .into());
    }
    let mut lines: Vec<Vec<u8>> = original
        .split_inclusive(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect();
    let mut changed = 0;
    for o in outcomes.iter().filter(|o| o.class.is_difference()) {
        let (Some(line_no), Some(live)) = (o.answer_line, &o.live) else {
            continue;
        };
        // The answer's line is an entry, so it is UTF-8.
        let Some(old) = lines
            .get(line_no - 1)
            .and_then(|l| std::str::from_utf8(l).ok())
        else {
            continue;
        };
        let body = old.trim_end_matches(['\n', '\r']);
        let Some(meta) = message::raw_member(body, &["_meta"]) else {
            continue;
        };
        let live = redactor.message(live);
        let head = live
            .trim_end()
            .strip_suffix('}')
            .unwrap_or(&live)
            .to_owned();
        lines[line_no - 1] = format!("{head},\"_meta\":{meta}}}\n").into_bytes();
        changed += 1;
    }
    store::keep_prev_copy(path, &original)?;
    store::replace_file(path, &lines.concat())?;
    Ok(changed)
}

#[cfg(test)]
mod tests;
