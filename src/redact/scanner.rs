//! The redactor's scanner: one pass over a JSON text, replacing the spans that hold secrets.
//!
//! It is iterative at any depth: the arrays and objects it is inside are an explicit stack
//! (a byte each), never the call stack, so a message nested a million levels deep is
//! redacted like any other, by every rule ([`crate::redact`]). JSON carried inside a string
//! is followed [`MAX_NESTED_JSON`] strings deep. The work stays linear in the input: each
//! byte is read once by the walk, and a credential-named object is told from a JSON Schema
//! by its direct members only, skipping nested values through a table of where each array
//! or object ends, built once per text and only when needed. Memory: a byte per level of
//! nesting, and 8 bytes per array or object while that table is built.
//!
//! The JSON path of a finding (`redact --check`) names at most
//! [`crate::depth::MAX_JSON_DEPTH`] levels, then `…`.

use std::borrow::Cow;

use serde_json::value::RawValue;

use crate::depth::{MAX_JSON_DEPTH, string_end};
use crate::redact::{Finding, Redactor, Rule, is_secret_name};

/// How deep JSON carried in strings is followed.
const MAX_NESTED_JSON: usize = 4;

/// The message with its secrets replaced; borrowed when there were none.
pub(crate) fn redact<'a>(r: &Redactor, text: &'a str) -> Cow<'a, str> {
    let mut walk = Walk::new(r, text, None);
    walk.value(0);
    walk.finish()
}

/// Where the message still holds something that looks like a secret.
pub(crate) fn findings(r: &Redactor, text: &str) -> Vec<Finding> {
    let mut found = Vec::new();
    let mut walk = Walk::new(r, text, Some(&mut found));
    walk.value(0);
    drop(walk);
    found
}

/// A JSON string token's text; lone surrogate escapes read as U+FFFD (a string cut
/// mid-emoji must not hide a secret from the rules).
fn decode_string(raw: &str) -> Option<String> {
    serde_json::from_str(raw)
        .ok()
        .or_else(|| serde_json::from_str(&crate::message::without_lone_surrogates(raw)).ok())
}

/// The arrays and objects the walk is inside: one byte each (kind, and whether the current
/// member's value is inside a credential-named object or list), plus the current element
/// index of the first [`MAX_JSON_DEPTH`] levels, for paths.
#[derive(Default)]
struct Frames {
    flags: Vec<u8>,
    indexes: Vec<usize>,
}

/// [`Frames`] flag: an object (else an array).
const OBJECT: u8 = 1;
/// [`Frames`] flag: the current member's value is secret.
const SECRET: u8 = 2;

impl Frames {
    fn push(&mut self, object: bool) {
        self.flags.push(if object { OBJECT } else { 0 });
        if self.flags.len() <= MAX_JSON_DEPTH {
            self.indexes.push(0);
        }
    }

    fn pop(&mut self) {
        self.flags.pop();
        self.indexes.truncate(self.flags.len().min(MAX_JSON_DEPTH));
    }

    /// Whether the innermost is an object; `None` outside all of them.
    fn object(&self) -> Option<bool> {
        self.flags.last().map(|f| f & OBJECT != 0)
    }

    fn next_element(&mut self) {
        if self.flags.len() <= MAX_JSON_DEPTH
            && let Some(i) = self.indexes.last_mut()
        {
            *i += 1;
        }
    }

    /// The innermost's current element index (0 past the first levels: not shown).
    fn index(&self) -> usize {
        if self.flags.len() <= MAX_JSON_DEPTH {
            self.indexes.last().copied().unwrap_or(0)
        } else {
            0
        }
    }

    fn mark_secret(&mut self) {
        if let Some(f) = self.flags.last_mut() {
            *f |= SECRET;
        }
    }

    /// Clears the innermost's secret mark; true when it was set.
    fn take_secret(&mut self) -> bool {
        match self.flags.last_mut() {
            Some(f) if *f & SECRET != 0 => {
                *f &= !SECRET;
                true
            }
            _ => false,
        }
    }
}

/// One segment of a JSON path.
enum Segment {
    Key(String),
    Index(usize),
}

