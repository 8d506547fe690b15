//! `mcptape completions SHELL` and `mcptape man`: the command line's own description (the
//! clap definition in [`crate::cli`]) as a shell's completion script or a roff manual
//! page, so that they never drift from `--help`.

use std::io::Write;

use clap::CommandFactory;

use crate::cli::{self, Cli};
use crate::error::{Error, Result};
use crate::outcome::Outcome;

/// Writes `bytes` to stdout; a closed stdout (`| head`) is no error of ours.
fn print(bytes: &[u8]) -> Result<Outcome> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => Ok(Outcome::Ok),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(Outcome::Ok),
        Err(source) => Err(Error::Io {
            what: "cannot write to stdout".into(),
            source,
        }),
    }
}

impl cli::Completions {
    /// Prints the completion script for the shell.
    pub fn run(self) -> Result<Outcome> {
        let mut script = Vec::new();
        clap_complete::generate(self.shell, &mut Cli::command(), "mcptape", &mut script);
        print(&script)
    }
}

impl cli::Man {
    /// Prints the manual page of mcptape, or of one of its subcommands
    /// (`mcptape-record(1)`, as git names its pages).
    pub fn run(self) -> Result<Outcome> {
        let mut cmd = Cli::command();
        cmd.build();
        let page_of = match &self.subcommand {
            None => cmd,
            Some(name) => {
                // clap's own `help` subcommand has no page.
                let page = |s: &&clap::Command| s.get_name() != "help";
                let Some(sub) = cmd.find_subcommand(name).filter(page) else {
                    let names: Vec<&str> = cmd
                        .get_subcommands()
                        .filter(page)
                        .map(|s| s.get_name())
                        .collect();
                    return Err(Error::Usage(format!(
                        "no subcommand `{}`: the pages are {}",
                        name,
                        names.join(", ")
                    )));
                };
                let full = format!("mcptape-{}", sub.get_name());
                sub.clone()
                    .name(full)
                    .bin_name(format!("mcptape {}", sub.get_name()))
                    .version(env!("CARGO_PKG_VERSION"))
            }
        };
        let mut page = Vec::new();
        render(page_of, &mut page).map_err(|source| Error::Io {
            what: "cannot render the manual page".into(),
            source,
        })?;
        print(&page)
    }
}

/// The page: clap_mangen's sections, but the text after the options (`after_help`: notes,
/// the exit-status and environment lists, laid out in columns for `--help`) as sections
/// of their own in no-fill mode, since roff would refill its lines into one paragraph.
fn render(cmd: clap::Command, page: &mut Vec<u8>) -> std::io::Result<()> {
    let after = cmd
        .get_after_long_help()
        .or_else(|| cmd.get_after_help())
        .map(|t| t.to_string());
    let cmd = cmd.after_help(None::<&str>).after_long_help(None::<&str>);
    let man = clap_mangen::Man::new(cmd.clone());
    man.render_title(page)?;
    man.render_name_section(page)?;
    man.render_synopsis_section(page)?;
    man.render_description_section(page)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(page)?;
    }
    if cmd.get_subcommands().any(|s| !s.is_hide_set()) {
        man.render_subcommands_section(page)?;
    }
    if let Some(after) = after {
        page.extend_from_slice(sections(&after).as_bytes());
    }
    if cmd.get_version().is_some() {
        man.render_version_section(page)?;
    }
    Ok(())
}

/// `after_help` as roff: the paragraphs before `Exit status:` as NOTES, then EXIT STATUS
/// and ENVIRONMENT, each line kept as it is (`.nf`).
fn sections(after: &str) -> String {
    let mut out = String::new();
    let mut open = false;
    let head = |out: &mut String, open: &mut bool, name: &str| {
        if *open {
            out.push_str(".fi\n");
        }
        out.push_str(&format!(".SH \"{name}\"\n.nf\n"));
        *open = true;
    };
    for line in after.lines() {
        match line {
            "Exit status:" => head(&mut out, &mut open, "EXIT STATUS"),
            "Environment:" => head(&mut out, &mut open, "ENVIRONMENT"),
            _ => {
                if !open {
                    head(&mut out, &mut open, "NOTES");
                }
                out.push_str(&roff_line(line));
                out.push('\n');
            }
        }
    }
    if open {
        out.push_str(".fi\n");
    }
    out
}

/// One line of text for roff: backslashes and hyphens escaped, and a leading `.` or `'`
/// kept from reading as a request.
fn roff_line(line: &str) -> String {
    let text = line.replace('\\', "\\e").replace('-', "\\-");
    if text.starts_with('.') || text.starts_with('\'') {
        format!("\\&{text}")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lists_become_sections_kept_line_by_line() {
        let roff =
            sections("Play it back.\n\nExit status:\n  0    ok\n.x -y \\z\nEnvironment:\n  A  b");
        assert_eq!(
            roff,
            ".SH \"NOTES\"\n.nf\nPlay it back.\n\n.fi\n.SH \"EXIT STATUS\"\n.nf\n  0    ok\n\\&.x \\-y \\ez\n.fi\n.SH \"ENVIRONMENT\"\n.nf\n  A  b\n.fi\n"
        );
    }
}
