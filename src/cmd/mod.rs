//! One file per subcommand; each is `impl cli::X { pub fn run(self) -> Result<ExitCode> }`.

pub mod call;
pub mod list;
pub mod proxy;
pub mod record;
pub mod redact;
pub mod replay;
pub mod servers;
pub mod show;
pub mod tools;
pub mod verify;

use crate::cli::{Cli, Command};
use crate::error::Result;

impl Cli {
    /// Runs the chosen subcommand.
    pub fn run(self) -> Result<std::process::ExitCode> {
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
            Command::List(c) => c.run(),
        }
    }
}

/// Prints shell lines that set `vars` (value `None`: unset) for another shell.
pub fn print_exports(vars: &[(&str, Option<String>)]) {
    for (name, value) in vars {
        match value {
            Some(v) => println!("export {name}='{}'", v.replace('\'', r"'\''")),
            None => println!("unset {name}"),
        }
    }
}
