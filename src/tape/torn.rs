//! Torn lines: what a writer killed mid-write leaves in a shared tape.
//!
//! Each entry is one `write` under the tape's lock, but a writer killed in the middle of
//! a large one leaves the start of its line and no `\n`. The next writer ends that line
//! before its own ([`crate::tape::writer`]), so the tape goes on. A torn line is
//! therefore an unfinished JSON object: the text parses as the start of one and then
//! ends ([`is_unfinished`]); or it is a last line nobody ended. Readers skip it with a
//! warning naming file and line. Any other broken line stays an error.
//!
//! Which connection lost the line cannot be read from it (its `_meta`, written last, is
//! the part that is missing), and the killed writer left nothing else. What is known is
//! who could have written it ([`attribute`]): a connection open at that line (it has an
//! entry before it and no `$transport/close` before it). Of those, the ones that wrote
//! nothing after it and never closed are the writer that died; when every open
//! connection went on writing, the writer survived and any of them may have lost the
//! entry. Every connection so named is marked: its replay fails, saying which line, and
//! the other connections replay, show and redact as normal.

use serde::de::IgnoredAny;

use crate::tape::group::Span;

/// A torn line found while loading a tape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TornLine {
    /// Its 1-based line number.
    pub line: usize,
    /// Why it does not parse.
    pub reason: String,
    /// The connections (server, id) that may have lost an entry there.
    pub conns: Vec<(String, String)>,
    /// False when it is the last line of the tape and nobody ended it.
    pub ended: bool,
}

impl TornLine {
    /// The warning a reader prints for it.
    pub fn warning(&self, path: &std::path::Path) -> String {
        let whose = if self.conns.is_empty() {
            "no connection was open there".to_owned()
        } else {
            let ids: Vec<String> = self
                .conns
                .iter()
                .map(|(server, id)| format!("server `{server}` connection `{id}`"))
                .collect();
            format!(
                "it may hold an entry of {}, whose replay fails",
                ids.join(" or ")
            )
        };
        let what = if self.ended {
            "torn line skipped"
        } else {
            "torn last line ignored"
        };
        format!(
            "`{}` line {}: {what} ({}); the recording was cut mid-write; {whose}",
            path.display(),
            self.line,
            self.reason
        )
    }
}

/// Prints the warnings of the torn lines a reader skipped ([`TornLine::warning`]), one
/// line each on stderr, escaped ([`crate::term::line`]): a torn line's reason may quote
/// the tape's text. Every reader prints them through here.
pub fn print_warnings(warnings: &[String]) {
    for w in warnings {
        crate::term::eprintln_escaped!("mcptape: warning: {w}");
    }
}

/// True when `raw` is the start of a JSON object that stops before its end: what a
/// writer cut mid-write leaves. Text broken anywhere else is not.
pub fn is_unfinished(raw: &[u8]) -> bool {
    let text = raw.trim_ascii();
    if text.first() != Some(&b'{') {
        return false;
    }
    let text = match std::str::from_utf8(text) {
        Ok(t) => t,
        // Cut inside a multi-byte character: what comes before must be unfinished too.
        Err(e) if e.error_len().is_none() => match std::str::from_utf8(&text[..e.valid_up_to()]) {
            Ok(t) => t,
            Err(_) => return false,
        },
        Err(_) => return false,
    };
    match serde_json::from_str::<IgnoredAny>(text) {
        Ok(_) => false,
        Err(e) => e.classify() == serde_json::error::Category::Eof,
    }
}

/// The connections (indexes into `spans`) that may have written the torn line `line`.
pub fn attribute(line: usize, spans: &[Span]) -> Vec<usize> {
    let open: Vec<usize> = (0..spans.len())
        .filter(|&i| spans[i].first_line < line && spans[i].closed_at.is_none_or(|c| c > line))
        .collect();
    let died: Vec<usize> = open
        .iter()
        .copied()
        .filter(|&i| spans[i].last_line < line && spans[i].closed_at.is_none())
        .collect();
    if died.is_empty() { open } else { died }
}

/// The torn lines found, each with the ids of the connections it may belong to.
pub fn resolve(found: Vec<(usize, String, bool)>, spans: &[Span]) -> Vec<TornLine> {
    found
        .into_iter()
        .map(|(line, reason, ended)| TornLine {
            line,
            reason,
            conns: attribute(line, spans)
                .into_iter()
                .map(|i| (spans[i].server.clone(), spans[i].id.clone()))
                .collect(),
            ended,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(id: &str, first: usize, last: usize, closed: Option<usize>) -> Span {
        Span {
            id: id.into(),
            server: "s".into(),
            first_line: first,
            last_line: last,
            closed_at: closed,
            entries: 1,
            imported: false,
        }
    }

    #[test]
    fn unfinished_is_a_prefix_of_an_object() {
        assert!(is_unfinished(br#"{"jsonrpc":"2.0","id":3,"res"#));
        assert!(is_unfinished(b"{"));
        assert!(is_unfinished(br#"  {"a":"text cut in a str"#));
        assert!(!is_unfinished(br#"{"a":1}"#));
        assert!(!is_unfinished(br#"{"a":1}}"#));
        assert!(!is_unfinished(b"{oops"));
        assert!(!is_unfinished(br#""a string"#));
        assert!(!is_unfinished(b"\xff{"));
    }

    #[test]
    fn the_writer_that_died_is_the_one_named() {
        // a: killed (nothing after 5, no close); b: went on and closed; c: closed before.
        let spans = [
            span("a", 1, 4, None),
            span("b", 2, 9, Some(9)),
            span("c", 3, 3, Some(3)),
        ];
        assert_eq!(attribute(5, &spans), vec![0]);
        // A writer that survived: every open connection may have lost the entry.
        let spans = [span("a", 1, 9, Some(9)), span("b", 2, 8, None)];
        assert_eq!(attribute(5, &spans), vec![0, 1]);
        // Before any connection, or after all closed: nobody.
        assert!(attribute(1, &spans).is_empty());
        assert!(attribute(10, &[span("a", 1, 9, Some(9))]).is_empty());
    }
}
