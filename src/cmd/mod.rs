//! One file per subcommand; each is `impl cli::X { pub fn run(self) -> Result<Outcome> }`,
//! and [`crate::outcome::exit`] alone turns that into the exit status.

pub mod approvals;
pub mod call;
pub mod check;
pub mod commitments;
pub mod diff;
pub mod export;
pub mod help;
pub mod import;
pub mod install;
pub mod list;
pub mod note;
pub mod proxy;
pub mod record;
pub mod redact;
pub mod replay;
pub mod scan;
pub mod servers;
pub mod show;
pub mod tools;
pub mod verify;
pub mod view;

use crate::cli::{Cli, Command};
use crate::error::Result;
use crate::outcome::Outcome;

impl Cli {
    /// Runs the chosen subcommand.
    pub fn run(self) -> Result<Outcome> {
        crate::style::init(self.color);
        match self.command {
            Command::Record(c) => c.run(),
            Command::Replay(c) => c.run(),
            Command::Verify(c) => c.run(),
            Command::Proxy(c) => c.run(),
            Command::Call(c) => c.run(),
            Command::Tools(c) => c.run(),
            Command::Servers(c) => c.run(),
            Command::Redact(c) => c.run(),
            Command::Show(c) => c.run(),
            Command::View(c) => c.run(),
            Command::Diff(c) => c.run(),
            Command::Check(c) => c.run(),
            Command::Export(c) => c.run(),
            Command::Note(c) => c.run(),
            Command::List(c) => c.run(),
            Command::Install(c) => c.run(),
            Command::Uninstall(c) => c.run(),
            Command::Import(c) => c.run(),
            Command::Scan(c) => c.run(),
            Command::Approvals(c) => c.run(),
            Command::Approve(c) => c.run(),
            Command::Deny(c) => c.run(),
            Command::Commitments(c) => c.run(),
            Command::Completions(c) => c.run(),
            Command::Man(c) => c.run(),
        }
    }
}

/// Writes a file a command made (a report, an export, a page) under the rules of
/// [`crate::tape::safety`] (never through a symlink, never into a FIFO; `mode` also when
/// it existed), and never over one of the `inputs` it was made from (the same file:
/// device and inode; a usage error). `what` names it in the error (`the report`).
pub fn write_file(
    path: &std::path::Path,
    bytes: &[u8],
    mode: u32,
    what: &str,
    inputs: &[&std::path::Path],
) -> Result<()> {
    use crate::tape::safety::{self, OpenError};
    use std::os::unix::fs::MetadataExt;
    if let Ok(out) = std::fs::metadata(path) {
        for input in inputs {
            let same = std::fs::metadata(input)
                .is_ok_and(|i| (i.dev(), i.ino()) == (out.dev(), out.ino()));
            if same {
                return Err(crate::error::Error::Usage(format!(
                    "`{}` is the tape `{}` itself: {what} would overwrite it (write it to another file)",
                    path.display(),
                    input.display()
                )));
            }
        }
    }
    match safety::write_file(path, bytes, mode) {
        Ok(()) => Ok(()),
        Err(OpenError::Refused(why)) => Err(crate::error::TapeError::Refused {
            path: path.to_path_buf(),
            why,
        }
        .into()),
        Err(OpenError::Io(source)) => Err(crate::error::Error::Io {
            what: format!("cannot write {what} `{}`", path.display()),
            source,
        }),
    }
}

/// Writes a command's output to `--output FILE` ([`write_file`]) or to stdout.
pub fn write_output(
    output: Option<&std::path::Path>,
    bytes: &[u8],
    mode: u32,
    what: &str,
    inputs: &[&std::path::Path],
) -> Result<()> {
    use std::io::Write;
    match output {
        Some(file) => write_file(file, bytes, mode, what, inputs),
        None => std::io::stdout()
            .lock()
            .write_all(bytes)
            .map_err(crate::error::Error::Stdout),
    }
}

/// Prints shell lines that set `vars` (value `None`: unset) for another shell.
pub fn print_exports(vars: &[(&str, Option<String>)]) {
    for (name, value) in vars {
        match value {
            Some(v) => println!("export {name}={}", shell_quote(v)),
            None => println!("unset {name}"),
        }
    }
}

/// `value` quoted for a POSIX shell: `'…'`, or — when it holds a character a terminal
/// would obey ([`crate::term::is_dangerous`]) — bash/zsh's `$'…'` with those characters'
/// bytes as `\xHH`, so the line is still exact and never drives the terminal.
pub fn shell_quote(value: &str) -> String {
    if !value.chars().any(crate::term::is_dangerous) {
        return format!("'{}'", value.replace('\'', r"'\''"));
    }
    dollar_quote(value)
}

/// bash/zsh's `$'…'`: controls as `\xHH` (newline and tab as `\n`, `\t`), quotes and
/// backslashes escaped.
fn dollar_quote(value: &str) -> String {
    let mut out = String::from("$'");
    for c in value.chars() {
        match c {
            '\\' | '\'' => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if crate::term::is_dangerous(c) => {
                let mut buf = [0; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("\\x{b:02x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// A command line for a POSIX shell to read back word for word: each word as it is when
/// it holds only characters no shell treats specially (letters, digits, `_@%+=:,./-`),
/// else quoted with [`shell_quote`] (so `a;b`, `$HOME`, a quote or a space stay one
/// literal word).
pub fn shell_words(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            let plain = !w.is_empty()
                && w.chars()
                    .all(|c| c.is_alphanumeric() || "_@%+=:,./-".contains(c));
            // A newline or tab inside '…' would be shown escaped (`\n`) where the line is
            // printed for people, and read back as two characters: `$'…'` says them as
            // escapes a shell reads back.
            match () {
                () if plain => w.clone(),
                () if w.contains(['\n', '\t']) => dollar_quote(w),
                () => shell_quote(w),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::{shell_quote, shell_words};

    #[test]
    fn a_command_line_reads_back_word_for_word() {
        let words: Vec<String> = ["python", "-c", "a;b", "$HOME", "it's", "a b", "", "x=1,y"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            shell_words(&words),
            r"python -c 'a;b' '$HOME' 'it'\''s' 'a b' '' x=1,y"
        );
        let words: Vec<String> = ["a\nb", "\t"].map(String::from).to_vec();
        assert_eq!(shell_words(&words), r"$'a\nb' $'\t'");
    }

    #[test]
    fn exported_values_are_exact_and_never_drive_a_terminal() {
        assert_eq!(shell_quote("/tmp/a b"), "'/tmp/a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(
            shell_quote("d\u{1b}]0;X\u{7}\u{9b}'\\"),
            r"$'d\x1b]0;X\x07\xc2\x9b\'\\'"
        );
    }
}
