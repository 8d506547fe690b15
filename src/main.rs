//! The `mcptape` binary: parse, run, and end through the one exit table
//! ([`mcptape::outcome::exit`]).

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let result = match mcptape::Cli::try_parse() {
        Ok(cli) => cli.run(),
        Err(err) => mcptape::outcome::parse_failed(err),
    };
    mcptape::outcome::exit(result)
}
