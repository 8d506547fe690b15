//! The part of a tape that a replaying proxy serves: the connections of one server.
//!
//! A proxy replays one server, and a tape may hold many (an agent's whole session). The
//! tape is read once, line by line; the lines of other servers are checked and dropped,
//! the server's own are kept in one buffer with a small slot per entry (where its message
//! and its `_meta` lie). A connection becomes a [`Tape`] of its own entries only when it
//! is replayed ([`ServerTape::connection`]), its messages slices of that buffer. So a
//! proxy holds about the size of its server's lines, not the whole tape's entries.
//!
//! Torn lines are attributed over every connection of the tape (the writer that died may
//! be another server's), and kept for the server's connections they may belong to.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use bytes::Bytes;

use crate::message::{Kind, Message};
use crate::tape::TapeError;
use crate::tape::format::{self, Cut, Direction};
use crate::tape::group::{Grouper, Span};
use crate::tape::lifecycle::LifecycleKind;
use crate::tape::lines::{Class, LineReader};
use crate::tape::reader::{Connection, Entry, Tape};
use crate::tape::torn::{self, TornLine};

/// Where one kept entry lies in the buffer.
#[derive(Debug, Clone, Copy)]
struct Slot {
    line: usize,
    /// The message's first byte.
    start: usize,
    /// The `}` written over the comma before `_meta` (the message's last byte), or
    /// `usize::MAX` when `_meta` was not last and the line is decoded again instead.
    cut: usize,
    /// The end of the line.
    end: usize,
    dir: Direction,
}

impl Slot {
    /// The slot of the entry read into `buf[start..]`: the message begins `lead` bytes in;
    /// where `_meta` was last, its comma is overwritten with the message's closing `}`.
    fn keep(
        buf: &mut [u8],
        start: usize,
        lead: usize,
        cut: Cut,
        line: usize,
        dir: Direction,
    ) -> Slot {
        let end = buf.len();
        let cut = match cut {
            Cut::At(i) => {
                let at = start + lead + i;
                buf[at] = b'}';
                at
            }
            Cut::Owned(_) => usize::MAX,
        };
        Slot {
            line,
            start: start + lead,
            cut,
            end,
            dir,
        }
    }
}

/// One connection of the server.
#[derive(Debug)]
struct Held {
    id: String,
    slots: Vec<usize>,
    torn: Vec<usize>,
}

impl Held {
    /// The index in `conns` of the server's connection in grouper slot `group`, `id`:
    /// made on its first entry.
    fn of(
        conns: &mut Vec<Held>,
        mine: &mut HashMap<usize, usize>,
        group: usize,
        id: &str,
    ) -> usize {
        *mine.entry(group).or_insert_with(|| {
            conns.push(Held {
                id: id.to_owned(),
                slots: Vec::new(),
                torn: Vec::new(),
            });
            conns.len() - 1
        })
    }

    /// Gives each torn line to the server's connections it may belong to (`mine`: grouper
    /// slot → index in `conns`).
    fn mark_torn(
        conns: &mut [Held],
        mine: &HashMap<usize, usize>,
        torn: &[TornLine],
        spans: &[Span],
    ) {
        for t in torn {
            for (&group, &held) in mine {
                if t.conns.iter().any(|(_, id)| *id == spans[group].id) {
                    conns[held].torn.push(t.line);
                }
            }
        }
    }
}

/// The connections of one server of a tape, held compactly.
#[derive(Debug)]
pub struct ServerTape {
    /// Where it was read from.
    pub path: PathBuf,
    /// The server.
    pub server: String,
    /// Every server the tape holds, sorted (for the message when `server` is not there).
    pub servers: BTreeSet<String>,
    /// Problems that did not stop loading (torn lines), one sentence each.
    pub warnings: Vec<String>,
    buf: Bytes,
    slots: Vec<Slot>,
    conns: Vec<Held>,
}

