//! Loading a tape and splitting it into connections.
//!
//! A tape that ends in a torn line (a crash mid-write leaves a last line without `\n`
//! that does not parse) loads with a warning naming the line; any other broken line is
//! an error naming file and line. Blank lines are skipped.
//!
//! Connections: entries with `_meta.conn` (mcptape) are grouped by it. Entries without
//! (mcporter 0.12/0.13) are grouped per server, a `$transport/start` opening a new
//! connection and a `$transport/close` ending it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::error::TapeError;
use crate::message::Message;
use crate::tape::format::{self, Cut, Direction, Meta};

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

impl Entry {
    /// For a lifecycle entry, its `$…` method.
    pub fn lifecycle_event(&self) -> Option<&str> {
        (self.meta.dir == Direction::Lifecycle)
            .then(|| self.message.method())
            .flatten()
    }
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
    /// Problems that did not stop loading (a torn last line).
    pub warnings: Vec<String>,
}

impl Tape {
    /// Reads and parses a whole tape.
    pub fn load(path: &Path) -> Result<Tape, TapeError> {
        // A device (`/dev/full`, `/dev/zero`) can read forever: only files are tapes.
        if let Ok(meta) = std::fs::metadata(path)
            && !meta.is_file()
        {
            return Err(TapeError::Read {
                path: path.to_path_buf(),
                source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file"),
            });
        }
        let bytes = std::fs::read(path).map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => TapeError::Missing {
                path: path.to_path_buf(),
            },
            _ => TapeError::Read {
                path: path.to_path_buf(),
                source,
            },
        })?;
        Tape::parse_owned(path, bytes)
    }

    /// [`Tape::load`], saying on stderr what did not stop it (a torn last line).
    pub fn load_warning(path: &Path) -> Result<Tape, TapeError> {
        let tape = Tape::load(path)?;
        for w in &tape.warnings {
            crate::term::eprintln_escaped!("mcptape: warning: {w}");
        }
        Ok(tape)
    }

    /// Parses tape text already in memory; `path` is used in messages.
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<Tape, TapeError> {
        Tape::parse_owned(path, bytes.to_vec())
    }

    /// Parses a tape's bytes, keeping them: each message is a slice of them (its `_meta`
    /// cut off by writing `}` over the comma before it), so a loaded tape costs about its
    /// size in memory, not twice.
    pub fn parse_owned(path: &Path, bytes: Vec<u8>) -> Result<Tape, TapeError> {
        enum Body {
            Slice(usize, usize),
            Owned(String),
        }
        // Vec → Bytes → BytesMut moves the allocation; nothing is copied.
        let mut buf = bytes::BytesMut::from(bytes::Bytes::from(bytes));
        let mut found: Vec<(usize, Meta, Body)> = Vec::new();
        let mut warnings = Vec::new();
        let torn_possible = !buf.is_empty() && !buf.ends_with(b"\n");
        let mut start = 0;
        let mut line = 0;
        while start < buf.len() {
            line += 1;
            let end = memchr::memchr(b'\n', &buf[start..]).map_or(buf.len(), |i| start + i);
            let is_last = end == buf.len();
            let raw = &buf[start..end];
            if !raw.trim_ascii().is_empty() {
                let lead = raw.len() - raw.trim_ascii_start().len();
                let decoded = std::str::from_utf8(raw)
                    .map_err(|_| "not UTF-8".to_owned())
                    .and_then(format::decode_cut);
                match decoded {
                    Ok((meta, Cut::At(i))) => {
                        let at = start + lead + i;
                        buf[at] = b'}';
                        found.push((line, meta, Body::Slice(start + lead, at + 1)));
                    }
                    Ok((meta, Cut::Owned(m))) => found.push((line, meta, Body::Owned(m))),
                    Err(reason) if torn_possible && is_last => warnings.push(format!(
                        "`{}` line {line}: torn last line ignored ({reason}); the recording was cut mid-write",
                        path.display()
                    )),
                    Err(reason) => {
                        return Err(TapeError::BadLine {
                            path: path.to_path_buf(),
                            line,
                            reason,
                        });
                    }
                }
            }
            start = end + 1;
        }
        let shared = buf.freeze();
        let entries = found
            .into_iter()
            .map(|(line, meta, body)| Entry {
                line,
                meta,
                message: match body {
                    Body::Slice(a, b) => Message::new(shared.slice(a..b)),
                    Body::Owned(m) => Message::new(m),
                },
            })
            .collect();
        Ok(Tape {
            path: path.to_path_buf(),
            entries,
            warnings,
        })
    }

    /// The tape's connections, in the order they started.
    pub fn connections(&self) -> Vec<Connection> {
        let mut out: Vec<Connection> = Vec::new();
        let mut by_conn: HashMap<&str, usize> = HashMap::new();
        // For entries without `conn`: the open connection of each server.
        let mut open: HashMap<&str, usize> = HashMap::new();
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for (idx, entry) in self.entries.iter().enumerate() {
            let server = entry.meta.server.as_str();
            let slot = match &entry.meta.conn {
                Some(conn) => *by_conn.entry(conn.as_str()).or_insert_with(|| {
                    out.push(Connection {
                        id: conn.clone(),
                        server: server.to_owned(),
                        entries: Vec::new(),
                    });
                    out.len() - 1
                }),
                None => {
                    let starts = entry.lifecycle_event() == Some("$transport/start");
                    match open.get(server) {
                        Some(&slot) if !starts => slot,
                        _ => {
                            let n = counts.entry(server).or_insert(0);
                            *n += 1;
                            out.push(Connection {
                                id: format!("{server}#{n}"),
                                server: server.to_owned(),
                                entries: Vec::new(),
                            });
                            open.insert(server, out.len() - 1);
                            out.len() - 1
                        }
                    }
                }
            };
            out[slot].entries.push(idx);
            if entry.meta.conn.is_none() && entry.lifecycle_event() == Some("$transport/close") {
                open.remove(server);
            }
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
    fn broken_middle_line_is_an_error_with_file_and_line() {
        let text = format!("{TWO_MCPORTER}garbage\n{TWO_MCPORTER}");
        let err = Tape::parse(Path::new("t.ndjson"), text.as_bytes()).expect_err("bad");
        assert_eq!(err.to_string(), "`t.ndjson` line 6: not a JSON object");
    }
}
