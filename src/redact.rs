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
//!   credential names, PEM private keys, and the key formats of about fifty providers —
//!   on word boundaries only. The name and shape tables live in [`crate::redact::rules`].
//! - **Literals**: the values of the environment variables named in `MCPTAPE_REDACT`.
//! - A string that is itself JSON (`content[].text` of many tools) is redacted as JSON,
//!   keeping its own formatting.
//!
//! Everything is linear in the input: one pass of the scanner (iterative, with an
//! explicit stack at any depth), and the `regex` crate's matching, which is linear by
//! construction.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

/// The replacement text.
pub const REDACTED: &str = "[REDACTED]";
/// Environment variable: comma-separated names of variables whose values are secrets.
pub const ENV_REDACT: &str = "MCPTAPE_REDACT";
/// Environment variable: `1` records without redaction.
pub const ENV_NO_REDACT: &str = "MCPTAPE_NO_REDACT";
/// Values of `MCPTAPE_REDACT` variables shorter than this are ignored (too likely to
/// occur by chance).
pub const MIN_LITERAL_CHARS: usize = 6;

pub mod entropy;
mod pem;
pub mod rule;
pub mod rules;
mod scanner;
mod shown;

use crate::redact::rules::is_secret_assignment_name;
pub use crate::redact::rules::is_secret_name;
pub use rule::Rule;

/// `?name=value` parameters of URLs and `;name=value` of connection strings (the value,
/// up to `;` or a whole `{…}`, is a secret when the name is).
static URL_PARAM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[?&#;]([A-Za-z0-9_.\-]+)=(\{[^}\x22]*\}|[^&#;\s\x22'<>]+)").expect("valid")
});
/// The `name=`, `name: `, `"name": ` of an assignment in plain text (the value is read
/// by [`assigned_value`], so that one assignment's value never hides the next name).
static ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"\b([A-Za-z_][A-Za-z0-9_.\-]*)\\?["']?[ \t]*[:=][ \t]*"#).expect("valid")
});

/// Names whose value runs to the end of the line (HTTP header style).
const WHOLE_LINE: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
];

/// The span of the value that starts at `at`: the rest of the line for header-style
/// names; a quoted string's inside (`"…"`, `'…'`, or `\"…\"` in escaped JSON); a whole
/// bracketed value; or a run up to a blank or a delimiter.
fn assigned_value(s: &str, at: usize, name: &str) -> (usize, usize) {
    let rest = &s.as_bytes()[at..];
    if WHOLE_LINE.contains(&name.to_ascii_lowercase().as_str()) {
        let line_end = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
        let text = &rest[..line_end];
        // Up to a closing quote or escaped quote, if the line is inside a string.
        let end = text
            .iter()
            .position(|&b| b == b'"' || b == b'\\')
            .unwrap_or(text.len());
        return (at, at + end);
    }
    if rest.starts_with(b"\\\"") {
        let end = rest[2..]
            .windows(2)
            .position(|w| w == b"\\\"")
            .map_or(rest.len(), |i| i + 2);
        return (at + 2, at + end);
    }
    match rest.first() {
        Some(&q @ (b'"' | b'\'')) => {
            let end = rest[1..]
                .iter()
                .position(|&b| b == q || b == b'\n')
                .map_or(rest.len(), |i| i + 1);
            (at + 1, at + end)
        }
        Some(&open @ (b'{' | b'[')) => {
            let close = if open == b'{' { b'}' } else { b']' };
            let mut depth = 0usize;
            let end = rest.iter().position(|&b| {
                if b == open {
                    depth += 1;
                } else if b == close {
                    depth -= 1;
                }
                depth == 0
            });
            (at, at + end.map_or(rest.len(), |i| i + 1))
        }
        _ => {
            let end = rest
                .iter()
                .position(|&b| b.is_ascii_whitespace() || b",;\"'&})]\\".contains(&b))
                .unwrap_or(rest.len());
            (at, at + end)
        }
    }
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
    pub rule: Rule,
}

