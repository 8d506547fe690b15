//! One fault rule, `SELECTOR: EFFECT`, read from its command-line text
//! (`tools/call name=search nth=2: error -32000 "rate limited"`) or built from a file's
//! fields ([`crate::fault::file`]). A bad rule is a [`RuleError`] naming the word that is
//! wrong and what was expected there; the caller adds where the rule came from.

use thiserror::Error;

use crate::tape::fault::FaultEffect;

/// The largest `delay MS`: one day.
pub const MAX_DELAY_MS: u64 = 86_400_000;

/// What is wrong with a rule: the offending word, and what was expected.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
#[error("`{word}`: {expected}")]
pub struct RuleError {
    /// The bad part of the rule, as written (or the field name in a file).
    pub word: String,
    /// What was expected there, for people.
    pub expected: String,
}

fn bad(word: impl Into<String>, expected: impl Into<String>) -> RuleError {
    RuleError {
        word: word.into(),
        expected: expected.into(),
    }
}

/// Which messages a rule picks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selector {
    /// The method; `None` is `*` (any).
    pub method: Option<String>,
    /// The `params.name` (a `tools/call`'s tool, a `prompts/get`'s prompt).
    pub name: Option<String>,
    /// Only the Nth message (1-based) of the connection that matches method and name.
    pub nth: Option<u64>,
    /// The probability that a matching message is picked, in `0..=1`.
    pub p: Option<f64>,
    /// The seed of `p`'s draws; `None`: a seed drawn at random when the plan is loaded.
    pub seed: Option<u64>,
}

/// What a rule does to the messages it picks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// A JSON-RPC error in place of the answer.
    Error {
        /// The error code.
        code: i64,
        /// The error message.
        message: String,
    },
    /// A `tools/call` result with `isError: true` and this text, in place of the answer.
    ToolError {
        /// The text content.
        text: String,
    },
    /// The answer held this long.
    Delay {
        /// Milliseconds.
        ms: u64,
    },
    /// The answer never given.
    Timeout,
    /// The message dropped (a notification either way; a request: never sent, never
    /// answered).
    Drop,
    /// A line that is not JSON in place of the answer.
    Malformed,
    /// The server goes away at the request (on the HTTP front with this status).
    Disconnect {
        /// The HTTP status the HTTP front answers the request with.
        status: Option<u16>,
    },
    /// The answer written in small pieces.
    SlowStream,
}

/// The names of the effects, as written in rules and on tapes.
pub const EFFECTS: &str =
    "error, tool-error, delay, timeout, drop, malformed, disconnect, slow-stream";

impl Effect {
    /// The effect's kind, as written in rules and in `$fault` entries.
    pub fn kind(&self) -> FaultEffect {
        match self {
            Effect::Error { .. } => FaultEffect::Error,
            Effect::ToolError { .. } => FaultEffect::ToolError,
            Effect::Delay { .. } => FaultEffect::Delay,
            Effect::Timeout => FaultEffect::Timeout,
            Effect::Drop => FaultEffect::Drop,
            Effect::Malformed => FaultEffect::Malformed,
            Effect::Disconnect { .. } => FaultEffect::Disconnect,
            Effect::SlowStream => FaultEffect::SlowStream,
        }
    }
}

/// One rule: where it stands among the plan's rules, its text, what it picks, what it does.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// Its number among the plan's rules, from 1.
    pub index: usize,
    /// Its text, as given (or as written back from a file's fields).
    pub text: String,
    /// What it picks.
    pub selector: Selector,
    /// What it does.
    pub effect: Effect,
}

/// The default message of `error CODE` with none given.
pub const DEFAULT_ERROR_MESSAGE: &str = "injected fault";
/// The default text of `tool-error` with none given.
pub const DEFAULT_TOOL_ERROR: &str = "injected tool error";

/// Reads a rule's text.
pub fn parse(text: &str) -> Result<(Selector, Effect), RuleError> {
    let (selector, effect) = split(text)?;
    Ok((parse_selector(selector)?, parse_effect(effect)?))
}

