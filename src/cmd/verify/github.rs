//! `verify --format github`: the report as GitHub workflow commands ([`crate::github`]).
//!
//! An `::error` per call that changed, errors now, stopped erroring or could not be
//! played, at the tape line of its recorded request; a `::warning` per skipped call; an
//! `::error` per problem of the run; and a `::notice` with the counts, last (the
//! `::warning` that nothing was compared goes before it: [`super::coverage::amend`]).

use std::path::Path;

use crate::github::{self, Annotation, Level};
use crate::verify::{Class, Played};

/// The annotations, one line each.
pub(super) fn report(
    ran: &super::report::Ran<'_>,
    outcomes: &[Played],
    problems: &[super::report::Problem],
) -> String {
    let tape = ran.tape;
    let mut notes: Vec<Annotation> = outcomes.iter().filter_map(|o| call(tape, o)).collect();
    notes.extend(problems.iter().map(|p| {
        Annotation::new(Level::Error, p.to_string())
            .at(tape, None)
            .titled("mcptape verify: problem")
    }));
    let summary = super::report::counts(outcomes)
        .into_iter()
        .filter(|&(c, n)| n > 0 || matches!(c, Class::Same | Class::Changed))
        .map(|(c, n)| format!("{n} {}", c.as_str()))
        .collect::<Vec<_>>()
        .join(", ");
    if let Some(warning) = ran.coverage.warning() {
        notes.push(
            Annotation::new(Level::Warning, warning).titled("mcptape verify: nothing compared"),
        );
    }
    notes.push(
        Annotation::new(Level::Notice, summary)
            .at(tape, None)
            .titled("mcptape verify"),
    );
    github::lines(&notes)
}

/// The annotation of one call, if it needs one.
fn call(tape: &Path, o: &Played) -> Option<Annotation> {
    let level = match o.class {
        c if c.is_difference() || c == Class::NotPlayed => Level::Error,
        Class::Skipped => Level::Warning,
        _ => return None,
    };
    let mut message = format!(
        "{} (connection `{}`): {}",
        o.title(),
        o.conn,
        o.class.as_str()
    );
    if let Some(r) = &o.reason {
        message.push_str(&format!(": {r}"));
    }
    for d in &o.differences {
        message.push_str(&format!(
            "\n{}: {} → {}",
            super::report::path_of(d),
            super::report::show(&d.old),
            super::report::show(&d.new)
        ));
    }
    Some(
        Annotation::new(level, message)
            .at(tape, Some(o.line))
            .titled(format!("mcptape verify: {}", o.class.as_str())),
    )
}
