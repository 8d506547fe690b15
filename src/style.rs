//! Colour for people: when text is coloured, and in which colour each part of it is.
//!
//! One decision per stream, made once at start-up ([`init`]) from `--color` and the
//! environment: `always` and `never` are what they say; `auto` (the default) colours a
//! stream only when it is a terminal (stdout and stderr decided apart) whose `TERM` is not
//! `dumb`, unless `NO_COLOR` is set to anything non-empty (never), `CLICOLOR_FORCE` to
//! anything non-empty but `0` (always), or `CLICOLOR` to `0` (never). The flag, when given
//! as `always` or `never`, wins over the environment (<https://no-color.org>: a
//! per-instance flag overrides it). The same decision colours clap's help and errors.
//!
//! A [`Paint`] is the decision for one stream; [`Paint::paint`] wraps a piece of text in
//! the SGR codes of its [`Role`] (the one table of colours, [`Role::style`]), or returns
//! it unchanged when the stream gets no colour, so that uncoloured output is byte for byte
//! what it was before colour existed.
//!
//! Invariant: only text that is already escaped ([`crate::term`]) is painted. Outside
//! text is escaped first and styled after, so the only escape sequences that reach a
//! terminal are the SGR codes written here; a tape can never inject one. JSON, JUnit and
//! GitHub formats are never painted.

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::sync::OnceLock;

use anstyle::{AnsiColor, Effects, Style};

use crate::cli::ColorWhen;

/// Where a piece of text is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// What a piece of text is, which decides its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A pass: `ok`, verify's `same`.
    Pass,
    /// A failure: `DIVERGED`, `INCOMPLETE`, `FAILED`, `changed`, `new-error`.
    Fail,
    /// Not a failure, worth a look: `UNUSED`, `skipped`.
    Warn,
    /// A diff's added line (`+`), a new value.
    Added,
    /// A diff's removed line (`-`), an old value.
    Removed,
    /// A diff's hunk header (`@@ … @@`).
    Hunk,
    /// A diff's file header (`---`, `+++`), a heading.
    Heading,
    /// A client → server message (`show`'s `→`).
    Send,
    /// A server → client message (`show`'s `←`).
    Recv,
    /// What is there for completeness: lifecycle entries, a count of nothing.
    Dim,
}

impl Role {
    /// The one table of colours.
    pub fn style(self) -> Style {
        let fg = |c: AnsiColor| Style::new().fg_color(Some(c.into()));
        match self {
            Role::Pass => fg(AnsiColor::Green),
            Role::Fail => fg(AnsiColor::Red).effects(Effects::BOLD),
            Role::Warn => fg(AnsiColor::Yellow),
            Role::Added => fg(AnsiColor::Green),
            Role::Removed => fg(AnsiColor::Red),
            Role::Hunk => fg(AnsiColor::Cyan).effects(Effects::DIMMED),
            Role::Heading => Style::new().effects(Effects::BOLD),
            Role::Send => fg(AnsiColor::Cyan),
            Role::Recv => fg(AnsiColor::Magenta),
            Role::Dim => Style::new().effects(Effects::DIMMED),
        }
    }
}

/// Whether one stream gets colour: hand it the pieces to colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paint {
    on: bool,
}

impl Paint {
    /// No colour: text comes back unchanged.
    pub const PLAIN: Paint = Paint { on: false };
    /// Colour, whatever the stream (for tests and forced output).
    pub const COLOUR: Paint = Paint { on: true };

    /// The decision for `stream` (made by [`init`], or `auto` when nothing decided).
    pub fn of(stream: Stream) -> Paint {
        let d = decided();
        Paint {
            on: match stream {
                Stream::Stdout => d.stdout,
                Stream::Stderr => d.stderr,
            },
        }
    }

    /// The decision for a file or a pipe that is not a terminal (`verify --output`):
    /// colour only when forced (`--color always`, `CLICOLOR_FORCE`).
    pub fn of_file() -> Paint {
        Paint {
            on: decided().forced,
        }
    }

