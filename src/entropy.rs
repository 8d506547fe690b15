//! Possible secrets: the high-entropy heuristic of `mcptape redact --check`.
//!
//! The redaction rules ([`crate::redact`]) find credentials by name and by known shape;
//! a secret with neither — a random token under an innocent name — passes them. This
//! heuristic looks for such tokens so that `redact --check` catches more than the writer
//! does. It never changes a tape and never runs when recording: it guesses, and a guess
//! must not rewrite what was recorded.
//!
//! A **token** is a run of `A-Z a-z 0-9 + / = _ -` inside a string value. It is a possible
//! secret when all of these hold (the figures are the constants below):
//!
//! - it is [`MIN_TOKEN_CHARS`] to [`MAX_TOKEN_CHARS`] long (longer runs are content:
//!   images, audio, blobs);
//! - it has a lowercase letter, a capital and a digit;
//! - its Shannon entropy is at least [`MIN_ENTROPY_BITS`] bits per character, and at
//!   least [`MIN_CLASS_CHANGES`] of its adjacent character pairs change class (lowercase,
//!   capital, digit, symbol) — words in camelCase change class about once a word;
//! - it is not a known-safe shape: hexadecimal (hashes, UUIDs), a base64 file (PNG, JPEG,
//!   GIF, PDF, …, or anything after `;base64,`), an SRI hash (`sha256-…`), an API object
//!   id (`msg_…`, `toolu_…`, `chatcmpl-…`, …), base64 of text (cursors are often base64
//!   JSON), or a path;
//! - its member is not named as an id, a cursor, a hash or binary data (`requestId`,
//!   `nextCursor`, `progressToken`, `sha`, `etag`, `data`, `blob`, …).
//!
//! The walk is iterative (a stack of containers, no recursion over the document), and
//! JSON carried in strings is looked into up to 4 levels deep, as redaction does.

use crate::redact_rules::words;

/// Shortest token looked at, in characters.
pub const MIN_TOKEN_CHARS: usize = 20;
/// Longest token looked at, in characters: longer runs are content (images, blobs).
pub const MAX_TOKEN_CHARS: usize = 256;
/// Shannon entropy, in bits per character, a token must reach. Random base-62 tokens of
/// 20 characters measure about 4.0 (99% above 3.65); camelCase words about 3.0–4.0.
pub const MIN_ENTROPY_BITS: f64 = 3.5;
/// Share of adjacent character pairs that change class a token must reach. Random
/// base-62 measures about 0.6 (99% above 0.37); `getUserProfileSettings2` 0.32.
pub const MIN_CLASS_CHANGES: f64 = 0.35;
/// How deep JSON carried in strings is followed.
const MAX_NESTED_JSON: usize = 4;

/// A string value holding a token that looks random.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suspect {
    /// The JSON path of the value (`params.arguments.note`), as redaction findings write it.
    pub path: String,
}

/// Every string value of `message` (valid JSON) that holds a possible secret; at most
/// [`MAX_SUSPECTS`] of them.
pub fn possible_secrets(message: &str) -> Vec<Suspect> {
    let mut out = Vec::new();
    walk(message, 0, &mut out);
    out.into_iter().map(|path| Suspect { path }).collect()
}

/// At most this many possible secrets are reported per message (which also bounds the
/// cost of writing their paths).
pub const MAX_SUSPECTS: usize = 100;

/// The path being walked, kept as text: each segment remembers where it starts.
#[derive(Default)]
struct Path {
    text: String,
    /// Per segment: the text's length before it, where its key starts, and the index if
    /// it is an array element.
    segs: Vec<(usize, usize, Option<usize>)>,
}

impl Path {
    fn key(&mut self, k: &str) {
        let mark = self.text.len();
        if !self.text.is_empty() {
            self.text.push('.');
        }
        self.segs.push((mark, self.text.len(), None));
        self.text.push_str(k);
    }

    fn index(&mut self, i: usize) {
        let mark = self.text.len();
        self.segs.push((mark, mark, Some(i)));
        self.text.push_str(&format!("[{i}]"));
    }

    fn pop(&mut self) -> Option<usize> {
        let (mark, _, index) = self.segs.pop()?;
        self.text.truncate(mark);
        index
    }

    /// The nearest member name (an array's elements take their array's name).
    fn name(&self) -> Option<&str> {
        let mut end = self.text.len();
        for &(mark, start, index) in self.segs.iter().rev() {
            if index.is_none() {
                return Some(&self.text[start..end]);
            }
            end = mark;
        }
        None
    }
}

