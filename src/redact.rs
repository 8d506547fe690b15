//! Redaction: secrets never reach a tape.
//!
//! Applied to each entry as it is written (never to live traffic), and by
//! `mcptape redact` to existing tapes. The message's bytes are kept except for the
//! secrets: a JSON scanner walks the text once, and only the string tokens (or whole
//! values) that hold a secret are replaced, by `"[REDACTED]"` for a whole value and by
//! `[REDACTED]` in place of the secret's span inside a longer string. Keys never change.
//!
//! The rules (documented in `docs/REDACTION.md`):
//!
//! - **Names** ([`is_secret_name`]): the value of a member whose key is a credential name,
//!   at any depth, whatever its type.
//! - **Shapes**, in any string: `Bearer`/`Basic` credentials, JWTs, the `user:password` of a
//!   URL, credential-named URL parameters, `name=value` / `name: "value"` assignments of
//!   credential names, and well-known key formats (`sk-…`, `ghp_…`, `github_pat_…`,
//!   `xox?-…`, `AKIA…`, PEM private keys) — on word boundaries only.
//! - **Literals**: the values of the environment variables named in `MCPTAPE_REDACT`.
//! - A string that is itself JSON (`content[].text` of many tools) is redacted as JSON,
//!   keeping its own formatting.
//!
//! Everything is linear in the input: one pass of the scanner, and the `regex` crate's
//! matching, which is linear by construction.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::value::RawValue;

/// The replacement text.
pub const REDACTED: &str = crate::matcher::REDACTED;
/// Environment variable: comma-separated names of variables whose values are secrets.
pub const ENV_REDACT: &str = "MCPTAPE_REDACT";
/// Environment variable: `1` records without redaction.
pub const ENV_NO_REDACT: &str = "MCPTAPE_NO_REDACT";
/// Values of `MCPTAPE_REDACT` variables shorter than this are ignored (too likely to
/// occur by chance).
pub const MIN_LITERAL_CHARS: usize = 6;
/// How deep JSON carried in strings is followed.
const MAX_NESTED_JSON: usize = 4;

/// Splits a member name into lowercase words: camelCase, snake_case, kebab-case, dots.
fn words(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Words that make any name a credential name wherever they stand.
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "secret",
    "passphrase",
    "cookie",
    "jwt",
    "authorization",
    "credential",
    "credentials",
    "apikey",
    "privatekey",
];
/// Words before `token` that make it a count or a cursor, not a credential.
const NOT_SECRET_TOKEN: &[&str] = &[
    "progress",
    "page",
    "next",
    "max",
    "continuation",
    "resume",
    "sync",
];
/// Words before `key` that make it a credential (`key` alone is data).
const SECRET_KEY: &[&str] = &[
    "api",
    "private",
    "access",
    "secret",
    "signing",
    "encryption",
    "master",
];

/// True when a member or parameter name names a credential. See `docs/REDACTION.md`.
pub fn is_secret_name(name: &str) -> bool {
    let w = words(name);
    if w.len() == 1 && w[0] == "auth" {
        return true;
    }
    w.iter().enumerate().any(|(i, word)| {
        let before = i.checked_sub(1).map(|j| w[j].as_str());
        match word.as_str() {
            s if SECRET_WORDS.contains(&s) => true,
            "token" => i + 1 == w.len() && !before.is_some_and(|b| NOT_SECRET_TOKEN.contains(&b)),
            "key" => before.is_some_and(|b| SECRET_KEY.contains(&b)),
            "id" => before == Some("session"),
            _ => false,
        }
    })
}

/// A pattern and the capture group holding the secret (0: the whole match).
struct Shape {
    name: &'static str,
    re: Regex,
    group: usize,
}

fn shape(name: &'static str, pattern: &str, group: usize) -> Shape {
    Shape {
        name,
        re: Regex::new(pattern).expect("a valid built-in pattern"),
        group,
    }
}

static SHAPES: LazyLock<Vec<Shape>> = LazyLock::new(|| {
    vec![
        shape(
            "bearer/basic credential",
            r"(?i)\b(?:bearer|basic)[ \t]+([A-Za-z0-9\-._~+/]{8,}=*)",
            1,
        ),
        shape(
            "JWT",
            r"\beyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*",
            0,
        ),
        shape(
            "URL user:password",
            r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://([^/\s:@\x22']+:[^/\s@\x22']+)@",
            1,
        ),
        shape(
            "key format",
            r"\b(?:sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,}|xox[bpas]-[A-Za-z0-9\-]{10,}|AKIA[0-9A-Z]{16})\b",
            0,
        ),
        shape(
            "PEM private key",
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
            0,
        ),
    ]
});

