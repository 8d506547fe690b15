//! `mcptape commitments verify|check`: a tape's `$commit` entries against the answers it
//! holds, or against an answer given ([`crate::commit::check`]). One line per commitment
//! (its tape line, server, request id and tool) on stdout, then a summary; everything
//! from the tape or the file is escaped before it reaches the terminal.

use std::io::Write;
use std::path::Path;

use crate::cli;
use crate::commit::check::{self, Commitment, Verdict};
use crate::commit::jcs;
use crate::error::{Error, Result};
use crate::outcome::Outcome;
use crate::tape::commit::ALG;

impl cli::Commitments {
    /// Verifies the tape's commitments, or checks an answer against them.
    pub fn run(self) -> Result<Outcome> {
        match self.action {
            cli::CommitmentsAction::Verify { session } => verify(&session),
            cli::CommitmentsAction::Check { session, answer } => check(&session, &answer),
        }
    }
}

/// `line 7 everything #2 echo`: where a commitment is and what it is to.
fn named(c: &Commitment) -> String {
    let mut out = format!("line {} {}", c.line, crate::term::line(&c.server));
    if let Some(id) = &c.entry.id {
        out.push_str(&format!(" #{}", crate::term::line(id)));
    }
    if let Some(tool) = &c.entry.tool {
        out.push(' ');
        out.push_str(&crate::term::line(tool));
    }
    out
}

fn print(text: &str) -> Result<()> {
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(Error::Stdout)
}

fn verify(session: &str) -> Result<Outcome> {
    let tape = super::show::load(session)?;
    let verdicts = check::verify(&tape);
    let mut out = String::new();
    let (mut ok, mut bad, mut unchecked) = (0, 0, 0);
    for (c, verdict) in &verdicts {
        let detail = match verdict {
            Verdict::Ok(line) => {
                ok += 1;
                format!("answer at line {line}")
            }
            Verdict::Mismatch(line, why) => {
                bad += 1;
                format!("the answer at line {line} does not match: {why}")
            }
            Verdict::Unchecked(why) => {
                unchecked += 1;
                why.clone()
            }
        };
        out.push_str(&format!("{}: {} ({detail})\n", named(c), verdict.word()));
    }
    let n = verdicts.len();
    if n == 0 {
        out.push_str(&format!(
            "no commitments in `{}` (record with --commit to write them)\n",
            crate::term::line(&tape.path.display().to_string())
        ));
    } else {
        out.push_str(&format!(
            "{n} commitment{}: {ok} ok, {bad} mismatch{}, {unchecked} not checkable\n",
            if n == 1 { "" } else { "s" },
            if bad == 1 { "" } else { "es" },
        ));
    }
    print(&out)?;
    Ok(if bad > 0 {
        Outcome::Differences
    } else {
        Outcome::Ok
    })
}

fn check(session: &str, answer: &Path) -> Result<Outcome> {
    let text = read_answer(answer)?;
    let shown = crate::term::line(&answer.display().to_string()).into_owned();
    let result = check::result_of(text.trim())
        .map_err(|why| Error::Usage(format!("--answer `{shown}`: {why}")))?;
    let sha256 = jcs::commitment(result).map_err(|refusal| {
        Error::Usage(format!("--answer `{shown}` has no commitment: {refusal}"))
    })?;
    let tape = super::show::load(session)?;
    let all = check::commitments(&tape);
    let hits = check::matching(&all, &sha256);
    let mut out = format!("the answer's commitment: {ALG} {sha256}\n");
    for c in &hits {
        out.push_str(&format!("matches {}\n", named(c)));
    }
    if hits.is_empty() {
        out.push_str(&format!(
            "it matches none of the tape's {} commitment{}\n",
            all.len(),
            if all.len() == 1 { "" } else { "s" }
        ));
    }
    print(&out)?;
    Ok(if hits.is_empty() {
        Outcome::Differences
    } else {
        Outcome::Ok
    })
}

/// The answer file's text: a regular file (never a FIFO that would block), UTF-8.
fn read_answer(path: &Path) -> Result<String> {
    let shown = crate::term::line(&path.display().to_string()).into_owned();
    let io = |source| Error::Io {
        what: format!("cannot read --answer `{shown}`"),
        source,
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_file() {
        return Err(Error::Usage(format!(
            "--answer `{shown}` is not a regular file"
        )));
    }
    let bytes = std::fs::read(path).map_err(io)?;
    String::from_utf8(bytes)
        .map_err(|e| Error::Usage(format!("--answer `{shown}` is not UTF-8 text: {e}")))
}