/// Splits `SELECTOR: EFFECT` at the first colon followed by a space (a tool name may hold
/// a colon), or else the first colon.
fn split(text: &str) -> Result<(&str, &str), RuleError> {
    let at = text
        .find(": ")
        .or_else(|| text.find(":\t"))
        .or_else(|| text.find(':'));
    match at {
        Some(at) => Ok((&text[..at], &text[at + 1..])),
        None => Err(bad(
            text,
            "a rule is `SELECTOR: EFFECT`, e.g. `tools/call name=search: error -32000 \"rate limited\"`",
        )),
    }
}

/// Reads the selector words.
pub fn parse_selector(text: &str) -> Result<Selector, RuleError> {
    let mut sel = Selector::default();
    let mut method_seen = false;
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.is_empty() {
        return Err(bad(
            text,
            "a selector: a method or `*`, then name=TOOL, nth=N, p=P, seed=S",
        ));
    }
    for word in words {
        let (key, value) = match word.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (word, None),
        };
        match (key, value) {
            ("method", Some(v)) | (v, None) => {
                if method_seen {
                    return Err(bad(word, "one method per rule (write one rule per method)"));
                }
                method_seen = true;
                if v.is_empty() {
                    return Err(bad(word, "a method name or `*`"));
                }
                sel.method = (v != "*").then(|| v.to_owned());
            }
            ("name", Some(v)) => {
                if v.is_empty() {
                    return Err(bad(word, "name takes the tool's name"));
                }
                sel.name = Some(v.to_owned());
            }
            ("nth", Some(v)) => sel.nth = Some(nth(word, v)?),
            ("p", Some(v)) => sel.p = Some(probability(word, v)?),
            ("seed", Some(v)) => sel.seed = Some(seed(word, v)?),
            _ => {
                return Err(bad(
                    word,
                    "a selector word: a method, `*`, name=TOOL, nth=N, p=P or seed=S",
                ));
            }
        }
    }
    check_selector(&sel)?;
    Ok(sel)
}

/// What every selector must hold, whichever way it was written.
pub fn check_selector(sel: &Selector) -> Result<(), RuleError> {
    if let (Some(s), None) = (sel.seed, sel.p) {
        return Err(bad(
            format!("seed={s}"),
            "seed is the seed of p=P: give p too",
        ));
    }
    Ok(())
}

/// `nth=N`.
pub fn nth(word: &str, v: &str) -> Result<u64, RuleError> {
    match v.parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(bad(word, "nth takes a whole number ≥ 1")),
    }
}

/// `p=P`.
pub fn probability(word: &str, v: &str) -> Result<f64, RuleError> {
    match v.parse::<f64>() {
        Ok(p) if (0.0..=1.0).contains(&p) => Ok(p),
        _ => Err(bad(word, "p takes a probability from 0 to 1, e.g. p=0.25")),
    }
}

/// `seed=S`.
pub fn seed(word: &str, v: &str) -> Result<u64, RuleError> {
    v.parse::<u64>()
        .map_err(|_| bad(word, "seed takes a whole number ≥ 0"))
}