/// `?name=value` parameters of URLs (the value is a secret when the name is).
static URL_PARAM: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[?&#;]([A-Za-z0-9_.\-]+)=([^&#\s\x22'<>]+)").expect("valid"));
/// The `name=`, `name: `, `"name": ` of an assignment in plain text (the value is read
/// by [`assigned_value`], so that one assignment's value never hides the next name).
static ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"\b([A-Za-z_][A-Za-z0-9_.\-]*)["']?[ \t]*[:=][ \t]*"#).expect("valid")
});

/// The span of the value that starts at `at`: a quoted string's inside, or a run up to
/// a blank or a delimiter.
fn assigned_value(s: &str, at: usize) -> (usize, usize) {
    let rest = &s.as_bytes()[at..];
    match rest.first() {
        Some(&q @ (b'"' | b'\'')) => {
            let end = rest[1..]
                .iter()
                .position(|&b| b == q || b == b'\n')
                .map_or(rest.len(), |i| i + 1);
            (at + 1, at + end)
        }
        _ => {
            let end = rest
                .iter()
                .position(|&b| b.is_ascii_whitespace() || b",;\"'&}]=:".contains(&b))
                .unwrap_or(rest.len());
            (at, at + end)
        }
    }
}

/// A bearer/basic token must look like one: a digit, a symbol, or a capital inside it
/// (so that "Basic information" is prose, not a credential).
fn looks_like_token(s: &str) -> bool {
    s.chars()
        .any(|c| c.is_ascii_digit() || "-._~+/=".contains(c))
        || s.chars().skip(1).any(|c| c.is_ascii_uppercase())
}

/// The redaction rules in force.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    literals: Option<Regex>,
    off: bool,
}

/// Where a secret was found, for `redact --check`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The JSON path of the value (`params.arguments.apiKey`).
    pub path: String,
    /// Which rule saw it.
    pub rule: &'static str,
}

impl Redactor {
    /// The built-in rules plus these literal secrets (shorter ones are left out).
    pub fn new(literals: &[String]) -> Redactor {
        let kept: Vec<String> = literals
            .iter()
            .filter(|l| l.chars().count() >= MIN_LITERAL_CHARS)
            .map(|l| regex::escape(l))
            .collect();
        let literals =
            (!kept.is_empty()).then(|| Regex::new(&kept.join("|")).expect("escaped literals"));
        Redactor {
            literals,
            off: false,
        }
    }

    /// No redaction at all (`--no-redact`).
    pub fn off() -> Redactor {
        Redactor {
            literals: None,
            off: true,
        }
    }

    /// True when nothing is redacted.
    pub fn is_off(&self) -> bool {
        self.off
    }

    /// The rules from an environment: `MCPTAPE_NO_REDACT`, and the values of the
    /// variables `MCPTAPE_REDACT` names (looked up with `lookup`). Returns warnings too.
    pub fn from_env(get: &dyn Fn(&str) -> Option<String>) -> (Redactor, Vec<String>) {
        if get(ENV_NO_REDACT).is_some_and(|v| !v.is_empty() && v != "0") {
            return (
                Redactor::off(),
                vec![format!(
                    "{ENV_NO_REDACT} is set: recording without redaction; review the tape before sharing it"
                )],
            );
        }
        let mut warnings = Vec::new();
        let mut values = Vec::new();
        for name in get(ENV_REDACT)
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
        {
            match get(name) {
                Some(v) if v.chars().count() >= MIN_LITERAL_CHARS => values.push(v),
                Some(_) => warnings.push(format!(
                    "{ENV_REDACT}: the value of `{name}` is shorter than {MIN_LITERAL_CHARS} characters and is not redacted"
                )),
                None => warnings.push(format!("{ENV_REDACT}: `{name}` is not set")),
            }
        }
        (Redactor::new(&values), warnings)
    }