impl Redactor {
    /// The built-in rules plus these literal secrets (shorter ones are left out).
    pub fn new(literals: &[String]) -> Redactor {
        // Each value as written, and as it reads inside JSON text (escaped quotes, `\/`).
        let kept: Vec<String> = literals
            .iter()
            .filter(|l| l.chars().count() >= MIN_LITERAL_CHARS)
            .flat_map(|l| {
                let json = serde_json::to_string(l).unwrap_or_default();
                let json = json[1..json.len().saturating_sub(1)].to_owned();
                let slashed = json.replace('/', "\\/");
                [l.clone(), json, slashed]
            })
            .map(|l| regex::escape(&l))
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

    /// The rules a recording uses: none when `MCPTAPE_NO_REDACT` is set, else those of
    /// [`Redactor::from_env`]. Returns warnings too.
    pub fn for_recording(get: &dyn Fn(&str) -> Option<String>) -> (Redactor, Vec<String>) {
        if get(ENV_NO_REDACT).is_some_and(|v| !v.is_empty() && v != "0") {
            return (
                Redactor::off(),
                vec![format!(
                    "{ENV_NO_REDACT} is set: recording without redaction; review the tape before sharing it"
                )],
            );
        }
        Redactor::from_env(get)
    }

    /// [`Redactor::from_env`] of this process's environment, built once: for messages
    /// (errors and warnings that name a command or URL), which may come often.
    pub fn for_messages() -> &'static Redactor {
        static MESSAGES: std::sync::OnceLock<Redactor> = std::sync::OnceLock::new();
        MESSAGES.get_or_init(|| Redactor::from_env(&|name| std::env::var(name).ok()).0)
    }

