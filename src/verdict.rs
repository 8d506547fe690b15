//! What a replaying proxy found, written for its `mcptape replay` parent.
//!
//! Each replayed connection leaves one JSON file in `MCPTAPE_REPORT` when its client
//! hangs up; the parent reads them all after its command exits, adds the recorded
//! connections nobody used, prints a summary and decides the exit status.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::style::{Paint, Role};

/// A message the client sent that the tape did not expect.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Mismatch {
    /// The tape line of the expected entry (none when the script had ended).
    pub line: Option<usize>,
    /// The expected message, in short.
    pub expected: String,
    /// What came, in short.
    pub got: String,
    /// A unified diff of the two, pretty-printed and normalized.
    pub diff: String,
    /// A later tape line the message does match, if any (the client skipped ahead).
    pub later_line: Option<usize>,
}

/// A send entry the client never sent.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Leftover {
    /// Its tape line.
    pub line: usize,
    /// The message, in short.
    pub summary: String,
}

/// The outcome of one replayed connection.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Verdict {
    /// The server's name.
    pub server: String,
    /// The recorded connection served (none when there was none to serve).
    pub conn: Option<String>,
    /// Client messages matched against the tape.
    pub matched: usize,
    /// Recorded server messages given to the client.
    pub answered: usize,
    /// The first divergence (replay of the connection stops there).
    pub mismatch: Option<Mismatch>,
    /// Recorded client messages that never came.
    pub leftovers: Vec<Leftover>,
    /// Anything else that went wrong (garbage from the client, no connection to serve).
    pub problems: Vec<String>,
    /// What is worth knowing but not a failure (unrecorded advisory notifications).
    #[serde(default)]
    pub notes: Vec<String>,
    /// The tape line where the recorded connection starts (for ordering summaries).
    #[serde(default)]
    pub first_line: Option<usize>,
    /// Where a cut recording ended before the client was done: the request whose answer
    /// the tape lost, or what came past its end (replay of the connection stops there).
    #[serde(default)]
    pub tape_end: Option<String>,
    /// The other recorded connections this client was served from, after [`Self::conn`]
    /// (a stateless client replayed exchange by exchange, each recorded on its own).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<String>,
    /// `--match any`: recorded requests of this client's connections it never sent (no
    /// failure; with `--fail-on-unused` they are leftovers instead).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unused: Vec<Leftover>,
    /// Requests `--record-mode new` forwarded to the real server and added to the tape
    /// (not divergences).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub added: Vec<Added>,
}

/// A request `--record-mode new` added to the tape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Added {
    /// Its line in the tape, once written.
    pub line: Option<usize>,
    /// Its method.
    pub method: String,
    /// The tool, for a `tools/call`.
    pub tool: Option<String>,
}

impl Verdict {
    /// True when the connection replayed exactly as recorded.
    pub fn ok(&self) -> bool {
        self.mismatch.is_none()
            && self.leftovers.is_empty()
            && self.problems.is_empty()
            && self.tape_end.is_none()
    }

    /// Writes the verdict into a report directory, under a name of its own.
    pub fn leave(&self, dir: &Path) -> std::io::Result<()> {
        let name = format!(
            "verdict-{}-{}.json",
            std::process::id(),
            self.conn.as_deref().unwrap_or("none")
        );
        let name: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(dir.join(name), text)
    }

    /// Every verdict left in a report directory.
    pub fn collect(dir: &Path) -> Vec<Verdict> {
        let Ok(read) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut out: Vec<Verdict> = read
            .flatten()
            .filter(|f| f.file_name().to_string_lossy().starts_with("verdict-"))
            .filter_map(|f| std::fs::read_to_string(f.path()).ok())
            .filter_map(|t| serde_json::from_str(&t).ok())
            .collect();
        out.sort_by_key(|v| (v.first_line.unwrap_or(usize::MAX), v.server.clone()));
        out
    }

