//! The recorded request most like a live one nothing matched, and the mismatch a verdict
//! keeps for it: shared by the sessionless exchanges and `--match any`.

use crate::matcher::{self, Matcher};
use crate::message::{self, Message};
use crate::upstream::replay::summary;
use crate::verdict::Mismatch;

/// The recorded request (with its tape line) most like `live`: the same method and
/// `params.name`, else the same method, else the first.
pub fn closest<'a>(
    live: &Message,
    recorded: impl Iterator<Item = (usize, &'a Message)> + Clone,
) -> Option<(usize, &'a Message)> {
    let name = |m: &Message| message::raw_member(m.text(), &["params", "name"]).map(str::to_owned);
    let same_method = |r: &(usize, &Message)| r.1.method() == live.method();
    recorded
        .clone()
        .filter(same_method)
        .find(|r| name(r.1) == name(live))
        .or_else(|| recorded.clone().find(same_method))
        .or_else(|| recorded.clone().next())
}

/// The verdict's account of `live`, which matched nothing: `found` (the closest) as the
/// expected message, with a diff of the two as the matcher compares them.
pub fn mismatch(matcher: &Matcher, found: Option<(usize, &Message)>, live: &Message) -> Mismatch {
    let got = summary(live);
    match found {
        Some((line, recorded)) => Mismatch {
            line: Some(line),
            expected: summary(recorded),
            got,
            diff: matcher::diff(
                &matcher.normalize(recorded),
                &matcher.normalize(live),
                &format!("closest (tape line {line})"),
                "got",
            ),
            later_line: None,
        },
        None => Mismatch {
            line: None,
            expected: "a recorded request".into(),
            got,
            diff: String::new(),
            later_line: None,
        },
    }
}
