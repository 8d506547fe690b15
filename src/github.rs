//! GitHub workflow commands (`--format github`): `::error file=F,line=L,title=T::MSG`,
//! one line each, which the Actions runner turns into annotations on the file and line.
//!
//! Escaping follows the runner's rules (actions/toolkit `command.ts`): in the message `%`
//! becomes `%25`, `\r` `%0D` and `\n` `%0A`; in a property value `:` and `,` become `%3A`
//! and `%2C` as well. After that, every other character a terminal would obey is made
//! visible as in [`crate::term::block`] (the runner's log is also read in terminals, and
//! a tape must not drive them), so an annotation is always exactly one line with no
//! control character in it. Nothing here is ever coloured.
//!
//! See <https://docs.github.com/en/actions/reference/workflow-commands-for-github-actions>.

use std::fmt;
use std::path::{Path, PathBuf};

/// An annotation's level: the workflow command's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// `::error`: fails the check's look, listed first.
    Error,
    /// `::warning`.
    Warning,
    /// `::notice`.
    Notice,
}

impl Level {
    fn as_str(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Notice => "notice",
        }
    }
}

/// One workflow command; its `Display` is the line, without the newline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Annotation {
    /// Its level.
    pub level: Level,
    /// The file it is about (as [`file`] gives it).
    pub file: Option<String>,
    /// The line in that file, 1-based.
    pub line: Option<usize>,
    /// A short title.
    pub title: Option<String>,
    /// The message (may span lines).
    pub message: String,
}

impl Annotation {
    /// An annotation with only a level and a message.
    pub fn new(level: Level, message: impl Into<String>) -> Annotation {
        Annotation {
            level,
            file: None,
            line: None,
            title: None,
            message: message.into(),
        }
    }

    /// About this file (a tape path), at this line.
    pub fn at(mut self, file: &Path, line: Option<usize>) -> Annotation {
        self.file = Some(self::file(file));
        self.line = line;
        self
    }

    /// With this title.
    pub fn titled(mut self, title: impl Into<String>) -> Annotation {
        self.title = Some(title.into());
        self
    }
}

impl fmt::Display for Annotation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "::{}", self.level.as_str())?;
        let props = [
            ("file", self.file.clone()),
            ("line", self.line.map(|l| l.to_string())),
            ("title", self.title.clone()),
        ];
        let mut sep = " ";
        for (name, value) in props {
            if let Some(v) = value {
                write!(f, "{sep}{name}={}", property(&v))?;
                sep = ",";
            }
        }
        write!(f, "::{}", data(&self.message))
    }
}

/// A message, escaped for a workflow command.
pub fn data(s: &str) -> String {
    let runner = s
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A");
    crate::term::block(&runner).into_owned()
}

/// A property value, escaped for a workflow command.
pub fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

/// A tape's path as an annotation names it: relative to the working directory when it is
/// under it (the runner matches annotations to the repository's files from its root,
/// where a job's steps run), as given otherwise.
pub fn file(path: &Path) -> String {
    let under = |cwd: &Path, path: &Path| path.strip_prefix(cwd).ok().map(Path::to_path_buf);
    let shown: PathBuf = std::env::current_dir()
        .ok()
        .and_then(|cwd| {
            under(&cwd, path).or_else(|| {
                // The same directory by another name (a symlinked /tmp).
                let cwd = cwd.canonicalize().ok()?;
                under(&cwd, &path.canonicalize().ok()?)
            })
        })
        .unwrap_or_else(|| path.to_path_buf());
    shown.to_string_lossy().into_owned()
}

/// The annotations, one line each, as one string.
pub fn lines(annotations: &[Annotation]) -> String {
    annotations.iter().map(|a| format!("{a}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_and_properties_are_escaped_by_the_runner_rules() {
        let a = Annotation::new(Level::Error, "50% off\r\nnext: a,b")
            .at(Path::new("/nowhere/t:1,2.ndjson"), Some(7))
            .titled("mcptape: verify");
        assert_eq!(
            a.to_string(),
            "::error file=/nowhere/t%3A1%2C2.ndjson,line=7,title=mcptape%3A verify::50%25 off%0D%0Anext: a,b"
        );
    }

    #[test]
    fn controls_never_reach_the_line_raw() {
        let a = Annotation::new(Level::Warning, "x\u{1b}[2J\u{9b}y\u{202e}")
            .titled("t\u{1b}]0;z\u{7}\n");
        let text = a.to_string();
        assert!(
            !text
                .chars()
                .any(|c| c.is_control() || crate::term::is_dangerous(c)),
            "{text:?}"
        );
        assert_eq!(
            text,
            "::warning title=t\\x1b]0;z\\x07%0A::x\\x1b[2J\\u{9b}y\\u{202e}"
        );
        assert_eq!(
            Annotation::new(Level::Notice, "n").to_string(),
            "::notice::n"
        );
    }
}