    /// The rules, with the values of the variables `MCPTAPE_REDACT` names (looked up with
    /// `get`), for everything that is not a recording — `redact`, verify's reports and
    /// `--update`, `servers` — which `MCPTAPE_NO_REDACT` never turns off. Returns warnings
    /// too.
    pub fn from_env(get: &dyn Fn(&str) -> Option<String>) -> (Redactor, Vec<String>) {
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
                None => warnings.push(format!(
                    "{ENV_REDACT}: `{name}` {}",
                    crate::config::unset_why(name)
                )),
            }
        }
        (Redactor::new(&values), warnings)
    }

    /// The message with its secrets replaced; borrowed when there were none.
    pub fn message<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if self.off {
            return Cow::Borrowed(text);
        }
        crate::redact::scanner::redact(self, text)
    }

    /// Where the message still holds something that looks like a secret.
    pub fn findings(&self, text: &str) -> Vec<Finding> {
        crate::redact::scanner::findings(self, text)
    }

    /// Byte spans of secrets in a plain string, with the rule of each, merged.
    fn spans(&self, s: &str) -> Vec<(usize, usize, Rule)> {
        let mut spans: Vec<(usize, usize, Rule)> = Vec::new();
        // Cheap byte scans first: most strings have no `=` or `:` at all, and then the
        // parameter and assignment patterns (which have no literal to search for) can
        // not match.
        let b = s.as_bytes();
        let has_assignment = memchr::memchr2(b'=', b':', b).is_some();
        let has_param = has_assignment && memchr::memchr3(b'?', b'&', b'#', b).is_some()
            || memchr::memchr(b';', b).is_some();
        rules::shape_spans(s, &mut spans);
        for caps in URL_PARAM.captures_iter(if has_param { s } else { "" }) {
            let name = caps.get(1).map_or("", |m| m.as_str());
            if rules::is_secret_param(name)
                && let Some(m) = caps.get(2)
            {
                spans.push((m.start(), m.end(), Rule::UrlParameter));
            }
        }
        // Each byte is read by at most one value: names inside a value are not looked at.
        let mut read_to = 0;
        for caps in ASSIGNMENT.captures_iter(if has_assignment { s } else { "" }) {
            let (Some(whole), Some(name)) = (caps.get(0), caps.get(1)) else {
                continue;
            };
            if whole.start() < read_to || !is_secret_assignment_name(name.as_str()) {
                continue;
            }
            let (a, b) = assigned_value(s, whole.end(), name.as_str());
            read_to = b;
            if a < b {
                spans.push((a, b, Rule::Assignment));
            }
        }
        if let Some(lit) = &self.literals {
            spans.extend(
                lit.find_iter(s)
                    .map(|m| (m.start(), m.end(), Rule::Literal)),
            );
        }
        // What is already redacted is not a secret.
        spans.retain(|&(a, _, _)| !s[a..].starts_with(REDACTED));
        // By position; at one position, by rule name, so the rule reported stays the same.
        spans.sort_unstable_by_key(|&(a, b, rule)| (a, b, rule.name()));
        let mut merged: Vec<(usize, usize, Rule)> = Vec::with_capacity(spans.len());
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
    pub(crate) fn string(&self, s: &str) -> Option<(String, Rule)> {
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
        let msg = r#"{"id":1.0, "params":{"arguments":{"apiKey":"abc","n":[{"password":{"x":1,"on":true}}],"maxTokens":5,"progressToken":"p"}}}"#;
        assert_eq!(
            r().message(msg),
            r#"{"id":1.0, "params":{"arguments":{"apiKey":"[REDACTED]","n":[{"password":{"x":"[REDACTED]","on":true}}],"maxTokens":5,"progressToken":"p"}}}"#
        );
    }

    #[test]
    fn secrets_by_shape_in_any_string() {
        let cases = [
            (
                "Authorization: Bearer abc.def-123456789012",
                "Authorization: [REDACTED]",
            ),
            (
                "use Bearer abcDEF1234567890xyz now",
                "use Bearer [REDACTED] now",
            ),
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
    fn what_the_review_found() {
        let cases = [
            (
                "Authorization: Token 9944b0abcdef",
                "Authorization: [REDACTED]",
            ),
            (
                "Cookie: sessionid=abc123def456; theme=dark",
                "Cookie: [REDACTED]",
            ),
            ("auth=alice:hunter2h next", "auth=[REDACTED] next"),
            ("token=abc=def", "token=[REDACTED]"),
            (
                r#"config: {"apiKey": {"value": "objsecret1"}} ok"#,
                r#"config: {"apiKey": [REDACTED]} ok"#,
            ),
            (
                r#"msg="sending {\"token\":\"logfmt-secret-1\"}""#,
                r#"msg="sending {\"token\":\"[REDACTED]\"}""#,
            ),
            (
                "redis://:hunter2i@cache:6379",
                "redis://[REDACTED]@cache:6379",
            ),
            ("postgres://bob:p@ssw0rd@db/x", "postgres://[REDACTED]@db/x"),
        ];
        for (input, want) in cases {
            let msg = serde_json::json!({"t": input}).to_string();
            let got: serde_json::Value = serde_json::from_str(&r().message(&msg)).expect("json");
            assert_eq!(got["t"], want, "{input}");
        }
        for name in [
            "APIToken",
            "IDToken",
            "DBPassword",
            "PGPASSWORD",
            "MCPSessionId",
            "AWSSecretKey",
            "token2",
            "secrets",
            "passwords",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        // A string cut mid-emoji still has its secrets found.
        let lone = r#"{"text":"your key is sk-proj-abcdefghijklmnopqrstuvwx1234 \ud83d"}"#;
        assert!(
            !r().message(lone).contains("abcdefghij"),
            "{}",
            r().message(lone)
        );
        // Schemas describe credentials; booleans say nothing.
        let schema = r#"{"inputSchema":{"properties":{"password":{"type":"string"},"apiKey":{"type":"string","description":"key"}}},"hasPassword":false,"cookie_consent":true}"#;
        assert_eq!(r().message(schema), schema);
        let argv: Vec<String> = [
            "srv",
            "--api-key",
            "k-0123456789",
            "--password",
            "pw",
            "--port",
            "80",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            r().argv(&argv),
            [
                "srv",
                "--api-key",
                "[REDACTED]",
                "--password",
                "[REDACTED]",
                "--port",
                "80"
            ]
        );
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
            "basic HTTP/1.1",
            "a basic read-only mode",
            "Basic example.com",
            "basic 2024-01-01",
            "the bearer co-signed it",
            "sk-hynix-quarterly-report-2024.pdf",
            "pwd: /home/bob",
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
        let msg = r#"{"params":{"arguments":{"token":"abc","list":["Bearer abcdef1234567890abc"],"t":"{\"api_key\":\"x\"}","ok":"[REDACTED]"}}}"#;
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
