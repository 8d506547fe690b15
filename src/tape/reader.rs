//! Loading a tape and splitting it into connections.
//!
//! A torn line (a writer cut mid-write: [`crate::tape::torn`]) is skipped with a warning
//! naming the line and the connections that may have lost an entry there; any other
//! broken line is an error naming file and line ([`crate::tape::lines`]). Blank lines are
//! skipped.
//!
//! This loader holds every entry; it is for tools that need them all (`show`, `verify`).
//! `list` and the `replay` parent stream ([`crate::tape::census`]), and a replaying proxy
//! holds only its server's connections ([`crate::tape::served`]).
//!
//! Connections are grouped by [`crate::tape::group`].

use std::path::{Path, PathBuf};

use crate::message::Message;
use crate::progress::Progress;
use crate::tape::TapeError;
use crate::tape::format::{Cut, Meta};
use crate::tape::group::Grouper;
use crate::tape::lifecycle::LifecycleKind;
use crate::tape::lines::{self, Class};
use crate::tape::torn::{self, TornLine};

/// How many lines are parsed between two updates of a loading bar.
const PARSED_STEP: usize = 4096;

/// One line of a tape.
#[derive(Debug, Clone)]
pub struct Entry {
    /// 1-based line number in the tape.
    pub line: usize,
    /// The `_meta` member.
    pub meta: Meta,
    /// The message, exactly as it crossed the wire.
    pub message: Message,
}

/// One client↔server conversation within a tape.
#[derive(Debug, Clone)]
pub struct Connection {
    /// The connection id: `_meta.conn`, or `SERVER#N` for tapes without one.
    pub id: String,
    /// The server's name.
    pub server: String,
    /// Indexes into [`Tape::entries`], in tape order.
    pub entries: Vec<usize>,
}

/// A loaded tape.
#[derive(Debug)]
pub struct Tape {
    /// Where it was read from.
    pub path: PathBuf,
    /// Every entry, in tape order.
    pub entries: Vec<Entry>,
    /// Problems that did not stop loading (torn lines), one sentence each.
    pub warnings: Vec<String>,
    /// The torn lines skipped, with the connections that may have lost an entry there.
    pub torn: Vec<TornLine>,
    /// What the entries were parsed from, when they were.
    source: Option<Source>,
}

/// The bytes a tape was parsed from: the file's, but for the comma before each cut
/// `_meta`, overwritten by the `}` that ends the message ([`Tape::parse_owned`]).
#[derive(Debug)]
struct Source {
    bytes: bytes::Bytes,
    /// Where a `,` was overwritten.
    cuts: Vec<usize>,
}

impl Tape {
    /// Reads and parses a whole tape, opened as every reader opens one
    /// ([`lines::open`]: only a regular file is a tape).
    pub fn load(path: &Path) -> Result<Tape, TapeError> {
        Tape::load_with(path, &Progress::off())
    }

    /// [`Tape::load`] with `bar` counting the bytes read, then the bytes parsed.
    fn load_with(path: &Path, bar: &Progress) -> Result<Tape, TapeError> {
        let file = lines::open(path)?;
        // The size up front, as `read_to_end` on the file itself would reserve it: the
        // counting reader hides it, and growing by doubling could take twice the memory.
        let size = file.metadata().map_or(0, |m| m.len());
        let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        // Checked on the descriptor read here, not on the path before: no race.
        std::io::Read::read_to_end(&mut bar.reader(file), &mut bytes).map_err(|source| {
            TapeError::Read {
                path: path.to_path_buf(),
                source,
            }
        })?;
        bar.parsing();
        Tape::parse_with(path, bytes, bar)
    }

    /// [`Tape::load`] for a person (`show`, `verify`): a bar of the bytes loaded on a
    /// terminal, and on stderr what did not stop it (a torn last line).
    pub fn load_warning(path: &Path) -> Result<Tape, TapeError> {
        let size = std::fs::metadata(path).map_or(0, |m| m.len());
        let bar = Progress::file("loading", path, size);
        let tape = Tape::load_with(path, &bar);
        bar.finish();
        let tape = tape?;
        torn::print_warnings(&tape.warnings);
        Ok(tape)
    }

    /// A tape of entries made elsewhere (one server's connection, for replay): it has
    /// no [`Tape::original`] bytes.
    pub fn from_entries(path: &Path, entries: Vec<Entry>) -> Tape {
        Tape {
            path: path.to_path_buf(),
            entries,
            warnings: Vec::new(),
            torn: Vec::new(),
            source: None,
        }
    }

