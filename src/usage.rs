//! What a command line clap refuses comes to, when mcptape can say more than clap: a
//! forgotten `--` before the command that `record`, `replay`, `verify` and `proxy` run.
//!
//! `mcptape record demo python agent.py` reads `python` as an unexpected argument. The
//! hint is given only when the same line with `--` put before that argument parses, so it
//! never proposes a line that clap would refuse too; it shows that corrected line, each
//! word quoted for a POSIX shell where it needs it ([`crate::cmd::shell_words`]).
//!
//! clap quotes the arguments it refuses as they are: [`escaped_refusal`] has it word the
//! same refusal for the arguments escaped, so no control character reaches the terminal.

use std::ffi::OsString;

use clap::Parser;
use clap::error::{ContextKind, ContextValue, ErrorKind};

use crate::cli::Cli;

/// The subcommands whose trailing command follows `--`.
const WRAPPING: [&str; 4] = ["record", "replay", "verify", "proxy"];

/// When clap refused `args` (the whole command line, program first) because the command a
/// subcommand runs was not put after `--`: the message that says so, with the corrected
/// line.
pub fn missing_dashdash(args: &[OsString], err: &clap::Error) -> Option<String> {
    if err.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(found)) = err.get(ContextKind::InvalidArg) else {
        return None;
    };
    // A flag clap does not know is a typo more often than a command.
    if found.starts_with('-') {
        return None;
    }
    // Already past a `--`: nothing to put before it.
    let dashdash = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let sub = subcommand_at(args);
    if !WRAPPING
        .iter()
        .any(|w| args.get(sub).is_some_and(|a| a == w))
    {
        return None;
    }
    // The first place where `--` makes the line parse (the word may also be a flag's
    // value earlier on: `--server node node server.js`).
    let fixed = (sub + 1..dashdash.max(sub + 1))
        .filter(|&at| args[at].to_string_lossy() == *found)
        .map(|at| {
            let mut fixed: Vec<OsString> = args[..at].to_vec();
            fixed.push("--".into());
            fixed.extend(args[at..].iter().cloned());
            fixed
        })
        .find(|fixed| Cli::try_parse_from(fixed).is_ok())?;
    let shown: Vec<String> = std::iter::once("mcptape".to_owned())
        .chain(fixed[1..].iter().map(|a| a.to_string_lossy().into_owned()))
        .collect();
    Some(format!(
        "`{found}` is not an argument of `mcptape {}`: put `--` before the command it runs: `{}`",
        args[sub].to_string_lossy(),
        crate::cmd::shell_words(&shown)
    ))
}

/// clap's refusal of `args` as clap would word it for the same line with each argument's
/// control and bidi characters escaped ([`crate::term::line`]), so that its text quotes
/// none raw and can keep its colour; `err` itself when nothing needed escaping or the
/// escaped line is refused differently (then [`crate::style::print_clap`] escapes it).
pub fn escaped_refusal(args: &[OsString], err: clap::Error) -> clap::Error {
    let dangerous = |a: &OsString| {
        a.to_str()
            .is_some_and(|a| a.chars().any(crate::term::is_dangerous) || a.contains(['\n', '\t']))
    };
    if !args.iter().any(dangerous) {
        return err;
    }
    let escaped: Vec<OsString> = args
        .iter()
        .map(|a| match a.to_str() {
            Some(s) => OsString::from(crate::term::line(s).into_owned()),
            None => a.clone(),
        })
        .collect();
    match Cli::try_parse_from(&escaped) {
        Err(again) if again.kind() == err.kind() => again,
        _ => err,
    }
}

/// Where the subcommand is: the first argument that is not a global option (`--color
/// WHEN`, `--color=WHEN`) or its value.
fn subcommand_at(args: &[OsString]) -> usize {
    let mut at = 1;
    while let Some(arg) = args.get(at) {
        if arg == "--color" {
            at += 2;
        } else if arg.to_str().is_some_and(|a| a.starts_with("--color=")) {
            at += 1;
        } else {
            break;
        }
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hint(line: &str) -> Option<String> {
        let args: Vec<OsString> = line.split(' ').map(OsString::from).collect();
        let err = Cli::try_parse_from(&args).expect_err(line);
        missing_dashdash(&args, &err)
    }

    #[test]
    fn a_command_without_dashdash_gets_the_corrected_line() {
        let h = hint("mcptape record demo python agent.py").expect("a hint");
        assert!(h.contains("mcptape record demo -- python agent.py"), "{h}");
        let h = hint("mcptape proxy --server x node server.js --port 1").expect("a hint");
        assert!(
            h.contains("mcptape proxy --server x -- node server.js --port 1"),
            "{h}"
        );
        let h = hint("mcptape proxy --server node node server.js").expect("a hint");
        assert!(
            h.contains("mcptape proxy --server node -- node server.js"),
            "{h}"
        );
        let h = hint("mcptape verify demo ./server").expect("a hint");
        assert!(h.contains("mcptape verify demo -- ./server"), "{h}");
        let h = hint("mcptape replay demo npm test").expect("a hint");
        assert!(h.contains("mcptape replay demo -- npm test"), "{h}");
        let h = hint("mcptape --color never record demo python agent.py").expect("a hint");
        assert!(
            h.contains("`mcptape --color never record demo -- python agent.py`"),
            "{h}"
        );
        let h = hint("mcptape --color=always record demo python agent.py").expect("a hint");
        assert!(
            h.contains("`mcptape --color=always record demo -- python agent.py`"),
            "{h}"
        );
    }

    #[test]
    fn other_refusals_get_no_hint() {
        // An unknown flag is not a command; `show` runs none; past `--` all is the command.
        assert_eq!(hint("mcptape record demo --nope"), None);
        assert_eq!(hint("mcptape show demo extra"), None);
        assert_eq!(hint("mcptape record"), None);
    }
}