/// From an opening quote, the position after the closing one.
fn string_end(b: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while let Some(j) = memchr::memchr2(b'"', b'\\', &b[i.min(b.len())..]) {
        i += j;
        if b[i] == b'"' {
            return i + 1;
        }
        i += 2;
    }
    b.len()
}

fn decode(raw: &str) -> Option<String> {
    serde_json::from_str(raw)
        .ok()
        .or_else(|| serde_json::from_str(&crate::message::without_lone_surrogates(raw)).ok())
}

/// Walks one JSON text with an explicit stack, appending the paths (relative to `text`)
/// of its possible secrets to `out`.
fn walk(text: &str, nesting: usize, out: &mut Vec<String>) {
    let b = text.as_bytes();
    // true: an object; false: an array.
    let mut stack: Vec<bool> = Vec::new();
    let mut path = Path::default();
    let mut expect_key = false;
    let mut i = 0;
    // After a value: it was a member's, whose key leaves the path.
    let done = |stack: &[bool], path: &mut Path| {
        if stack.last() == Some(&true) {
            path.pop();
        }
    };
    while i < b.len() && out.len() < MAX_SUSPECTS {
        match b[i] {
            b'{' => {
                stack.push(true);
                expect_key = true;
                i += 1;
            }
            b'[' => {
                stack.push(false);
                path.index(0);
                i += 1;
            }
            b'}' | b']' => {
                if stack.pop() == Some(false) {
                    path.pop();
                }
                done(&stack, &mut path);
                i += 1;
            }
            b',' => {
                match stack.last() {
                    Some(true) => expect_key = true,
                    Some(false) => {
                        let n = path.pop().unwrap_or(0);
                        path.index(n + 1);
                    }
                    None => {}
                }
                i += 1;
            }
            b'"' => {
                let end = string_end(b, i);
                let decoded = decode(&text[i..end]).unwrap_or_default();
                i = end;
                if expect_key && stack.last() == Some(&true) {
                    path.key(&decoded);
                    expect_key = false;
                    continue;
                }
                if !path.name().is_some_and(safe_name) {
                    string(&decoded, &path.text, nesting, out);
                }
                done(&stack, &mut path);
            }
            c if c.is_ascii_whitespace() || c == b':' => i += 1,
            _ => {
                // A number, `true`, `false` or `null`.
                while i < b.len() && !matches!(b[i], b',' | b'}' | b']') {
                    i += 1;
                }
                done(&stack, &mut path);
            }
        }
    }
    out.truncate(MAX_SUSPECTS);
}

/// Looks at one string value at `path`: JSON in it is walked, else its tokens are tested.
fn string(s: &str, path: &str, nesting: usize, out: &mut Vec<String>) {
    let trimmed = s.trim_start();
    if nesting < MAX_NESTED_JSON
        && (trimmed.starts_with('{') || trimmed.starts_with('['))
        && serde_json::from_str::<&serde_json::value::RawValue>(s).is_ok()
    {
        let mut inner = Vec::new();
        walk(s, nesting + 1, &mut inner);
        out.extend(inner.into_iter().map(|p| match p.is_empty() {
            true => path.to_owned(),
            false if path.is_empty() => p,
            false => format!("{path}.{p}"),
        }));
        return;
    }
    if s.starts_with("data:") {
        return;
    }
    if tokens(s).any(|(at, t)| possible_secret(&s[..at], t)) {
        out.push(path.to_owned());
    }
}

/// Member names whose values are ids, cursors, hashes or binary data.
fn safe_name(name: &str) -> bool {
    const SAFE_WORDS: &[&str] = &[
        "id",
        "ids",
        "uuid",
        "guid",
        "cursor",
        "hash",
        "digest",
        "checksum",
        "etag",
        "integrity",
        "sha",
        "md5",
        "fingerprint",
        "nonce",
        "commitment",
        "data",
        "blob",
    ];
    const CURSOR_TOKENS: &[&str] = &["progress", "page", "next", "continuation", "resume", "sync"];
    let w = words(name);
    w.last().is_some_and(|l| SAFE_WORDS.contains(&l.as_str()))
        || (w.len() >= 2
            && w[w.len() - 1] == "token"
            && CURSOR_TOKENS.contains(&w[w.len() - 2].as_str()))
}