/// One pass over a JSON text (already known to be valid), replacing spans.
struct Walk<'r, 'a, 'f> {
    r: &'r Redactor,
    src: &'a str,
    pos: usize,
    /// Output so far, up to `copied` of `src`.
    out: String,
    copied: usize,
    changed: bool,
    /// The path's first segments, kept only when findings are collected.
    path: Vec<Segment>,
    /// How many segments the path has (more than `path` holds past the cap).
    path_len: usize,
    findings: Option<&'f mut Vec<Finding>>,
    /// Inside a credential-named object or list: every string and number is secret.
    secret: usize,
    /// `(open, end)` of every array and object, by opening position; built on first use
    /// (`None` inside: the text is too long for `u32` positions, and ends are scanned for).
    ends: Option<Option<Vec<(u32, u32)>>>,
}

impl<'r, 'a, 'f> Walk<'r, 'a, 'f> {
    fn new(r: &'r Redactor, src: &'a str, findings: Option<&'f mut Vec<Finding>>) -> Self {
        Walk {
            r,
            src,
            pos: 0,
            out: String::new(),
            copied: 0,
            changed: false,
            path: Vec::new(),
            path_len: 0,
            findings,
            secret: 0,
            ends: None,
        }
    }

    fn finish(mut self) -> Cow<'a, str> {
        if !self.changed {
            return Cow::Borrowed(self.src);
        }
        self.out.push_str(self.slice(self.copied, self.src.len()));
        Cow::Owned(self.out)
    }

    fn push_path(&mut self, segment: impl FnOnce() -> Segment) {
        if self.findings.is_some() && self.path_len < MAX_JSON_DEPTH {
            self.path.push(segment());
        }
        self.path_len += 1;
    }

    fn pop_path(&mut self) {
        self.path_len = self.path_len.saturating_sub(1);
        if self.path.len() > self.path_len {
            self.path.pop();
        }
    }

    fn path_text(&self) -> String {
        let mut p = String::new();
        for seg in &self.path {
            match seg {
                Segment::Index(i) => p.push_str(&format!("[{i}]")),
                Segment::Key(k) => {
                    if !p.is_empty() {
                        p.push('.');
                    }
                    p.push_str(k);
                }
            }
        }
        if self.path_len > self.path.len() {
            p.push_str(".…");
        }
        p
    }

    /// Replaces `src[a..b]` with `with` (or, when checking, notes a finding).
    fn replace(&mut self, a: usize, b: usize, with: &str, rule: Rule) {
        if self.findings.is_some() {
            let path = self.path_text();
            if let Some(found) = self.findings.as_deref_mut() {
                found.push(Finding { path, rule });
            }
            return;
        }
        self.out.push_str(self.slice(self.copied, a));
        self.out.push_str(with);
        self.copied = b;
        self.changed = true;
    }

    fn bytes(&self) -> &'a [u8] {
        self.src.as_bytes()
    }

    /// `src[a..b]`, or nothing when that is not a span of the text. Callers pass valid
    /// JSON, where every span the walk cuts is whole; on any other text the walk must
    /// still never panic (the redactor is public, and fuzzed).
    fn slice(&self, a: usize, b: usize) -> &'a str {
        self.src.get(a..b).unwrap_or("")
    }

    fn skip_ws(&mut self) {
        while self.pos < self.src.len() && self.bytes()[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    /// From an opening quote, the position after the closing one.
    fn string_end(&self, start: usize) -> usize {
        string_end(self.bytes(), start)
    }

    /// The position after the array or object opening at `start`, from the table of ends
    /// (one pass over the text, the first time it is needed).
    fn container_end(&mut self, start: usize) -> usize {
        let src = self.src;
        let ends = self.ends.get_or_insert_with(|| container_ends(src));
        let (Some(ends), Ok(at)) = (ends.as_ref(), u32::try_from(start)) else {
            return scan_end(src.as_bytes(), start);
        };
        ends.binary_search_by_key(&at, |&(open, _)| open)
            .map_or(src.len(), |i| ends[i].1 as usize)
    }

    /// The position after the value starting at `start` (skipped, not looked into).
    fn value_end(&mut self, start: usize) -> usize {
        let b = self.bytes();
        match b.get(start) {
            Some(b'"') => self.string_end(start),
            Some(b'{' | b'[') => self.container_end(start),
            _ => {
                let mut i = start;
                while i < b.len()
                    && !matches!(b[i], b',' | b'}' | b']')
                    && !b[i].is_ascii_whitespace()
                {
                    i += 1;
                }
                i
            }
        }
    }

    /// True when the object at `at` is a JSON Schema (one of its own members is `type`
    /// naming a JSON type): it describes a credential, it holds none. Looks at the direct
    /// members only, without building anything.
    fn is_schema(&mut self, at: usize) -> bool {
        let b = self.bytes();
        if b.get(at) != Some(&b'{') {
            return false;
        }
        let mut i = at + 1;
        loop {
            while i < b.len() && (b[i].is_ascii_whitespace() || b[i] == b',') {
                i += 1;
            }
            if i >= b.len() || b[i] != b'"' {
                return false;
            }
            let key_end = self.string_end(i);
            let key = self.slice(i, key_end);
            i = key_end;
            while i < b.len() && (b[i].is_ascii_whitespace() || b[i] == b':') {
                i += 1;
            }
            let value_end = self.value_end(i);
            if key == "\"type\"" {
                return matches!(
                    self.slice(i, value_end),
                    "\"string\""
                        | "\"number\""
                        | "\"integer\""
                        | "\"boolean\""
                        | "\"object\""
                        | "\"array\""
                        | "\"null\""
                );
            }
            i = value_end;
        }
    }

    /// Walks the value at `pos` and everything in it, with an explicit stack.
    fn value(&mut self, nesting: usize) {
        let mut frames = Frames::default();
        let mut want_value = true;
        loop {
            if want_value {
                want_value = false;
                if self.scalar_or_open(nesting, &mut frames) {
                    self.value_done(&mut frames);
                }
            }
            let Some(object) = frames.object() else {
                return;
            };
            self.skip_ws();
            let close = if object { b'}' } else { b']' };
            match self.bytes().get(self.pos) {
                Some(&c) if c == close => {}
                None => {}
                Some(b',') => {
                    self.pos += 1;
                    frames.next_element();
                    continue;
                }
                _ if object => {
                    want_value = self.member(&mut frames);
                    continue;
                }
                _ => {
                    let index = frames.index();
                    self.push_path(|| Segment::Index(index));
                    want_value = true;
                    continue;
                }
            }
            // The end of the array or object (or of a text cut inside it): it is its
            // parent's finished value.
            self.pos = (self.pos + 1).min(self.src.len());
            frames.pop();
            self.value_done(&mut frames);
        }
    }

    /// Reads a scalar (true: it is done) or opens an array or object (false).
    fn scalar_or_open(&mut self, nesting: usize, frames: &mut Frames) -> bool {
        self.skip_ws();
        match self.bytes().get(self.pos) {
            Some(&c @ (b'{' | b'[')) => {
                self.pos += 1;
                frames.push(c == b'{');
                false
            }
            Some(b'"') => {
                let (a, b) = (self.pos, self.string_end(self.pos));
                self.pos = b;
                self.string_value(a, b, nesting);
                true
            }
            Some(&c) => {
                let (a, b) = (self.pos, self.value_end(self.pos));
                if self.secret > 0 && !matches!(c, b't' | b'f' | b'n') {
                    self.replace(a, b, "\"[REDACTED]\"", Rule::CredentialName);
                }
                self.pos = b.max(self.pos + 1);
                true
            }
            None => true,
        }
    }

    /// A member's or element's value is finished: leave its path segment.
    fn value_done(&mut self, frames: &mut Frames) {
        if frames.object().is_some() {
            self.pop_path();
            if frames.take_secret() {
                self.secret -= 1;
            }
        }
    }

    /// Reads a member's key and decides about its value: true when the value is to be
    /// walked, false when it was redacted whole here.
    fn member(&mut self, frames: &mut Frames) -> bool {
        let key_start = self.pos;
        let key_end = self.string_end(key_start);
        let raw = self.slice(key_start, key_end);
        let key: Cow<str> = match raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
            Some(plain) if !plain.contains('\\') => Cow::Borrowed(plain),
            _ => Cow::Owned(decode_string(raw).unwrap_or_default()),
        };
        self.pos = key_end;
        self.skip_ws();
        if self.bytes().get(self.pos) == Some(&b':') {
            self.pos += 1;
        }
        self.skip_ws();
        let secret = is_secret_name(&key);
        self.push_path(|| Segment::Key(key.into_owned()));
        // A credential name hides a string or a number. An object or a list is looked
        // into (a JSON Schema's `properties.password` describes, it does not hold),
        // and `true`/`false`/`null` say nothing.
        let first = self.bytes().get(self.pos).copied();
        let container = matches!(first, Some(b'{' | b'['));
        let scalar = first.is_some_and(|c| !matches!(c, b'{' | b'[' | b't' | b'f' | b'n'));
        // Inside a secret already, everything is secret: no need to tell a schema.
        if secret && container && (self.secret > 0 || !self.is_schema(self.pos)) {
            // Everything a credential-named object or list holds is secret.
            self.secret += 1;
            frames.mark_secret();
        } else if secret && scalar {
            let (a, b) = (self.pos, self.value_end(self.pos));
            let already = self.slice(a, b) == "\"[REDACTED]\"";
            if !already {
                self.replace(a, b, "\"[REDACTED]\"", Rule::CredentialName);
            }
            self.pos = b;
            self.pop_path();
            return false;
        }
        true
    }

    fn string_value(&mut self, a: usize, b: usize, nesting: usize) {
        let raw = self.slice(a, b);
        if self.secret > 0 {
            if raw != "\"[REDACTED]\"" {
                self.replace(a, b, "\"[REDACTED]\"", Rule::CredentialName);
            }
            return;
        }
        // Most strings have no backslash and nothing to find: decode only when needed.
        let decoded: Cow<str> = if raw.contains('\\') {
            match decode_string(raw) {
                Some(s) => Cow::Owned(s),
                None => return,
            }
        } else {
            // Quotes off (a text cut inside its last string has no closing one).
            let inner = raw.strip_prefix('"').unwrap_or(raw);
            Cow::Borrowed(inner.strip_suffix('"').unwrap_or(inner))
        };
        let trimmed = decoded.trim_start();
        if nesting < MAX_NESTED_JSON
            && (trimmed.starts_with('{') || trimmed.starts_with('['))
            && serde_json::from_str::<&RawValue>(&decoded).is_ok()
        {
            if self.findings.is_some() {
                let prefix = self.path_text();
                let mut inner = Vec::new();
                let mut walk = Walk::new(self.r, &decoded, Some(&mut inner));
                walk.value(nesting + 1);
                drop(walk);
                if let Some(found) = self.findings.as_deref_mut() {
                    found.extend(inner.into_iter().map(|f| Finding {
                        path: if f.path.is_empty() {
                            prefix.clone()
                        } else {
                            format!("{prefix}.{}", f.path)
                        },
                        rule: f.rule,
                    }));
                }
                return;
            }
            let mut walk = Walk::new(self.r, &decoded, None);
            walk.value(nesting + 1);
            if let Cow::Owned(text) = walk.finish() {
                let quoted = serde_json::to_string(&text).expect("a string serializes");
                self.replace(a, b, &quoted, Rule::CredentialInJsonText);
            }
            return;
        }
        if let Some((text, rule)) = self.r.string(&decoded) {
            let quoted = serde_json::to_string(&text).expect("a string serializes");
            self.replace(a, b, &quoted, rule);
        }
    }
}

/// `(open, end)` of every array and object of `src`, by opening position (one pass);
/// `None` when `src` is too long for `u32` positions.
fn container_ends(src: &str) -> Option<Vec<(u32, u32)>> {
    let b = src.as_bytes();
    let len = u32::try_from(b.len()).ok()?;
    let mut ends: Vec<(u32, u32)> = Vec::new();
    let mut open: Vec<u32> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i = string_end(b, i);
                continue;
            }
            b'{' | b'[' => {
                open.push(ends.len() as u32);
                ends.push((i as u32, len));
            }
            b'}' | b']' => {
                if let Some(k) = open.pop() {
                    ends[k as usize].1 = i as u32 + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    Some(ends)
}

/// The position after the array or object opening at `start`, by counting brackets.
fn scan_end(b: &[u8], start: usize) -> usize {
    let mut depth = 0usize;
    let mut i = start;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i = string_end(b, i);
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    b.len()
}

#[cfg(test)]
mod tests;
