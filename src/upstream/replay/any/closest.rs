//! The recorded request most like a live one nothing matched, and the mismatch a verdict
//! keeps for it: shared by the sessionless exchanges and `--match any`.

use crate::matcher::{self, Matcher};
use crate::message::{self, Message};
use crate::upstream::replay::summary;
use crate::verdict::Mismatch;

/// The recorded request (with its tape line) most like `live`: the same method and
/// `params.name`, else the same method; none when no recorded request has its method (a
/// request of another method is nothing like it).
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
}

/// The verdict's account of `live`, which matched nothing: `found` (the closest) as the
/// expected message, with a diff of the two as the matcher compares them; with no
/// closest, a request of its method as expected and no diff.
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
            expected: format!("a recorded {} request", live.method().unwrap_or("?")),
            got,
            diff: String::new(),
            later_line: None,
        },
    }
}

/// Why `live` got no answer when no recorded request of its method exists (`what`:
/// "request", "stateless request").
pub fn no_such_method(server: &str, live: &Message, what: &str) -> String {
    format!(
        "mcptape replay of server `{server}`: no recorded {what} matches {}; the tape holds no {} {what} of server `{server}`",
        summary(live),
        live.method().unwrap_or("?")
    )
}
