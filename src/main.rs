//! The `mcptape` binary: parse, run, map the result to an exit status.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = match mcptape::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() {
                mcptape::error::EXIT_USAGE
            } else {
                0
            });
        }
    };
    match cli.run() {
        Ok(code) => code,
        Err(err) => mcptape::error::report(&err),
    }
}
