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
                let Some(sub) = cmd.find_subcommand(name) else {
                    let names: Vec<&str> = cmd.get_subcommands().map(|s| s.get_name()).collect();
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
        clap_mangen::Man::new(page_of)
            .render(&mut page)
            .map_err(|source| Error::Io {
                what: "cannot render the manual page".into(),
                source,
            })?;
        print(&page)
    }
}