    /// The bytes the tape was parsed from, exactly as they were read (torn and blank
    /// lines included, the loader's cuts undone), for a command that rewrites the tape
    /// it loaded (`verify --update`): its lines are numbered as [`Entry::line`] is.
    /// `None` for a tape made [`Tape::from_entries`].
    pub fn original(&self) -> Option<Vec<u8>> {
        let source = self.source.as_ref()?;
        let mut bytes = source.bytes.to_vec();
        for &at in &source.cuts {
            bytes[at] = b',';
        }
        Some(bytes)
    }

    /// Parses tape text already in memory; `path` is used in messages.
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<Tape, TapeError> {
        Tape::parse_owned(path, bytes.to_vec())
    }

    /// Parses a tape's bytes, keeping them: each message is a slice of them (its `_meta`
    /// cut off by writing `}` over the comma before it), so a loaded tape costs about its
    /// size in memory, not twice. Torn lines ([`crate::tape::torn`]) are skipped.
    pub fn parse_owned(path: &Path, bytes: Vec<u8>) -> Result<Tape, TapeError> {
        Tape::parse_with(path, bytes, &Progress::off())
    }

    /// [`Tape::parse_owned`], `bar` at the bytes parsed every [`PARSED_STEP`] lines.
    fn parse_with(path: &Path, bytes: Vec<u8>, bar: &Progress) -> Result<Tape, TapeError> {
        // Vec → Bytes → BytesMut moves the allocation; nothing is copied.
        let mut buf = bytes::BytesMut::from(bytes::Bytes::from(bytes));
        // The entries are made as lines are read, their messages filled in from the
        // frozen buffer afterwards (`spans`, 16 bytes an entry): no second list of them.
        let mut entries: Vec<Entry> = Vec::new();
        let mut spans: Vec<(usize, usize)> = Vec::new();
        let mut torn = Vec::new();
        let mut cuts = Vec::new();
        let mut start = 0;
        let mut line = 0;
        while start < buf.len() {
            line += 1;
            if line % PARSED_STEP == 0 {
                bar.set_position(start as u64);
            }
            let end = memchr::memchr(b'\n', &buf[start..]).map_or(buf.len(), |i| start + i);
            match lines::classify(&buf[start..end], end < buf.len()) {
                Class::Blank => {}
                Class::Entry { meta, cut, lead } => {
                    let (message, span) = match cut {
                        Cut::At(i) => {
                            let at = start + lead + i;
                            buf[at] = b'}';
                            cuts.push(at);
                            (Message::new(bytes::Bytes::new()), (start + lead, at + 1))
                        }
                        Cut::Owned(m) => (Message::new(m), (0, 0)),
                    };
                    entries.push(Entry {
                        line,
                        meta,
                        message,
                    });
                    spans.push(span);
                }
                Class::Torn(reason) => torn.push((line, reason, end < buf.len())),
                Class::Bad(reason) => {
                    return Err(TapeError::BadLine {
                        path: path.to_path_buf(),
                        line,
                        reason,
                    });
                }
            }
            start = end + 1;
        }
        let shared = buf.freeze();
        for (entry, (a, b)) in entries.iter_mut().zip(spans) {
            if b > 0 {
                entry.message = Message::new(shared.slice(a..b));
            }
        }
        let mut tape = Tape {
            path: path.to_path_buf(),
            entries,
            warnings: Vec::new(),
            torn: Vec::new(),
            source: Some(Source {
                bytes: shared,
                cuts,
            }),
        };
        if !torn.is_empty() {
            let mut grouper = Grouper::default();
            for e in &tape.entries {
                grouper.add(
                    e.line,
                    &e.meta.server,
                    e.meta.conn.as_deref(),
                    LifecycleKind::of(e).as_ref(),
                );
            }
            tape.torn = torn::resolve(torn, grouper.spans());
            tape.warnings = tape.torn.iter().map(|t| t.warning(path)).collect();
        }
        Ok(tape)
    }

    /// The tape's notes (`$note` entries, in no connection): indexes into
    /// [`Tape::entries`], in tape order.
    pub fn notes(&self) -> Vec<usize> {
        (0..self.entries.len())
            .filter(|&i| LifecycleKind::of(&self.entries[i]) == Some(LifecycleKind::Note))
            .collect()
    }