/// The runs of token characters in `s`, with their byte offsets.
fn tokens(s: &str) -> impl Iterator<Item = (usize, &str)> {
    let is_token =
        |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'=' | b'_' | b'-');
    let b = s.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < b.len() && !is_token(b[i]) {
            i += 1;
        }
        if i >= b.len() {
            return None;
        }
        let start = i;
        while i < b.len() && is_token(b[i]) {
            i += 1;
        }
        Some((start, &s[start..i]))
    })
}

/// Base64 file signatures: a value starting so is a file, not a key.
const FILE_MAGIC: &[&str] = &[
    "iVBORw0KGgo", // PNG
    "/9j/",        // JPEG
    "R0lGOD",      // GIF
    "UklGR",       // RIFF: WebP, WAV
    "JVBERi",      // PDF
    "UEsDB",       // ZIP
    "PHN2Zy",      // <svg
    "PD94bWw",     // <?xml
    "SUQz",        // MP3 (ID3)
    "T2dnUw",      // Ogg
    "ZkxhQw",      // FLAC
    "AAAA",        // MP4 and other boxed formats
];
/// Prefixes of API object ids (message, tool-use, completion, request ids…).
const ID_PREFIXES: &[&str] = &[
    "msg_",
    "toolu_",
    "srvtoolu_",
    "chatcmpl-",
    "call_",
    "req_",
    "run_",
    "asst_",
    "thread_",
    "file-",
    "file_",
    "batch_",
    "resp_",
    "evt_",
];
/// Prefixes of subresource-integrity and similar hash spellings.
const HASH_PREFIXES: &[&str] = &["sha1-", "sha256-", "sha384-", "sha512-", "md5-"];

/// True when `token` (found after `before` in its string) looks like a random secret.
pub fn possible_secret(before: &str, token: &str) -> bool {
    let body = token.trim_end_matches('=');
    let n = body.len();
    if !(MIN_TOKEN_CHARS..=MAX_TOKEN_CHARS).contains(&n)
        || before.ends_with("base64,")
        || before.ends_with("sha256:")
        || before.ends_with("sha512:")
        || FILE_MAGIC.iter().any(|m| body.starts_with(m))
        || ID_PREFIXES.iter().any(|p| body.starts_with(p))
        || HASH_PREFIXES.iter().any(|p| body.starts_with(p))
        || body.bytes().all(|c| c.is_ascii_hexdigit() || c == b'-')
        || path_like(body)
    {
        return false;
    }
    let b = body.as_bytes();
    if !(b.iter().any(u8::is_ascii_lowercase)
        && b.iter().any(u8::is_ascii_uppercase)
        && b.iter().any(u8::is_ascii_digit))
    {
        return false;
    }
    entropy(b) >= MIN_ENTROPY_BITS && class_changes(b) >= MIN_CLASS_CHANGES && !base64_text(body)
}

/// Shannon entropy of the bytes, in bits per byte.
fn entropy(b: &[u8]) -> f64 {
    let mut counts = [0usize; 256];
    for &c in b {
        counts[usize::from(c)] += 1;
    }
    let n = b.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

/// The share of adjacent pairs whose classes (lowercase, capital, digit, other) differ.
fn class_changes(b: &[u8]) -> f64 {
    let class = |c: u8| match c {
        b'a'..=b'z' => 0,
        b'A'..=b'Z' => 1,
        b'0'..=b'9' => 2,
        _ => 3,
    };
    let changes = b.windows(2).filter(|w| class(w[0]) != class(w[1])).count();
    changes as f64 / (b.len().saturating_sub(1).max(1)) as f64
}

/// A path: `/`-separated, with a segment that is a word (`Users`, `bob`, `src`).
fn path_like(t: &str) -> bool {
    t.contains('/')
        && t.split('/').any(|seg| {
            seg.len() >= 3
                && seg.bytes().all(|c| c.is_ascii_alphabetic())
                && seg.bytes().skip(1).all(|c| c.is_ascii_lowercase())
        })
}

/// True when `t` is base64 (standard or URL-safe) of mostly printable text: an encoded
/// cursor or document, not a key.
fn base64_text(t: &str) -> bool {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        } as u32)
    };
    let mut bytes = Vec::with_capacity(t.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in t.bytes() {
        let Some(v) = value(c) else { return false };
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            bytes.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    let printable = bytes
        .iter()
        .filter(|&&c| (0x20..0x7f).contains(&c) || matches!(c, b'\t' | b'\n' | b'\r'))
        .count();
    printable * 10 >= bytes.len() * 9
}

#[cfg(test)]
#[path = "entropy_tests.rs"]
mod tests;