    /// The message with its secrets replaced; borrowed when there were none.
    pub fn message<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if self.off {
            return Cow::Borrowed(text);
        }
        let mut walk = Walk::new(self, text, None);
        walk.value(0);
        walk.finish()
    }

    /// Where the message still holds something that looks like a secret.
    pub fn findings(&self, text: &str) -> Vec<Finding> {
        let mut found = Vec::new();
        let mut walk = Walk::new(self, text, Some(&mut found));
        walk.value(0);
        drop(walk);
        found
    }

    /// Byte spans of secrets in a plain string, with the rule of each, merged.
    fn spans(&self, s: &str) -> Vec<(usize, usize, &'static str)> {
        let mut spans: Vec<(usize, usize, &'static str)> = Vec::new();
        for shape in SHAPES.iter() {
            for caps in shape.re.captures_iter(s) {
                if let Some(m) = caps.get(shape.group)
                    && (shape.group == 0
                        || shape.name != "bearer/basic credential"
                        || looks_like_token(m.as_str()))
                {
                    spans.push((m.start(), m.end(), shape.name));
                }
            }
        }
        for caps in URL_PARAM.captures_iter(s) {
            let name = caps.get(1).map_or("", |m| m.as_str());
            if (is_secret_name(name) || matches!(name, "key" | "sig" | "signature"))
                && let Some(m) = caps.get(2)
            {
                spans.push((m.start(), m.end(), "credential URL parameter"));
            }
        }
        // Each byte is read by at most one value: names inside a value are not looked at.
        let mut read_to = 0;
        for caps in ASSIGNMENT.captures_iter(s) {
            let (Some(whole), Some(name)) = (caps.get(0), caps.get(1)) else {
                continue;
            };
            if whole.start() < read_to || !is_secret_name(name.as_str()) {
                continue;
            }
            let (a, b) = assigned_value(s, whole.end());
            read_to = b;
            if a < b {
                spans.push((a, b, "credential assignment"));
            }
        }
        if let Some(lit) = &self.literals {
            spans.extend(
                lit.find_iter(s)
                    .map(|m| (m.start(), m.end(), "MCPTAPE_REDACT value")),
            );
        }
        // What is already redacted is not a secret.
        spans.retain(|&(a, _, _)| !s[a..].starts_with(REDACTED));
        spans.sort_unstable();
        let mut merged: Vec<(usize, usize, &'static str)> = Vec::with_capacity(spans.len());
        for (a, b, rule) in spans {
            match merged.last_mut() {
                // Overlapping, or apart only by blanks (`Authorization: Bearer xyz`).
                Some(last) if a <= last.1 || s[last.1..a].trim().is_empty() => {
                    last.1 = last.1.max(b)
                }
                _ => merged.push((a, b, rule)),
            }
        }
        merged
    }

    /// A plain string with its secret spans replaced, if any.
    fn string(&self, s: &str) -> Option<(String, &'static str)> {
        let spans = self.spans(s);
        let first = spans.first()?.2;
        let mut out = String::with_capacity(s.len());
        let mut last = 0;
        for (a, b, _) in spans {
            out.push_str(&s[last..a]);
            out.push_str(REDACTED);
            last = b;
        }
        out.push_str(&s[last..]);
        Some((out, first))
    }
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
    path: Vec<String>,
    findings: Option<&'f mut Vec<Finding>>,
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
            findings,
        }
    }

    fn finish(mut self) -> Cow<'a, str> {
        if !self.changed {
            return Cow::Borrowed(self.src);
        }
        self.out.push_str(&self.src[self.copied..]);
        Cow::Owned(self.out)
    }

    fn path_text(&self) -> String {
        let mut p = String::new();
        for seg in &self.path {
            if seg.starts_with('[') {
                p.push_str(seg);
            } else {
                if !p.is_empty() {
                    p.push('.');
                }
                p.push_str(seg);
            }
        }
        p
    }

    /// Replaces `src[a..b]` with `with` (or, when checking, notes a finding).
    fn replace(&mut self, a: usize, b: usize, with: &str, rule: &'static str) {
        if self.findings.is_some() {
            let path = self.path_text();
            if let Some(found) = self.findings.as_deref_mut() {
                found.push(Finding { path, rule });
            }
            return;
        }
        self.out.push_str(&self.src[self.copied..a]);
        self.out.push_str(with);
        self.copied = b;
        self.changed = true;
    }

    fn bytes(&self) -> &[u8] {
        self.src.as_bytes()
    }

    fn skip_ws(&mut self) {
        while self.pos < self.src.len() && self.bytes()[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    /// From an opening quote, the position after the closing one.
    fn string_end(&self, start: usize) -> usize {
        let b = self.bytes();
        let mut i = start + 1;
        while i < b.len() {
            match b[i] {
                b'\\' => i += 2,
                b'"' => return i + 1,
                _ => i += 1,
            }
        }
        b.len()
    }

    /// The position after the value starting at `start` (skipped, not looked into).
    fn value_end(&self, start: usize) -> usize {
        let b = self.bytes();
        match b.get(start) {
            Some(b'"') => self.string_end(start),
            Some(b'{' | b'[') => {
                let mut depth = 0usize;
                let mut i = start;
                while i < b.len() {
                    match b[i] {
                        b'"' => {
                            i = self.string_end(i);
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
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

    fn value(&mut self, nesting: usize) {
        self.skip_ws();
        match self.bytes().get(self.pos) {
            Some(b'{') => self.object(nesting),
            Some(b'[') => self.array(nesting),
            Some(b'"') => {
                let (a, b) = (self.pos, self.string_end(self.pos));
                self.pos = b;
                self.string_value(a, b, nesting);
            }
            Some(_) => self.pos = self.value_end(self.pos),
            None => {}
        }
    }

    fn object(&mut self, nesting: usize) {
        self.pos += 1;
        loop {
            self.skip_ws();
            match self.bytes().get(self.pos) {
                Some(b'}') | None => {
                    self.pos += 1;
                    return;
                }
                Some(b',') => {
                    self.pos += 1;
                    continue;
                }
                _ => {}
            }
            let key_start = self.pos;
            let key_end = self.string_end(key_start);
            let key: String =
                serde_json::from_str(&self.src[key_start..key_end]).unwrap_or_default();
            self.pos = key_end;
            self.skip_ws();
            self.pos += 1; // ':'
            self.skip_ws();
            self.path.push(key.clone());
            if is_secret_name(&key) {
                let (a, b) = (self.pos, self.value_end(self.pos));
                let already = &self.src[a..b] == "\"[REDACTED]\"";
                if !already {
                    self.replace(a, b, "\"[REDACTED]\"", "credential name");
                }
                self.pos = b;
            } else {
                self.value(nesting);
            }
            self.path.pop();
        }
    }

    fn array(&mut self, nesting: usize) {
        self.pos += 1;
        let mut index = 0;
        loop {
            self.skip_ws();
            match self.bytes().get(self.pos) {
                Some(b']') | None => {
                    self.pos += 1;
                    return;
                }
                Some(b',') => {
                    self.pos += 1;
                    index += 1;
                    continue;
                }
                _ => {}
            }
            self.path.push(format!("[{index}]"));
            self.value(nesting);
            self.path.pop();
        }
    }

    fn string_value(&mut self, a: usize, b: usize, nesting: usize) {
        let raw = &self.src[a..b];
        // Most strings have no backslash and nothing to find: decode only when needed.
        let decoded: Cow<str> = if raw.contains('\\') {
            match serde_json::from_str::<String>(raw) {
                Ok(s) => Cow::Owned(s),
                Err(_) => return,
            }
        } else {
            Cow::Borrowed(&raw[1..raw.len() - 1])
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
                self.replace(a, b, &quoted, "credential in JSON text");
            }
            return;
        }
        if let Some((text, rule)) = self.r.string(&decoded) {
            let quoted = serde_json::to_string(&text).expect("a string serializes");
            self.replace(a, b, &quoted, rule);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r() -> Redactor {
        Redactor::new(&["hunter2-literal".to_owned(), "short".to_owned()])
    }

    #[test]
    fn names() {
        for secret in [
            "password",
            "passwd",
            "secret",
            "token",
            "accessToken",
            "x-api-token",
            "id_token",
            "apiKey",
            "api_key",
            "x-api-key",
            "Authorization",
            "cookie",
            "set-cookie",
            "jwt",
            "passphrase",
            "private_key",
            "client_secret",
            "session_id",
            "Mcp-Session-Id",
            "refresh_token",
            "auth",
            "AWS_SECRET_ACCESS_KEY",
            "privateKey",
        ] {
            assert!(is_secret_name(secret), "{secret} is a credential name");
        }
        for data in [
            "maxTokens",
            "max_tokens",
            "progressToken",
            "tokenCount",
            "nextCursor",
            "cursor",
            "key",
            "sort_key",
            "tokens",
            "nextPageToken",
            "author",
            "authority",
            "monkey",
            "keyboard",
            "id",
            "session",
        ] {
            assert!(!is_secret_name(data), "{data} is data");
        }
    }

    #[test]
    fn secrets_by_name_at_any_depth_keep_everything_else() {
        let msg = r#"{"id":1.0, "params":{"arguments":{"apiKey":"abc","n":[{"password":{"x":1}}],"maxTokens":5,"progressToken":"p"}}}"#;
        assert_eq!(
            r().message(msg),
            r#"{"id":1.0, "params":{"arguments":{"apiKey":"[REDACTED]","n":[{"password":"[REDACTED]"}],"maxTokens":5,"progressToken":"p"}}}"#
        );
    }

    #[test]
    fn secrets_by_shape_in_any_string() {
        let cases = [
            (
                "Authorization: Bearer abc.def-123",
                "Authorization: [REDACTED]",
            ),
            ("use Bearer abcDEF123456 now", "use Bearer [REDACTED] now"),
            ("Basic dXNlcjpwYXNz", "Basic [REDACTED]"),
            (
                "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig_part-1 end",
                "jwt [REDACTED] end",
            ),
            (
                "see https://bob:s3cret@example.com/x",
                "see https://[REDACTED]@example.com/x",
            ),
            (
                "https://h/cb?code=1&access_token=abc123&x=1",
                "https://h/cb?code=1&access_token=[REDACTED]&x=1",
            ),
            ("https://h/#id_token=zzz", "https://h/#id_token=[REDACTED]"),
            ("API_KEY=abc123 other", "API_KEY=[REDACTED] other"),
            (r#"password: "hunter 2""#, r#"password: "[REDACTED]""#),
            ("key sk-proj-abcdefghijklmnopqrstuvwx1234", "key [REDACTED]"),
            ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED]"),
            ("xoxb-1234567890-abcdef", "[REDACTED]"),
            ("AKIAABCDEFGHIJKLMNOP", "[REDACTED]"),
            (
                "a -----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY----- b",
                "a [REDACTED] b",
            ),
            ("my hunter2-literal here", "my [REDACTED] here"),
            (
                "Echo: token=abc123 and more",
                "Echo: token=[REDACTED] and more",
            ),
            (
                "a=1, api_key: 'k-123', b=2",
                "a=1, api_key: '[REDACTED]', b=2",
            ),
        ];
        for (input, want) in cases {
            let msg = serde_json::json!({"result": {"text": input}}).to_string();
            let got: serde_json::Value = serde_json::from_str(&r().message(&msg)).expect("json");
            assert_eq!(got["result"]["text"], want, "{input}");
        }
    }

    #[test]
    fn look_alikes_survive() {
        for text in [
            "disk-utilization-report",
            "task-0123456789abcdef0123456789",
            "Basic information about tokens",
            "the bearer of bad news",
            "0b1d2c3e-4f50-6789-abcd-ef0123456789",
            "commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904",
            "short",
            "key: value",
            "mask-abcdefghijklmnopqrstuvwxyz",
        ] {
            let msg = serde_json::json!({"result": {"text": text, "sha": "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
                "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="}})
            .to_string();
            assert!(
                matches!(r().message(&msg), Cow::Borrowed(_)),
                "{text} was changed: {}",
                r().message(&msg)
            );
        }
    }

    #[test]
    fn json_in_text_is_redacted_as_json_keeping_its_format() {
        let inner = "{\"user\": \"bob\",  \"token\": \"abc\"}";
        let msg = serde_json::json!({"result": {"content": [{"type": "text", "text": inner}]}})
            .to_string();
        let got: serde_json::Value = serde_json::from_str(&r().message(&msg)).expect("json");
        assert_eq!(
            got["result"]["content"][0]["text"],
            "{\"user\": \"bob\",  \"token\": \"[REDACTED]\"}"
        );
    }

    #[test]
    fn unchanged_messages_are_borrowed_byte_for_byte() {
        let msg = r#"{"a" : 1e2, "b":"caf\u00e9 \/", "c":[ ]}"#;
        assert!(matches!(r().message(msg), Cow::Borrowed(m) if m == msg));
        assert!(matches!(
            Redactor::off().message(r#"{"token":"x"}"#),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn findings_have_paths() {
        let msg = r#"{"params":{"arguments":{"token":"abc","list":["Bearer abcdef123456"],"t":"{\"api_key\":\"x\"}","ok":"[REDACTED]"}}}"#;
        let paths: Vec<String> = r().findings(msg).into_iter().map(|f| f.path).collect();
        assert_eq!(
            paths,
            [
                "params.arguments.token",
                "params.arguments.list[0]",
                "params.arguments.t.api_key"
            ]
        );
        let clean = r().message(msg);
        assert!(r().findings(&clean).is_empty(), "{clean}");
        let again = r#"{"m":"token=[REDACTED] and Bearer [REDACTED] see https://h/?access_token=[REDACTED]"}"#;
        assert!(r().findings(again).is_empty(), "{:?}", r().findings(again));
    }

    #[test]
    fn env_rules() {
        let env = |name: &str| match name {
            "MCPTAPE_REDACT" => Some("LONG,SHORT,UNSET".to_owned()),
            "LONG" => Some("a-long-secret".to_owned()),
            "SHORT" => Some("abc".to_owned()),
            _ => None,
        };
        let (r, warnings) = Redactor::from_env(&env);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert_eq!(
            r.message(r#"{"x":"is a-long-secret!"}"#),
            r#"{"x":"is [REDACTED]!"}"#
        );
    }
}
