//! `$note` entries: text a person or a hook adds to a tape (`mcptape note`, `record
//! --note`), shown as headings by `show` and `view`.
//!
//! A note is a lifecycle entry of no connection: its `_meta` has `dir: lifecycle`, an empty
//! `server` and its time, and no `conn`, so that no reader counts it as a connection
//! ([`crate::tape::group`]) and replay never waits for it. It is written like any entry:
//! one append under the tape's lock, so a note is safe while proxies are recording into the
//! same tape, redacted like a recording (a pasted token does not reach the tape).

use std::path::Path;
use std::time::SystemTime;

use crate::redact::Redactor;
use crate::tape::format::{self, Direction, Meta};
use crate::tape::lifecycle::{Lifecycle, Note};
use crate::tape::{TapeError, TapeWriter};

/// The longest note, in bytes of UTF-8: a heading, not a document.
pub const MAX_NOTE_BYTES: usize = 16 * 1024;

/// Why a note's text is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoteError {
    /// Nothing but whitespace.
    #[error("a note needs some text")]
    Empty,
    /// Over [`MAX_NOTE_BYTES`].
    #[error("a note is at most {MAX_NOTE_BYTES} bytes; this one has {0}")]
    TooLong(usize),
}

/// Checks a note's text: not blank, at most [`MAX_NOTE_BYTES`].
pub fn check(text: &str) -> Result<(), NoteError> {
    if text.trim().is_empty() {
        return Err(NoteError::Empty);
    }
    if text.len() > MAX_NOTE_BYTES {
        return Err(NoteError::TooLong(text.len()));
    }
    Ok(())
}

/// The tape line (with `\n`) of a note written at `at`, its text redacted by `redactor`.
pub fn line(text: &str, at: SystemTime, redactor: &Redactor) -> Vec<u8> {
    let event = Lifecycle::Note(Note {
        text: text.to_owned(),
    });
    let message = format::lifecycle_message(event.kind().as_str(), &event.params());
    let meta = Meta {
        dir: Direction::Lifecycle,
        server: String::new(),
        ts: Some(format::timestamp(at)),
        conn: None,
        batch: None,
        stream: None,
        source: None,
    };
    format::encode(redactor.message(&message).as_bytes(), &meta)
}

/// Appends a note to the tape at `path` (created if missing, under the tape rules: no
/// symlink, no FIFO, 0600). Returns the bytes written.
pub fn append(path: &Path, text: &str, redactor: &Redactor) -> Result<u64, TapeError> {
    let bytes = line(text, SystemTime::now(), redactor);
    let mut writer = TapeWriter::open(path)?;
    writer.append(&bytes)?;
    writer.sync()?;
    Ok(bytes.len() as u64)
}

/// The note lines of the tape at `path`, each as it is on the tape (with `\n`): what a
/// tool that writes a tape anew (`import`) carries over so that no note is lost. A tape
/// that is missing or does not load has none to carry (it is kept as `.prev` anyway).
pub fn lines_of(path: &Path) -> Vec<Vec<u8>> {
    let Ok(tape) = crate::tape::Tape::load(path) else {
        return Vec::new();
    };
    let Some(original) = tape.original() else {
        return Vec::new();
    };
    let lines: Vec<&[u8]> = original.split_inclusive(|&b| b == b'\n').collect();
    tape.notes()
        .into_iter()
        .filter_map(|i| lines.get(tape.entries[i].line - 1))
        .map(|l| {
            let mut l = l.to_vec();
            if !l.ends_with(b"\n") {
                l.push(b'\n');
            }
            l
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tape::Tape;

    #[test]
    fn a_note_is_in_no_connection_and_reads_back_as_written() {
        let at = humantime::parse_rfc3339("2026-12-02T10:00:00.250Z").expect("a time");
        let text = "step 2: </script> \u{1b}[31m red";
        let mut bytes = line(text, at, &Redactor::new(&[]));
        bytes.extend_from_slice(
            br#"{"jsonrpc":"2.0","method":"$transport/start","params":{},"_meta":{"dir":"lifecycle","server":"s","conn":"c"}}"#,
        );
        bytes.push(b'\n');
        bytes.extend(line("after", at, &Redactor::new(&[])));
        let tape = Tape::parse(Path::new("t.ndjson"), &bytes).expect("a tape");
        assert_eq!(
            tape.connections().len(),
            1,
            "the notes are in no connection"
        );
        assert_eq!(tape.connections()[0].entries, [1]);
        let notes: Vec<_> = tape
            .notes()
            .into_iter()
            .map(|i| Lifecycle::of(&tape.entries[i]))
            .collect();
        assert_eq!(
            notes,
            [
                Some(Lifecycle::Note(Note { text: text.into() })),
                Some(Lifecycle::Note(Note {
                    text: "after".into()
                }))
            ]
        );
        assert_eq!(
            tape.entries[0].meta.ts.as_deref(),
            Some("2026-12-02T10:00:00.250Z")
        );
    }

    #[test]
    fn a_secret_in_a_note_is_redacted_and_blank_or_huge_notes_are_refused() {
        let at = SystemTime::UNIX_EPOCH;
        let bytes = line(
            "token Bearer abcdefghijklmnopqrstuvwxyz0123456789",
            at,
            &Redactor::new(&[]),
        );
        let text = String::from_utf8(bytes).expect("utf-8");
        assert!(!text.contains("abcdefghijklmnop"), "{text}");
        assert!(text.contains("[REDACTED]"), "{text}");
        assert_eq!(check("  \n"), Err(NoteError::Empty));
        let long = "x".repeat(MAX_NOTE_BYTES + 1);
        assert_eq!(check(&long), Err(NoteError::TooLong(MAX_NOTE_BYTES + 1)));
        assert_eq!(check("ok"), Ok(()));
    }
}
