//! `mcptape diff A B`: two tapes' (or a tape's and a live server's) lists and answers
//! compared ([`crate::diff`]), reported as `--format` says, exit 1 as `--fail-on` says.

use crate::cli::{self, DiffFailOn};
use crate::diff::live::{self, Target};
use crate::diff::{Diff, Options, Side, report};
use crate::error::{Error, Result};
use crate::outcome::Outcome;

impl cli::Diff {
    /// Loads both sides, compares them, writes the report.
    pub fn run(self) -> Result<Outcome> {
        let old_tape = crate::cmd::show::load(&self.old)?;
        let mut inputs = vec![old_tape.path.clone()];
        let old = Side::of_tape(old_tape, self.server.as_deref(), None)?;
        let new = match (&self.new, &self.url) {
            (Some(b), _) => {
                let tape = crate::cmd::show::load(b)?;
                inputs.push(tape.path.clone());
                Side::of_tape(tape, self.server.as_deref(), Some(&old.server))?
            }
            (None, Some(url)) => live::side(
                &Target::Url(url.clone(), self.headers.clone()),
                &old.server,
                self.timeout,
            )?,
            (None, None) if self.live && !self.command.is_empty() => live::side(
                &Target::Command(self.command.clone()),
                &old.server,
                self.timeout,
            )?,
            (None, None) => {
                return Err(Error::Usage(
                    "`mcptape diff` needs B, --url URL or --live -- CMD".into(),
                ));
            }
        };
        let diff = Diff::of(
            &old,
            &new,
            Options {
                structure_only: self.structure_only,
            },
        );
        let paint = match &self.output {
            Some(_) => crate::style::Paint::of_file(),
            None => crate::style::Paint::of(crate::style::Stream::Stdout),
        };
        let inputs: Vec<&std::path::Path> = inputs.iter().map(|p| p.as_path()).collect();
        self.write(
            &report::render(self.format, paint, &diff, &old, &new),
            &inputs,
        )?;
        let fails = match self.fail_on {
            Some(DiffFailOn::Breaking) => diff.count(crate::diff::Class::Breaking) > 0,
            Some(DiffFailOn::Any) => diff.any_change(),
            None => false,
        };
        Ok(if fails {
            Outcome::Differences
        } else {
            Outcome::Ok
        })
    }

    /// Writes the report to `--output` (never through a link), or to stdout.
    fn write(&self, report: &str, inputs: &[&std::path::Path]) -> Result<()> {
        super::write_output(
            self.output.as_deref(),
            report.as_bytes(),
            0o644,
            "the report",
            inputs,
        )
    }
}