    /// The verdict's word: `ok`, `DIVERGED`, `INCOMPLETE` or `FAILED`.
    pub fn label(&self) -> &'static str {
        match (
            &self.mismatch,
            self.leftovers.is_empty() && self.tape_end.is_none(),
            self.problems.is_empty(),
        ) {
            (Some(_), _, _) => "DIVERGED",
            (None, false, _) => "INCOMPLETE",
            (None, true, false) => "FAILED",
            (None, true, true) => "ok",
        }
    }

    /// The tape line an annotation of this verdict points at: the expected entry of a
    /// mismatch, the first message never sent, or where the connection starts.
    pub fn line(&self) -> Option<usize> {
        self.mismatch
            .as_ref()
            .and_then(|m| m.line)
            .or_else(|| self.leftovers.first().map(|l| l.line))
            .or(self.first_line)
    }

    /// A readable account, several lines, for stderr; each value from the tape or the
    /// client is escaped on its line ([`crate::term::line`]).
    pub fn describe(&self) -> String {
        self.render(Paint::PLAIN)
    }

    /// [`Self::describe`], its verdict word and diff lines coloured by `paint` (after
    /// escaping: only the SGR codes of [`crate::style`] are added).
    pub fn render(&self, paint: Paint) -> String {
        use crate::term::line;
        let conn = line(self.conn.as_deref().unwrap_or("-"));
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let label = self.label();
        let role = if self.ok() { Role::Pass } else { Role::Fail };
        let pad = " ".repeat(8usize.saturating_sub(label.len()));
        let mut out = format!(
            "{}{pad} server `{}` connection `{conn}`: {} matched, {} given\n",
            paint.paint(role, label),
            line(&self.server),
            plural(self.matched, "client message", "client messages"),
            plural(self.answered, "recorded answer", "recorded answers"),
        );
        for p in &self.problems {
            out.push_str(&format!("  {}\n", line(p)));
        }
        if let Some(end) = &self.tape_end {
            out.push_str(&format!("  the tape ends here: {}\n", line(end)));
        }
        for n in &self.notes {
            out.push_str(&format!("  note: {}\n", line(n)));
        }
        for a in &self.added {
            let at = a
                .line
                .map_or_else(String::new, |l| format!(" (tape line {l})"));
            let tool = a
                .tool
                .as_deref()
                .map_or_else(String::new, |t| format!(" {t}"));
            out.push_str(&line(&format!("  added{at}: {}{tool}", a.method)));
            out.push('\n');
        }
        if let Some(m) = &self.mismatch {
            let at = m
                .line
                .map(|l| format!(" (tape line {l})"))
                .unwrap_or_default();
            out.push_str(&format!(
                "  expected {}{at}\n  got      {}\n",
                line(&m.expected),
                line(&m.got)
            ));
            if let Some(later) = m.later_line {
                out.push_str(&format!(
                    "  what came matches tape line {later}, later in the script: the client skipped what comes before it\n"
                ));
            }
            for l in m.diff.lines() {
                out.push_str(&format!("  {}\n", paint.diff_line(&line(l))));
            }
        }
        for l in &self.leftovers {
            out.push_str(&format!(
                "  never sent (tape line {}): {}\n",
                l.line,
                line(&l.summary)
            ));
        }
        for l in &self.unused {
            out.push_str(&format!(
                "  unused (tape line {}): {}\n",
                l.line,
                line(&l.summary)
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_a_verdict_shows_is_escaped() {
        let v = Verdict {
            server: "s\u{1b}]0;x\u{7}".into(),
            tape_end: Some("it holds no answer to tools/call #1 \u{1b}[2J\n  ok forged".into()),
            problems: vec!["\u{9b}31m".into()],
            notes: vec!["\u{202e}txt".into()],
            unused: vec![Leftover {
                line: 3,
                summary: "tools/call \u{1b}[2J".into(),
            }],
            ..Verdict::default()
        };
        let text = v.describe();
        for c in text.chars() {
            assert!(
                c == '\n' || !crate::term::is_dangerous(c),
                "raw {c:?} in {text:?}"
            );
        }
        assert!(!text.contains("\n  ok forged"), "a forged line: {text}");
    }

    #[test]
    fn colour_adds_only_sgr_codes_around_escaped_text() {
        let v = Verdict {
            server: "s\u{1b}[2J".into(),
            mismatch: Some(Mismatch {
                line: Some(4),
                expected: "tools/call \u{1b}]0;t\u{7}".into(),
                got: "x".into(),
                diff: "--- expected\n+++ got\n@@ -1 +1 @@\n-\"\u{1b}[31m\"\n+\"b\"\n".into(),
                later_line: None,
            }),
            ..Verdict::default()
        };
        let plain = v.describe();
        let coloured = v.render(Paint::COLOUR);
        assert!(
            coloured.starts_with("\u{1b}[1m\u{1b}[31mDIVERGED\u{1b}[0m server `s\\x1b[2J`"),
            "{coloured:?}"
        );
        assert!(
            coloured.contains("\u{1b}[31m-\"\\x1b[31m\"\u{1b}[0m"),
            "{coloured:?}"
        );
        assert!(
            coloured.contains("\u{1b}[32m+\"b\"\u{1b}[0m"),
            "{coloured:?}"
        );
        // Without the SGR codes it is the plain text, which holds no raw control.
        let sgr = regex::Regex::new("\u{1b}\\[[0-9;]*m").expect("regex");
        assert_eq!(sgr.replace_all(&coloured, ""), plain);
        assert!(
            !plain
                .chars()
                .any(|c| c != '\n' && crate::term::is_dangerous(c))
        );
        assert_eq!(v.line(), Some(4));
    }
}
