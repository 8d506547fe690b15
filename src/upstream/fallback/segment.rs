//! The connection `new` appended, read back from the tape: the line of each request
//! it added, for the verdict.

use std::path::Path;

use crate::message::Kind;
use crate::tape::{Direction, ServerTape};
use crate::verdict::Added;

/// `added` (each with its request's id) with the tape lines of the requests in
/// connection `conn` of `server`; a line stays unknown when the tape cannot be read
/// back (said on stderr).
pub fn with_lines(
    path: &Path,
    server: &str,
    conn: &str,
    added: Vec<(String, Added)>,
) -> Vec<Added> {
    let tape = match ServerTape::load(path, server) {
        Ok(tape) => tape,
        Err(e) => {
            crate::term::eprintln_escaped!(
                "mcptape: warning: cannot read back the added exchanges: {}",
                crate::error::chain(&e)
            );
            return added.into_iter().map(|(_, a)| a).collect();
        }
    };
    let lines: Vec<(String, usize)> = (0..tape.len())
        .filter(|&i| tape.id(i) == conn)
        .flat_map(|i| {
            let (t, c) = tape.connection(i);
            c.entries
                .iter()
                .map(|&e| &t.entries[e])
                .filter(|e| e.meta.dir == Direction::Send && e.message.kind() == Kind::Request)
                .filter(|e| e.message.method() != Some("initialize"))
                .filter_map(|e| Some((e.message.id()?.to_owned(), e.line)))
                .collect::<Vec<_>>()
        })
        .collect();
    let mut taken = vec![false; lines.len()];
    added
        .into_iter()
        .map(|(id, mut a)| {
            // Ids may repeat over a connection: each takes the first line not taken.
            if let Some(k) = (0..lines.len()).find(|&k| !taken[k] && lines[k].0 == id) {
                taken[k] = true;
                a.line = Some(lines[k].1);
            }
            a
        })
        .collect()
}