impl ServerTape {
    /// Reads the tape at `path`, keeping the connections of `server`.
    pub fn load(path: &Path, server: &str) -> Result<ServerTape, TapeError> {
        let mut reader = LineReader::open(path)?;
        let mut buf: Vec<u8> = Vec::new();
        let mut slots = Vec::new();
        let mut conns: Vec<Held> = Vec::new();
        // Grouper slot (every server's connection) → index in `conns`.
        let mut mine: HashMap<usize, usize> = HashMap::new();
        let mut grouper = Grouper::default();
        let mut servers = BTreeSet::new();
        let mut found_torn = Vec::new();
        loop {
            let start = buf.len();
            let Some(read) = reader.next_into(&mut buf)? else {
                break;
            };
            let class = crate::tape::lines::classify(&buf[start..], read.terminated);
            let (meta, cut, lead) = match class {
                Class::Entry { meta, cut, lead } => (meta, cut, lead),
                Class::Blank => {
                    buf.truncate(start);
                    continue;
                }
                Class::Torn(reason) => {
                    found_torn.push((read.number, reason, read.terminated));
                    buf.truncate(start);
                    continue;
                }
                Class::Bad(reason) => return Err(reader.bad(read.number, reason)),
            };
            let event = (meta.dir == Direction::Lifecycle)
                .then(|| LifecycleKind::of_line(&buf[start..]))
                .flatten();
            let Some(group) = grouper.add(
                read.number,
                &meta.server,
                meta.conn.as_deref(),
                event.as_ref(),
            ) else {
                buf.truncate(start);
                continue;
            };
            if !servers.contains(&meta.server) {
                servers.insert(meta.server.clone());
            }
            if meta.server != server {
                buf.truncate(start);
                continue;
            }
            let held = Held::of(&mut conns, &mut mine, group, &grouper.spans()[group].id);
            conns[held].slots.push(slots.len());
            slots.push(Slot::keep(
                &mut buf,
                start,
                lead,
                cut,
                read.number,
                meta.dir,
            ));
        }
        let spans = grouper.into_spans();
        let torn = torn::resolve(found_torn, &spans);
        let warnings = torn.iter().map(|t| t.warning(path)).collect();
        Held::mark_torn(&mut conns, &mine, &torn, &spans);
        buf.shrink_to_fit();
        Ok(ServerTape {
            path: path.to_path_buf(),
            server: server.to_owned(),
            servers,
            warnings,
            buf: Bytes::from(buf),
            slots,
            conns,
        })
    }

    /// [`ServerTape::load`], saying on stderr what did not stop it (torn lines).
    pub fn load_warning(path: &Path, server: &str) -> Result<ServerTape, TapeError> {
        let tape = ServerTape::load(path, server)?;
        torn::print_warnings(&tape.warnings);
        Ok(tape)
    }

    /// How many connections of the server the tape holds.
    pub fn len(&self) -> usize {
        self.conns.len()
    }

    /// True when the tape holds no connection of the server.
    pub fn is_empty(&self) -> bool {
        self.conns.is_empty()
    }

    /// The id of connection `i`.
    pub fn id(&self, i: usize) -> &str {
        &self.conns[i].id
    }

    /// The torn lines that may have held an entry of connection `i`.
    pub fn torn_lines(&self, i: usize) -> &[usize] {
        &self.conns[i].torn
    }

    /// The message of a slot, as the loader found it valid.
    fn entry(&self, s: usize) -> Entry {
        let slot = self.slots[s];
        let decoded = if slot.cut == usize::MAX {
            let line = std::str::from_utf8(&self.buf[slot.start..slot.end])
                .expect("checked as UTF-8 when loaded");
            format::decode_cut(line).map(|(meta, cut)| match cut {
                Cut::Owned(m) => (meta, Message::new(m)),
                Cut::At(i) => (meta, Message::new(format!("{}}}", &line[..i]))),
            })
        } else {
            // After the message's `}`: `"_meta":{…}}`, an object once a `{` leads it.
            let rest = std::str::from_utf8(&self.buf[slot.cut + 1..slot.end])
                .expect("checked as UTF-8 when loaded");
            format::decode_cut(&format!("{{{rest}"))
                .map(|(meta, _)| (meta, Message::new(self.buf.slice(slot.start..slot.cut + 1))))
        };
        let (meta, message) = decoded.expect("checked as an entry when loaded");
        Entry {
            line: slot.line,
            meta,
            message,
        }
    }

    fn raw(&self, s: usize) -> &[u8] {
        let slot = self.slots[s];
        &self.buf[slot.start..slot.end]
    }

    /// Whether any of the server's connections holds a client message (`send`) whose
    /// method is `method`. Only lines that hold the method's name are decoded.
    pub fn sends(&self, method: &str) -> bool {
        let quoted = format!("\"{method}\"");
        self.conns.iter().flat_map(|held| &held.slots).any(|&s| {
            self.slots[s].dir == Direction::Send
                && memchr::memmem::find(self.raw(s), quoted.as_bytes()).is_some()
                && self.entry(s).message.method() == Some(method)
        })
    }

    /// Connection `i` as a tape of its own entries, for the replay engine.
    pub fn connection(&self, i: usize) -> (Tape, Connection) {
        let held = &self.conns[i];
        let entries: Vec<Entry> = held.slots.iter().map(|&s| self.entry(s)).collect();
        let conn = Connection {
            id: held.id.clone(),
            server: self.server.clone(),
            entries: (0..entries.len()).collect(),
        };
        (self.tape_of(entries), conn)
    }

