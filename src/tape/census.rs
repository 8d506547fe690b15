//! What a tape holds, read in one streaming pass without keeping its entries: its
//! servers, its connections ([`Span`]s), its entry count, the time of its last entry and
//! its torn lines. `mcptape list` and the `replay` parent need no more.
//!
//! Memory is one line at a time (the largest line of the tape) plus a [`Span`] per
//! connection; every line is checked as the whole-tape loader checks it
//! ([`crate::tape::lines::classify`]), so a tape that fails to load fails here too.

use std::collections::BTreeSet;
use std::path::Path;

use crate::tape::TapeError;
use crate::tape::format::Direction;
use crate::tape::group::{Grouper, Span};
use crate::tape::lifecycle::LifecycleKind;
use crate::tape::lines::{Class, LineReader};
use crate::tape::torn::{self, TornLine};

/// The summary of one tape.
#[derive(Debug)]
pub struct Census {
    /// How many entries it has.
    pub entries: usize,
    /// How many of them are messages (sent or received, not lifecycle).
    pub messages: usize,
    /// Its servers, sorted.
    pub servers: BTreeSet<String>,
    /// Its connections, in the order they started.
    pub conns: Vec<Span>,
    /// `_meta.ts` of the last entry that has one.
    pub last_ts: Option<String>,
    /// The torn lines skipped.
    pub torn: Vec<TornLine>,
    /// Problems that did not stop reading (torn lines), one sentence each.
    pub warnings: Vec<String>,
}

impl Census {
    /// Reads the tape at `path` once, line by line.
    pub fn scan(path: &Path) -> Result<Census, TapeError> {
        let mut reader = LineReader::open(path)?;
        let mut line = Vec::new();
        let mut grouper = Grouper::default();
        let mut found_torn = Vec::new();
        let mut census = Census {
            entries: 0,
            messages: 0,
            servers: BTreeSet::new(),
            conns: Vec::new(),
            last_ts: None,
            torn: Vec::new(),
            warnings: Vec::new(),
        };
        loop {
            line.clear();
            let Some(read) = reader.next_into(&mut line)? else {
                break;
            };
            match crate::tape::lines::classify(&line, read.terminated) {
                Class::Blank => {}
                Class::Torn(reason) => found_torn.push((read.number, reason, read.terminated)),
                Class::Bad(reason) => return Err(reader.bad(read.number, reason)),
                Class::Entry { meta, .. } => {
                    let event = (meta.dir == Direction::Lifecycle)
                        .then(|| LifecycleKind::of_line(&line))
                        .flatten();
                    let Some(slot) = grouper.add(
                        read.number,
                        &meta.server,
                        meta.conn.as_deref(),
                        event.as_ref(),
                    ) else {
                        census.entries += 1;
                        continue;
                    };
                    if meta.source.is_some() {
                        grouper.mark_imported(slot);
                    }
                    census.entries += 1;
                    census.messages += usize::from(meta.dir != Direction::Lifecycle);
                    if !census.servers.contains(&meta.server) {
                        census.servers.insert(meta.server);
                    }
                    if meta.ts.is_some() {
                        census.last_ts = meta.ts;
                    }
                }
            }
        }
        census.conns = grouper.into_spans();
        census.torn = torn::resolve(found_torn, &census.conns);
        census.warnings = census.torn.iter().map(|t| t.warning(path)).collect();
        Ok(census)
    }

    /// [`Census::scan`], saying on stderr what did not stop it (torn lines).
    pub fn scan_warning(path: &Path) -> Result<Census, TapeError> {
        let census = Census::scan(path)?;
        torn::print_warnings(&census.warnings);
        Ok(census)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_what_the_loader_finds() {
        let text = concat!(
            r#"{"jsonrpc":"2.0","method":"$transport/start","_meta":{"dir":"lifecycle","server":"a"}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","_meta":{"dir":"send","server":"a","ts":"T1"}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"$transport/close","_meta":{"dir":"lifecycle","server":"a"}}"#,
            "\n",
            r#"{"id":1,"method":"m","_meta":{"dir":"send","server":"b","conn":"x","ts":"T2"}}"#,
            "\n",
            r#"{"id":1,"result":{"#,
            "\n",
            r#"{"id":1,"method":"m","_meta":{"dir":"send","server":"a"}}"#,
            "\n",
        );
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.ndjson");
        std::fs::write(&path, text).expect("write");
        let census = Census::scan(&path).expect("scan");
        let tape = crate::tape::Tape::load(&path).expect("load");
        assert_eq!(census.entries, tape.entries.len());
        assert_eq!(census.messages, 3);
        let ids: Vec<&str> = census.conns.iter().map(|c| c.id.as_str()).collect();
        let loaded: Vec<String> = tape.connections().into_iter().map(|c| c.id).collect();
        assert_eq!(ids, loaded);
        assert_eq!(ids, ["a#1", "x", "a#2"]);
        assert_eq!(census.last_ts.as_deref(), Some("T2"));
        assert_eq!(census.torn, tape.torn);
        assert_eq!(census.torn[0].line, 5);
        assert_eq!(census.torn[0].conns, [("b".to_owned(), "x".to_owned())]);
        assert_eq!(census.warnings, tape.warnings);
    }
}
