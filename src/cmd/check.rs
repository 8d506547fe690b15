//! `mcptape check SESSION`: a CI gate on a recorded run. The rules are checked before
//! the tape is read; the logic is in [`crate::check`]. Exit 1 when a rule fails.

use crate::check::eval::{self, Scope};
use crate::check::rules::Rules;
use crate::check::{CheckError, report};
use crate::cli::{self, CheckFailOn};
use crate::error::{Error, Result};
use crate::exchange::Exchanges;
use crate::outcome::Outcome;
use crate::receipt::{Receipt, ReceiptError};

impl cli::Check {
    /// Checks the tape and writes the report; [`Outcome::Differences`] (exit 1) when a
    /// rule fails.
    pub fn run(self) -> Result<Outcome> {
        let rules = Rules::of(&self).map_err(usage)?;
        let tape = crate::cmd::show::load(&self.session)?;
        let receipt = match rules.fail_on.contains(&CheckFailOn::Diverged) {
            true => Some(self.receipt(&tape)?),
            false => None,
        };
        let exchanges = Exchanges::of(&tape);
        let scope = Scope::new(&tape, &exchanges, &rules.servers).map_err(usage)?;
        let verdicts = eval::run(&scope, &rules, receipt.as_ref()).map_err(usage)?;
        let text = report::render(self.format, &tape.path, &verdicts);
        self.write(&text, &tape.path)?;
        Ok(match verdicts.iter().all(|v| v.pass) {
            true => Outcome::Ok,
            false => Outcome::Differences,
        })
    }

    /// `--receipt`, or the first receipt beside the tape; none at all is an error naming
    /// where it looked. A receipt made for another tape is a usage error naming both
    /// ([`Receipt::load_for`]).
    fn receipt(&self, tape: &crate::tape::Tape) -> Result<Receipt> {
        let load = |path: &std::path::Path| {
            Receipt::load_for(path, tape).map_err(|e| match e {
                other @ ReceiptError::OtherTape { .. } => {
                    Error::Usage(format!("--fail-on diverged: {other}"))
                }
                e => Error::Io {
                    what: format!(
                        "--fail-on diverged: cannot use the receipt `{}`",
                        path.display()
                    ),
                    source: std::io::Error::other(e),
                },
            })
        };
        if let Some(path) = &self.receipt {
            return load(path);
        }
        let beside = Receipt::beside(&tape.path);
        match beside.iter().find(|p| p.exists()) {
            Some(path) => load(path),
            None => Err(usage(CheckError::NoReceipt {
                looked: beside
                    .iter()
                    .map(|p| format!("`{}`", p.display()))
                    .collect::<Vec<_>>()
                    .join(" and "),
            })),
        }
    }

    /// Writes the report to `--output` (0600: it quotes the tape), or to stdout.
    fn write(&self, text: &str, tape: &std::path::Path) -> Result<()> {
        super::write_output(
            self.output.as_deref(),
            text.as_bytes(),
            0o600,
            "the report",
            &[tape],
        )
    }
}

fn usage(e: CheckError) -> Error {
    Error::Usage(e.to_string())
}