    fn tape_of(&self, entries: Vec<Entry>) -> Tape {
        Tape::from_entries(&self.path, entries)
    }

    /// The entries that say something about the server across its connections, as a
    /// tape with its connections (for [`crate::upstream::replay::ServerFacts::of`]): the
    /// answers that name a `protocolVersion`, `server/discover` probes and the answers to
    /// them. Only those are decoded.
    pub fn facts_tape(&self) -> (Tape, Vec<Connection>) {
        let mut entries = Vec::new();
        let mut conns = Vec::new();
        for held in &self.conns {
            let first = entries.len();
            let mut probes: HashSet<String> = HashSet::new();
            for &s in &held.slots {
                let raw = self.raw(s);
                let dir = self.slots[s].dir;
                let keep = match dir {
                    Direction::Send if memchr::memmem::find(raw, b"discover").is_some() => {
                        let e = self.entry(s);
                        if e.message.method() == Some("server/discover") {
                            probes.insert(e.message.id().unwrap_or_default().to_owned());
                        }
                        Some(e)
                    }
                    Direction::Recv
                        if memchr::memmem::find(raw, b"protocolVersion").is_some()
                            || (!probes.is_empty() && self.answers(s, &probes)) =>
                    {
                        Some(self.entry(s))
                    }
                    _ => None,
                };
                entries.extend(keep);
            }
            conns.push(Connection {
                id: held.id.clone(),
                server: self.server.clone(),
                entries: (first..entries.len()).collect(),
            });
        }
        (self.tape_of(entries), conns)
    }

    /// True when slot `s` is an answer to one of `ids`.
    fn answers(&self, s: usize, ids: &HashSet<String>) -> bool {
        let slot = self.slots[s];
        if slot.cut == usize::MAX {
            return true;
        }
        let m = Message::new(self.buf.slice(slot.start..slot.cut + 1));
        matches!(m.kind(), Kind::Response | Kind::Error) && m.id().is_some_and(|i| ids.contains(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sends_finds_a_client_method_of_this_server_only() {
        let text = concat!(
            r#"{"id":1,"method":"tools/list","_meta":{"dir":"send","server":"b","conn":"b-1"}}"#,
            "\n",
            r#"{"id":1,"result":{"note":"tools/list"},"_meta":{"dir":"recv","server":"a","conn":"a-1"}}"#,
            "\n",
            r#"{"id":2,"method":"tools/call","params":{"name":"tools/list"},"_meta":{"dir":"send","server":"a","conn":"a-1"}}"#,
            "\n",
        );
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.ndjson");
        std::fs::write(&path, text).expect("write");
        let a = ServerTape::load(&path, "a").expect("load");
        assert!(
            !a.sends("tools/list"),
            "only b sent it; a's mentions are no method"
        );
        assert!(a.sends("tools/call"));
        assert!(
            ServerTape::load(&path, "b")
                .expect("load")
                .sends("tools/list")
        );
    }

    #[test]
    fn keeps_one_server_and_gives_back_its_entries_exactly() {
        let text = concat!(
            r#"{"id":1,"method":"m","_meta":{"dir":"send","server":"a","conn":"a-1","ts":"T"}}"#,
            "\n",
            r#"{"id":1,"method":"m","_meta":{"dir":"send","server":"b","conn":"b-1"}}"#,
            "\n",
            r#"{"_meta":{"dir":"recv","server":"a","conn":"a-1"}, "id":1,"result":{}}"#,
            "\n",
            r#"{"id":2,"method":"n","params":{"x":"#,
            "\n",
            r#"  {"id":1 , "result":{"k":[1.0]} ,"_meta":{"dir":"recv","server":"a","conn":"a-2"} }"#,
            "\n",
        );
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.ndjson");
        std::fs::write(&path, text).expect("write");
        let whole = Tape::load(&path).expect("load");
        let tape = ServerTape::load(&path, "a").expect("load");
        assert_eq!(tape.len(), 2);
        assert_eq!(tape.servers.iter().collect::<Vec<_>>(), ["a", "b"]);
        let mut got = Vec::new();
        for i in 0..tape.len() {
            let (t, c) = tape.connection(i);
            assert_eq!(c.id, tape.id(i));
            got.extend(t.entries);
        }
        let want: Vec<&Entry> = whole
            .entries
            .iter()
            .filter(|e| e.meta.server == "a")
            .collect();
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            assert_eq!(
                (g.line, &g.meta, g.message.raw()),
                (w.line, &w.meta, w.message.raw())
            );
        }
        // a-1 and b-1 were open at the torn line 4 and wrote nothing after: either lost it.
        assert_eq!(tape.torn_lines(0), [4]);
        assert!(tape.torn_lines(1).is_empty());
        assert_eq!(tape.warnings, whole.warnings);
    }
}
