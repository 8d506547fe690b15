//! Which connection an entry belongs to: the one rule every reader of tapes uses.
//!
//! Entries with `_meta.conn` (mcptape) are grouped by it. Entries without (mcporter
//! 0.12/0.13) are grouped per server, a `$transport/start` opening a new connection and a
//! `$transport/close` ending it. The grouper sees one entry at a time and keeps a
//! [`Span`] per connection, never the entries: a streaming reader can use it.

use std::collections::HashMap;

use crate::tape::lifecycle::LifecycleKind;

/// What is known of one connection without its entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// The connection id: `_meta.conn`, or `SERVER#N` for tapes without one.
    pub id: String,
    /// The server's name.
    pub server: String,
    /// The line of its first entry.
    pub first_line: usize,
    /// The line of its last entry.
    pub last_line: usize,
    /// The line of its first `$transport/close`, if any.
    pub closed_at: Option<usize>,
    /// How many entries it has.
    pub entries: usize,
    /// An entry of it was imported from an agent's transcript (`_meta.source`,
    /// [`crate::tape::source`]): the connection is the agent's log, not a script a
    /// client must follow whole ([`Grouper::mark_imported`]).
    pub imported: bool,
}

/// Groups entries into connections, one entry at a time, in tape order.
#[derive(Debug, Default)]
pub struct Grouper {
    spans: Vec<Span>,
    by_conn: HashMap<String, usize>,
    /// For entries without `conn`: the open connection of each server.
    open: HashMap<String, usize>,
    counts: HashMap<String, usize>,
}

impl Grouper {
    /// Adds the entry at `line`; `event` is its kind when it is a lifecycle entry
    /// ([`LifecycleKind::of`], [`LifecycleKind::of_line`]). Returns the index of its
    /// connection (a new one is the next index), or `None` for a `$note`, which belongs
    /// to the tape, not to a connection: replay never waits for it, `list` never counts
    /// its server.
    pub fn add(
        &mut self,
        line: usize,
        server: &str,
        conn: Option<&str>,
        event: Option<&LifecycleKind>,
    ) -> Option<usize> {
        if event == Some(&LifecycleKind::Note) {
            return None;
        }
        let slot = match conn {
            Some(conn) => match self.by_conn.get(conn) {
                Some(&slot) => slot,
                None => {
                    let slot = self.push(conn.to_owned(), server, line);
                    self.by_conn.insert(conn.to_owned(), slot);
                    slot
                }
            },
            None => {
                let starts = event == Some(&LifecycleKind::Start);
                match self.open.get(server) {
                    Some(&slot) if !starts => slot,
                    _ => {
                        let n = self.counts.entry(server.to_owned()).or_insert(0);
                        *n += 1;
                        let id = format!("{server}#{n}");
                        let slot = self.push(id, server, line);
                        self.open.insert(server.to_owned(), slot);
                        slot
                    }
                }
            }
        };
        let span = &mut self.spans[slot];
        span.last_line = line;
        span.entries += 1;
        if event == Some(&LifecycleKind::Close) {
            span.closed_at.get_or_insert(line);
            if conn.is_none() {
                self.open.remove(server);
            }
        }
        Some(slot)
    }

    fn push(&mut self, id: String, server: &str, line: usize) -> usize {
        self.spans.push(Span {
            id,
            server: server.to_owned(),
            first_line: line,
            last_line: line,
            closed_at: None,
            entries: 0,
            imported: false,
        });
        self.spans.len() - 1
    }

    /// Marks the connection at `slot` (as [`Grouper::add`] returned it) imported.
    pub fn mark_imported(&mut self, slot: usize) {
        if let Some(span) = self.spans.get_mut(slot) {
            span.imported = true;
        }
    }

    /// The connections so far, in the order they started.
    pub fn spans(&self) -> &[Span] {
        &self.spans
    }

    /// The connections, in the order they started.
    pub fn into_spans(self) -> Vec<Span> {
        self.spans
    }
}