    /// The tape's connections, in the order they started (notes are in none).
    pub fn connections(&self) -> Vec<Connection> {
        let mut grouper = Grouper::default();
        let mut out: Vec<Connection> = Vec::new();
        for (idx, entry) in self.entries.iter().enumerate() {
            let Some(slot) = grouper.add(
                entry.line,
                &entry.meta.server,
                entry.meta.conn.as_deref(),
                LifecycleKind::of(entry).as_ref(),
            ) else {
                continue;
            };
            if slot == out.len() {
                let span = &grouper.spans()[slot];
                out.push(Connection {
                    id: span.id.clone(),
                    server: span.server.clone(),
                    entries: Vec::new(),
                });
            }
            out[slot].entries.push(idx);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_MCPORTER: &str = concat!(
        r#"{"jsonrpc":"2.0","method":"$transport/start","_meta":{"dir":"lifecycle","server":"a"}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","_meta":{"dir":"send","server":"a"}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"$transport/close","_meta":{"dir":"lifecycle","server":"a"}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"$transport/start","_meta":{"dir":"lifecycle","server":"a"}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","_meta":{"dir":"send","server":"a"}}"#,
        "\n",
    );

    #[test]
    fn mcporter_connections_split_on_start() {
        let tape = Tape::parse(Path::new("t"), TWO_MCPORTER.as_bytes()).expect("parse");
        let conns = tape.connections();
        assert_eq!(conns.len(), 2);
        assert_eq!(conns[0].entries, vec![0, 1, 2]);
        assert_eq!(conns[1].entries, vec![3, 4]);
        assert_eq!(conns[1].id, "a#2");
    }

    #[test]
    fn interleaved_conns_stay_apart() {
        let text = concat!(
            r#"{"id":1,"method":"m","_meta":{"dir":"send","server":"a","conn":"x-1"}}"#,
            "\n",
            r#"{"id":1,"method":"m","_meta":{"dir":"send","server":"a","conn":"y-1"}}"#,
            "\n",
            r#"{"id":1,"result":{},"_meta":{"dir":"recv","server":"a","conn":"x-1"}}"#,
            "\n",
        );
        let tape = Tape::parse(Path::new("t"), text.as_bytes()).expect("parse");
        let conns = tape.connections();
        assert_eq!(conns.len(), 2);
        assert_eq!(conns[0].entries, vec![0, 2]);
    }

    #[test]
    fn torn_last_line_warns_and_keeps_the_rest() {
        let text = format!("{TWO_MCPORTER}{{\"id\":3,\"meth");
        let tape = Tape::parse(Path::new("t.ndjson"), text.as_bytes()).expect("parse");
        assert_eq!(tape.entries.len(), 5);
        assert_eq!(tape.warnings.len(), 1);
        assert!(tape.warnings[0].contains("line 6"), "{}", tape.warnings[0]);
    }

    #[test]
    fn original_gives_back_the_bytes_loaded() {
        // Cut entries, an entry whose `_meta` is not last, a blank CRLF line, and a torn
        // line cut inside a UTF-8 character, ended by a later writer.
        let mut bytes = TWO_MCPORTER.as_bytes().to_vec();
        bytes.extend_from_slice(b"{\"_meta\":{\"dir\":\"send\",\"server\":\"a\"},\"id\":9}\n\r\n");
        bytes.extend_from_slice(b"{\"id\":3,\"text\":\"caf\xc3\n");
        bytes.extend_from_slice(TWO_MCPORTER.as_bytes());
        let tape = Tape::parse(Path::new("t"), &bytes).expect("parse");
        assert_eq!(tape.torn.len(), 1);
        assert_eq!(tape.original().as_deref(), Some(&bytes[..]));
        // The messages are still the loader's (cut where `_meta` was).
        assert_eq!(
            tape.entries[1].message.raw(),
            br#"{"jsonrpc":"2.0","id":0,"method":"initialize"}"#
        );
        assert!(
            Tape::from_entries(Path::new("t"), Vec::new())
                .original()
                .is_none()
        );
    }

    #[test]
    fn broken_middle_line_is_an_error_with_file_and_line() {
        let text = format!("{TWO_MCPORTER}garbage\n{TWO_MCPORTER}");
        let err = Tape::parse(Path::new("t.ndjson"), text.as_bytes()).expect_err("bad");
        assert_eq!(err.to_string(), "`t.ndjson` line 6: not a JSON object");
    }
}