/// Reads the effect and its arguments.
pub fn parse_effect(text: &str) -> Result<Effect, RuleError> {
    let text = text.trim();
    let (word, rest) = match text.find(char::is_whitespace) {
        Some(at) => (&text[..at], text[at..].trim_start()),
        None => (text, ""),
    };
    let none = |effect: Effect| {
        if rest.is_empty() {
            Ok(effect)
        } else {
            Err(bad(rest, format!("`{word}` takes nothing after it")))
        }
    };
    match word {
        "error" => {
            let (code, message) = match rest.find(char::is_whitespace) {
                Some(at) => (&rest[..at], rest[at..].trim_start()),
                None => (rest, ""),
            };
            if code.is_empty() {
                return Err(bad(
                    text,
                    "error takes a code: `error CODE MESSAGE`, e.g. `error -32000 \"rate limited\"`",
                ));
            }
            let code = error_code(code)?;
            let message = match message {
                "" => DEFAULT_ERROR_MESSAGE.to_owned(),
                m => quoted(m)?,
            };
            Ok(Effect::Error { code, message })
        }
        "tool-error" => Ok(Effect::ToolError {
            text: match rest {
                "" => DEFAULT_TOOL_ERROR.to_owned(),
                t => quoted(t)?,
            },
        }),
        "delay" => Ok(Effect::Delay { ms: delay(rest)? }),
        "timeout" => none(Effect::Timeout),
        "drop" => none(Effect::Drop),
        "malformed" => none(Effect::Malformed),
        "slow-stream" => none(Effect::SlowStream),
        "disconnect" => Ok(Effect::Disconnect {
            status: match rest {
                "" => None,
                s => Some(status(s)?),
            },
        }),
        "" => Err(bad(text, format!("an effect after the colon: {EFFECTS}"))),
        _ => Err(bad(word, format!("an effect: {EFFECTS}"))),
    }
}

/// `error CODE`: a whole number (JSON-RPC codes are integers).
pub fn error_code(v: &str) -> Result<i64, RuleError> {
    v.parse::<i64>()
        .map_err(|_| bad(v, "error takes a whole-number code, e.g. -32000"))
}

/// `delay MS`.
pub fn delay(v: &str) -> Result<u64, RuleError> {
    match v.parse::<u64>() {
        Ok(ms) if ms <= MAX_DELAY_MS => Ok(ms),
        _ if v.is_empty() => Err(bad("delay", "delay takes milliseconds, e.g. `delay 1500`")),
        _ => Err(bad(
            v,
            format!("delay takes whole milliseconds from 0 to {MAX_DELAY_MS}"),
        )),
    }
}

/// `disconnect STATUS`.
pub fn status(v: &str) -> Result<u16, RuleError> {
    match v.parse::<u16>() {
        Ok(s) if (100..=599).contains(&s) => Ok(s),
        _ => Err(bad(
            v,
            "disconnect takes an HTTP status from 100 to 599, or nothing",
        )),
    }
}

/// A MESSAGE or TEXT: `"double quoted"` with `\"` and `\\` escapes, or the bare rest.
pub fn quoted(text: &str) -> Result<String, RuleError> {
    let Some(body) = text.strip_prefix('"') else {
        return Ok(text.to_owned());
    };
    let mut out = String::new();
    let mut chars = body.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some((_, e @ ('"' | '\\'))) => out.push(e),
                Some((_, 'n')) => out.push('\n'),
                Some((_, e)) => {
                    out.push('\\');
                    out.push(e);
                }
                None => return Err(bad(text, "a closing `\"`")),
            },
            '"' => {
                let after = body[at + 1..].trim();
                if !after.is_empty() {
                    return Err(bad(after, "nothing after the closing `\"`"));
                }
                return Ok(out);
            }
            c => out.push(c),
        }
    }
    Err(bad(text, "a closing `\"`"))
}

/// The rule text of a selector and an effect, as a person would write it (for rules
/// read from a file's fields).
pub fn text_of(sel: &Selector, effect: &Effect) -> String {
    let mut words = vec![sel.method.clone().unwrap_or_else(|| "*".into())];
    if let Some(n) = &sel.name {
        words.push(format!("name={n}"));
    }
    if let Some(n) = sel.nth {
        words.push(format!("nth={n}"));
    }
    if let Some(p) = sel.p {
        words.push(format!("p={p}"));
    }
    if let Some(s) = sel.seed {
        words.push(format!("seed={s}"));
    }
    let q = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
    let effect = match effect {
        Effect::Error { code, message } => format!("error {code} {}", q(message)),
        Effect::ToolError { text } => format!("tool-error {}", q(text)),
        Effect::Delay { ms } => format!("delay {ms}"),
        Effect::Disconnect { status: Some(s) } => format!("disconnect {s}"),
        other => other.kind().as_str().to_owned(),
    };
    format!("{}: {effect}", words.join(" "))
}

#[cfg(test)]
mod tests;
