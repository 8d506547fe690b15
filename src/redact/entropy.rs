//! Possible secrets: the high-entropy heuristic of `mcptape redact --check`.
//!
//! The redaction rules ([`crate::redact`]) find credentials by name and by known shape;
//! a secret with neither — a random token under an innocent name — passes them. This
//! heuristic looks for such tokens so that `redact --check` catches more than the writer
//! does. It never changes a tape and never runs when recording: it guesses, and a guess
//! must not rewrite what was recorded.
//!
//! A **token** is a run of `A-Z a-z 0-9 + / _ -` inside a string value (base64 padding
//! and `name=value` split at `=`). It is a possible secret when all of these hold (the
//! figures are the constants below):
//!
//! - it is [`MIN_TOKEN_CHARS`] to [`MAX_TOKEN_CHARS`] long (longer runs are content:
//!   images, audio, blobs);
//! - it has a lowercase letter, a capital and a digit;
//! - its Shannon entropy is at least log2(length) − [`ENTROPY_SLACK_BITS`] bits per
//!   character (within [`MIN_ENTROPY_BITS`]..=[`MAX_ENTROPY_BITS`]), and at least [`MIN_CLASS_CHANGES`] of its adjacent character pairs change class (lowercase,
//!   capital, digit, symbol) — words in camelCase change class about once a word — and
//!   under [`MAX_WORD_SHARE`] of it is inside words (`V1ValidatorWithValues` is mostly
//!   words);
//! - it is not a known-safe shape: hexadecimal (hashes, UUIDs), a base64 file (PNG, JPEG,
//!   GIF, PDF, …, or anything after `;base64,`), a hash (`sha256-…`, `sha256=…`,
//!   `sha256:…`), an API object
//!   id (`msg_…`, `toolu_…`, `chatcmpl-…`, …), base64 of text (cursors are often base64
//!   JSON), or a path;
//! - its member is not named as an id, a cursor, a hash or binary data (`requestId`,
//!   `nextCursor`, `progressToken`, `sha`, `etag`, `data`, `blob`, …).
//!
//! The walk is iterative (a stack of containers, no recursion over the document), and
//! JSON carried in strings is looked into up to 4 levels deep, as redaction does.

use crate::redact::rules::words;

/// Shortest token looked at, in characters.
pub const MIN_TOKEN_CHARS: usize = 20;
/// Longest token looked at, in characters: longer runs are content (images, blobs).
pub const MAX_TOKEN_CHARS: usize = 256;
/// Shannon entropy, in bits per character, a token of `n` characters must reach:
/// log2(n) less this slack, within [`MIN_ENTROPY_BITS`]..=[`MAX_ENTROPY_BITS`] (3.57 at
/// 20 characters, 4.25 at 32, 4.3 from 38 on). Random base-62 tokens measure 99% above
/// 3.65 at 20 characters, 4.24 at 32, 4.45 at 40.
pub const ENTROPY_SLACK_BITS: f64 = 0.75;
/// The least entropy any token must have, in bits per character.
pub const MIN_ENTROPY_BITS: f64 = 3.5;
/// The most entropy a token is asked for, in bits per character.
pub const MAX_ENTROPY_BITS: f64 = 4.3;
/// Share of adjacent character pairs that change class a token must reach. Random
/// base-62 measures about 0.6 (99% above 0.37); `getUserProfileSettings2` 0.32.
pub const MIN_CLASS_CHANGES: f64 = 0.35;
/// Share of a token's characters inside words (a lowercase run of 2+ and the capital
/// before it) it must stay under. Random base-62 tokens of 20 characters measure 99%
/// below 0.75, longer ones less; identifiers (`V1ValidatorWithValues` 0.90,
/// `zip64EndOfCentralSize` 0.81) more.
pub const MAX_WORD_SHARE: f64 = 0.75;
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
                let end = crate::depth::string_end(b, i);
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
    // Certificates and public keys are public: their base64 is not a possible secret.
    let public = match memchr::memmem::find(s.as_bytes(), b"-----BEGIN ") {
        Some(_) => crate::redact::pem::public_blocks(s),
        None => Vec::new(),
    };
    // Tokens come in order: one cursor walks the blocks once.
    let mut block = 0;
    let mut is_public = |at: usize| {
        while public.get(block).is_some_and(|&(_, end)| end <= at) {
            block += 1;
        }
        public.get(block).is_some_and(|&(start, _)| start <= at)
    };
    if tokens(s).any(|(at, t)| !is_public(at) && possible_secret(&s[..at], t)) {
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
    let is_token = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'_' | b'-');
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
/// What a hash or a file's payload follows (`sha256=…` in Python's RECORD files,
/// `sha256:…` in image digests, `;base64,` in data URLs).
const PAYLOAD_AFTER: &[&str] = &[
    "base64,", "sha1=", "sha256=", "sha384=", "sha512=", "md5=", "sha1:", "sha256:", "sha384:",
    "sha512:", "md5:",
];

/// True when `token` (found after `before` in its string) looks like a random secret.
pub fn possible_secret(before: &str, token: &str) -> bool {
    let body = token;
    let n = body.len();
    if !(MIN_TOKEN_CHARS..=MAX_TOKEN_CHARS).contains(&n)
        || PAYLOAD_AFTER.iter().any(|p| before.ends_with(p))
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
    entropy(b) >= min_entropy(n)
        && class_changes(b) >= MIN_CLASS_CHANGES
        && word_share(b) < MAX_WORD_SHARE
        && !base64_text(body)
}

/// The share of bytes inside words — a lowercase run of 2+, with the capital before it
/// (`Validator`, `with`): identifiers are mostly words, random tokens are not.
fn word_share(b: &[u8]) -> f64 {
    let (mut i, mut words) = (0, 0);
    while i < b.len() {
        let cap = usize::from(b[i].is_ascii_uppercase());
        let mut j = i + cap;
        while j < b.len() && b[j].is_ascii_lowercase() {
            j += 1;
        }
        if j - i - cap >= 2 {
            words += j - i;
            i = j;
        } else {
            i += 1;
        }
    }
    words as f64 / b.len().max(1) as f64
}

/// The entropy a token of `n` characters must reach: most characters of a short random
/// token are distinct, so its entropy is close to log2(n); an identifier repeats itself
/// (`convertIPv4MappedIPv6ToIPv4`: 3.8 bits at 27 characters).
fn min_entropy(n: usize) -> f64 {
    ((n as f64).log2() - ENTROPY_SLACK_BITS).clamp(MIN_ENTROPY_BITS, MAX_ENTROPY_BITS)
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

/// A path: `/`-separated, with at least half of its characters in segments that are
/// words or numbers (`/Users/bob/Library`, `es-abstract/2023/DefinePropertyOrThrow`).
fn path_like(t: &str) -> bool {
    if !t.contains('/') {
        return false;
    }
    let wordy: usize = t
        .split('/')
        .filter(|s| {
            s.bytes().all(|c| c.is_ascii_digit()) || word_share(s.as_bytes()) >= MAX_WORD_SHARE
        })
        .map(str::len)
        .sum();
    wordy * 2 >= t.len() - t.matches('/').count()
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
mod tests;