    /// True when this stream gets colour.
    pub fn is_on(self) -> bool {
        self.on
    }

    /// `text` (already escaped) in the colour of `role`.
    pub fn paint(self, role: Role, text: &str) -> String {
        if !self.on || text.is_empty() {
            return text.to_owned();
        }
        let style = role.style();
        format!("{style}{text}{style:#}")
    }

    /// One line of a unified diff (already escaped), coloured by what it is.
    pub fn diff_line(self, line: &str) -> String {
        let role = if line.starts_with("---") || line.starts_with("+++") {
            Role::Heading
        } else if line.starts_with("@@") {
            Role::Hunk
        } else if line.starts_with('+') {
            Role::Added
        } else if line.starts_with('-') {
            Role::Removed
        } else {
            return line.to_owned();
        };
        self.paint(role, line)
    }
}

/// The decisions, made once.
#[derive(Debug, Clone, Copy)]
struct Decided {
    stdout: bool,
    stderr: bool,
    /// Colour even where there is no terminal.
    forced: bool,
}

static DECIDED: OnceLock<Decided> = OnceLock::new();

/// Decides colour for this process from `--color` and the environment. The first call
/// wins (the command line is read once); before any call, `auto` applies.
pub fn init(when: ColorWhen) {
    let _ = DECIDED.set(decide_all(when));
}

fn decided() -> Decided {
    *DECIDED.get_or_init(|| decide_all(ColorWhen::Auto))
}

fn decide_all(when: ColorWhen) -> Decided {
    let var = |name: &str| std::env::var_os(name);
    Decided {
        stdout: decide(when, std::io::stdout().is_terminal(), &var),
        stderr: decide(when, std::io::stderr().is_terminal(), &var),
        forced: decide(when, false, &var),
    }
}

/// The rule of this module's note, for one stream: is it a terminal, and what the
/// environment holds.
fn decide(when: ColorWhen, terminal: bool, var: &dyn Fn(&str) -> Option<OsString>) -> bool {
    let set = |name: &str| var(name).filter(|v| !v.is_empty());
    match when {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto if set("NO_COLOR").is_some() => false,
        ColorWhen::Auto if set("CLICOLOR_FORCE").is_some_and(|v| v != "0") => true,
        ColorWhen::Auto if var("CLICOLOR").is_some_and(|v| v == "0") => false,
        ColorWhen::Auto => terminal && var("TERM").is_some_and(|t| t != "dumb"),
    }
}

/// `--color WHEN` read from the raw arguments, before clap parses them, so that clap's
/// own help and errors follow it: the last `--color` before a `--`, `auto` when there is
/// none or its value is not one (clap then says so).
pub fn scan_args(args: impl IntoIterator<Item = OsString>) -> ColorWhen {
    let mut when = ColorWhen::Auto;
    let mut args = args.into_iter().skip(1);
    while let Some(arg) = args.next() {
        let Some(arg) = arg.to_str() else { continue };
        let value = match arg {
            "--" => break,
            "--color" => args.next().and_then(|v| v.into_string().ok()),
            _ => arg.strip_prefix("--color=").map(str::to_owned),
        };
        if let Some(v) = value {
            when = match v.as_str() {
                "always" => ColorWhen::Always,
                "never" => ColorWhen::Never,
                _ => ColorWhen::Auto,
            };
        }
    }
    when
}

/// Prints clap's help, version or error on the stream clap meant, coloured as decided.
///
/// clap quotes the command line in its errors as given, so its text is escaped
/// ([`crate::term::block`]: every control and bidi character but `\n` and `\t`). clap's
/// own SGR codes cannot be told from a quoted argument's once rendered, so an error that
/// quotes such a character is printed escaped and without colour
/// ([`crate::outcome::parse_failed`] first asks clap again with the arguments escaped,
/// which keeps the colour).
pub fn print_clap(err: &clap::Error) {
    let (stream, paint) = if err.use_stderr() {
        (Stream::Stderr, Paint::of(Stream::Stderr))
    } else {
        (Stream::Stdout, Paint::of(Stream::Stdout))
    };
    let styled = err.render();
    let plain = styled.to_string();
    let text = if paint.is_on() && !plain.chars().any(crate::term::is_dangerous) {
        styled.ansi().to_string()
    } else {
        crate::term::block(&plain).into_owned()
    };
    let _ = match stream {
        Stream::Stdout => std::io::stdout().lock().write_all(text.as_bytes()),
        Stream::Stderr => std::io::stderr().lock().write_all(text.as_bytes()),
    };
}

/// Writes text painted for stderr ([`Paint::of`]`(Stream::Stderr)`) on stderr.
pub fn eprint(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn auto_colours_a_terminal_only_and_follows_the_environment() {
        let term = [("TERM", "xterm")];
        assert!(decide(ColorWhen::Auto, true, &env(&term)));
        assert!(!decide(ColorWhen::Auto, false, &env(&term)));
        assert!(!decide(ColorWhen::Auto, true, &env(&[("TERM", "dumb")])));
        assert!(!decide(ColorWhen::Auto, true, &env(&[])));
        let no = [("TERM", "xterm"), ("NO_COLOR", "1")];
        assert!(!decide(ColorWhen::Auto, true, &env(&no)));
        let empty_no = [("TERM", "xterm"), ("NO_COLOR", "")];
        assert!(decide(ColorWhen::Auto, true, &env(&empty_no)));
        assert!(decide(
            ColorWhen::Auto,
            false,
            &env(&[("CLICOLOR_FORCE", "1")])
        ));
        assert!(!decide(
            ColorWhen::Auto,
            false,
            &env(&[("CLICOLOR_FORCE", "0")])
        ));
        assert!(!decide(
            ColorWhen::Auto,
            false,
            &env(&[("CLICOLOR_FORCE", "")])
        ));
        let both = [("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")];
        assert!(!decide(ColorWhen::Auto, true, &env(&both)));
        let off = [("TERM", "xterm"), ("CLICOLOR", "0")];
        assert!(!decide(ColorWhen::Auto, true, &env(&off)));
    }

    #[test]
    fn the_flag_wins_over_the_environment() {
        let no = [("NO_COLOR", "1"), ("CLICOLOR", "0")];
        assert!(decide(ColorWhen::Always, false, &env(&no)));
        let force = [("CLICOLOR_FORCE", "1"), ("TERM", "xterm")];
        assert!(!decide(ColorWhen::Never, true, &env(&force)));
    }

    #[test]
    fn color_is_read_before_clap_and_stops_at_the_double_dash() {
        let scan = |args: &[&str]| scan_args(args.iter().map(OsString::from));
        assert_eq!(
            scan(&["mcptape", "--color", "always", "show"]),
            ColorWhen::Always
        );
        assert_eq!(
            scan(&["mcptape", "show", "x", "--color=never"]),
            ColorWhen::Never
        );
        assert_eq!(scan(&["mcptape", "--color", "purple"]), ColorWhen::Auto);
        assert_eq!(
            scan(&["mcptape", "replay", "s", "--", "ls", "--color=always"]),
            ColorWhen::Auto
        );
    }

    #[test]
    fn plain_paint_changes_nothing_colour_wraps_in_sgr() {
        assert_eq!(Paint::PLAIN.paint(Role::Fail, "DIVERGED"), "DIVERGED");
        assert_eq!(Paint::PLAIN.diff_line("+  \"a\": 1"), "+  \"a\": 1");
        let red = Paint::COLOUR.paint(Role::Removed, "-x");
        assert_eq!(red, "\u{1b}[31m-x\u{1b}[0m");
        assert_eq!(Paint::COLOUR.diff_line("+y"), "\u{1b}[32m+y\u{1b}[0m");
        assert_eq!(Paint::COLOUR.diff_line(" context"), " context");
        assert!(
            Paint::COLOUR
                .diff_line("@@ -1 +1 @@")
                .starts_with("\u{1b}[2m\u{1b}[36m")
        );
    }
}
