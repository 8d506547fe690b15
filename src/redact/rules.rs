//! The redaction rules' tables: which member names are credentials, and which value
//! shapes are secrets — the generic ones (`Bearer`, `Basic`, JWTs, URL user info, PEM
//! private keys) and the key formats of about fifty providers.
//!
//! [`crate::redact`] applies these rules to messages; this module only says what a secret
//! looks like. The provider formats follow the published shapes of gitleaks' rules and
//! GitHub's secret-scanning patterns: a literal prefix, a charset, a length, and a
//! [`Check`] that keeps ordinary words with the same prefix out (`sk_live_documentation`,
//! `hf_transformers_cache`). Every shape is matched on a word boundary and in linear time:
//! the literals the formats start with (`sk_live_`, `AIza`, …) are searched for in one
//! pass of the `regex` crate's literal engines, and a format's own pattern runs, anchored,
//! only where one of its literals stands on a word boundary; the few formats without a
//! literal start run only when their inner literal (`:AA`, `Q~`) is in the string. The
//! list is documented, rule by rule, in `docs/REDACTION.md`.

use std::sync::LazyLock;

use regex::Regex;

use crate::redact::rule::{Provider, Rule};

/// Splits a member name into lowercase words: camelCase, snake_case, kebab-case, dots.
pub(crate) fn words(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        let prev = i.checked_sub(1).map(|j| chars[j]);
        let next = chars.get(i + 1).copied();
        // A hump (`accessToken`), or the last capital of an acronym (`DBPassword`, `APIToken`).
        let hump = c.is_uppercase()
            && prev.is_some_and(|p| {
                p.is_lowercase()
                    || p.is_ascii_digit()
                    || (p.is_uppercase() && next.is_some_and(char::is_lowercase))
            });
        if hump && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    // `token2` is a token.
    for w in &mut out {
        let kept = w.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        if kept > 0 {
            w.truncate(kept);
        }
    }
    out
}

/// Words that make any name a credential name wherever they stand.
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwords",
    "passwd",
    "secret",
    "secrets",
    "passphrase",
    "cookie",
    "cookies",
    "jwt",
    "authorization",
    "credential",
    "credentials",
    "creds",
    "apikey",
    "privatekey",
    "privkey",
    "accesskey",
    "secretkey",
    "accountkey",
    "clientkey",
    "sharedaccesskey",
];
/// Credential words also found inside a longer word (`PGPASSWORD`, `dbpasswd`).
const SECRET_INFIXES: &[&str] = &["password", "passwd", "passphrase"];
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
    "account",
    "client",
    "app",
    "application",
    "storage",
    "subscription",
    "license",
];
/// Short words for a password, secret only as a name's last word (`db_pass`, `userPwd`;
/// not `passCount`), and only as member and URL parameter names: in prose, `pass: 3` and
/// `pwd: /home/bob` are not credentials.
const PASSWORD_SHORTHANDS: &[&str] = &["pass", "pwd"];
/// Words before `pass` that make it a round, not a password (`firstPass`).
const NOT_SECRET_PASS: &[&str] = &[
    "first", "second", "third", "final", "last", "next", "multi", "single",
];

/// True when a member, URL parameter or flag name names a credential. See
/// `docs/REDACTION.md`.
pub fn is_secret_name(name: &str) -> bool {
    secret_name(name, true)
}

/// True when a URL or connection-string parameter's value is a secret: a credential
/// name, or a signature (`key`, `sig`, `signature`, `X-Amz-Signature`, `X-Goog-Signature`).
pub(crate) fn is_secret_param(name: &str) -> bool {
    is_secret_name(name)
        || matches!(name, "key" | "sig")
        || words(name).last().is_some_and(|w| w == "signature")
}

/// True when the name of a `name=value` / `name: value` assignment in plain text names a
/// credential: [`is_secret_name`] without the shorthands `pass` and `pwd`.
pub fn is_secret_assignment_name(name: &str) -> bool {
    secret_name(name, false)
}

fn secret_name(name: &str, shorthands: bool) -> bool {
    let w = words(name);
    if w.len() == 1 && w[0] == "auth" {
        return true;
    }
    w.iter().enumerate().any(|(i, word)| {
        let before = i.checked_sub(1).map(|j| w[j].as_str());
        let last = i + 1 == w.len();
        match word.as_str() {
            s if SECRET_WORDS.contains(&s) => true,
            s if SECRET_INFIXES.iter().any(|i| s.contains(i)) => true,
            "token" => last && !before.is_some_and(|b| NOT_SECRET_TOKEN.contains(&b)),
            "key" => before.is_some_and(|b| SECRET_KEY.contains(&b)),
            "id" => before == Some("session"),
            s if PASSWORD_SHORTHANDS.contains(&s) => {
                shorthands && last && !before.is_some_and(|b| NOT_SECRET_PASS.contains(&b))
            }
            _ => false,
        }
    })
}

/// What a match must also show to count, beyond its pattern: the tests that keep
/// ordinary words and identifiers with a provider's prefix out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    /// The pattern is tight enough alone.
    None,
    /// At least two of: a lowercase letter, a capital, a digit (a random string, not a
    /// word: `sk_live_documentation` is not a key).
    Random,
    /// A capital and a lowercase letter (Hugging Face tokens are letters only).
    MixedCase,
    /// A run of 20+ letters and digits (`sk-proj-…`, not `sk-hynix-quarterly-report`).
    LongRun,
    /// The whole match is base64 of a PEM private key, not of a certificate.
    PemBase64,
}

impl Check {
    fn passes(self, whole: &str, s: &str) -> bool {
        let has = |f: fn(&u8) -> bool| s.as_bytes().iter().any(f);
        match self {
            Check::None => true,
            Check::Random => {
                [
                    has(u8::is_ascii_lowercase),
                    has(u8::is_ascii_uppercase),
                    has(u8::is_ascii_digit),
                ]
                .iter()
                .filter(|&&b| b)
                .count()
                    >= 2
            }
            Check::MixedCase => has(u8::is_ascii_lowercase) && has(u8::is_ascii_uppercase),
            Check::LongRun => s
                .split(|c: char| !c.is_ascii_alphanumeric())
                .any(|run| run.len() >= 20),
            Check::PemBase64 => crate::redact::pem::is_base64_private_key(whole),
        }
    }
}

/// Which part of a match is replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// The whole key, prefix included.
    Whole,
    /// The part after the prefix (webhook URLs keep their host and path, connection
    /// strings their `AccountKey=`).
    Body,
}

/// One provider's key format: `prefix` then `body` (both regex syntax).
struct KeyFormat {
    /// Whose format it is (what `redact --check` calls it).
    provider: Provider,
    prefix: &'static str,
    body: &'static str,
    check: Check,
    part: Part,
    /// For a format with no literal prefix: a literal inside every match, searched for
    /// before the pattern runs.
    inner: Option<&'static str>,
    /// The literals one of which every match starts with, `|`-separated; empty: the
    /// prefix itself is a literal (`\.` read as `.`).
    starts: &'static str,
}

impl KeyFormat {
    /// The literals a match starts with, when the prefix is not one literal.
    const fn starts(mut self, literals: &'static str) -> KeyFormat {
        self.starts = literals;
        self
    }

    /// The literals a match starts with.
    fn literals(&self) -> Vec<String> {
        if !self.starts.is_empty() {
            return self.starts.split('|').map(str::to_owned).collect();
        }
        let literal = self.prefix.replace(r"\.", ".");
        assert!(
            !literal.contains(['\\', '(', '[', '?', '|', '*', '+', '{']),
            "the prefix of {} is a pattern: give its literals",
            self.provider.name()
        );
        vec![literal]
    }
}

const fn key(
    provider: &'static str,
    prefix: &'static str,
    body: &'static str,
    check: Check,
) -> KeyFormat {
    KeyFormat {
        provider: Provider::new(provider),
        prefix,
        body,
        check,
        part: Part::Whole,
        inner: None,
        starts: "",
    }
}

const fn after(provider: &'static str, prefix: &'static str, body: &'static str) -> KeyFormat {
    KeyFormat {
        provider: Provider::new(provider),
        prefix,
        body,
        check: Check::Random,
        part: Part::Body,
        inner: None,
        starts: "",
    }
}

const fn inner(
    provider: &'static str,
    needle: &'static str,
    body: &'static str,
    check: Check,
) -> KeyFormat {
    KeyFormat {
        provider: Provider::new(provider),
        prefix: "",
        body,
        check,
        part: Part::Whole,
        inner: Some(needle),
        starts: "",
    }
}

/// ASCII word boundary: a key next to a non-ASCII letter is still a key, and the lazy DFA
/// handles it (a Unicode `\b` would push the regex crate to a slower engine).
const B: &str = r"(?-u:\b)";

/// The provider key formats, in the order they are tried at one position (the more
/// specific first: `sk-ant-` before `sk-`).
#[rustfmt::skip]
static KEY_FORMATS: &[KeyFormat] = &[
    key("AWS access key", r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])", r"[A-Z0-9]{16}(?-u:\b)", Check::None).starts("AKIA|ASIA|ABIA|ACCA|A3T"),
    key("GitHub token", r"gh[pousr]_", r"[A-Za-z0-9]{30,255}(?-u:\b)", Check::None).starts("ghp_|gho_|ghu_|ghs_|ghr_"),
    key("GitHub token", r"github_pat_", r"[A-Za-z0-9_]{20,255}(?-u:\b)", Check::None),
    key("GitLab token", r"gl(?:pat|dt|ptt|rt|cbt|ft|imt|oas|soat|ffct|agent)-", r"[A-Za-z0-9_\-]{20,300}", Check::Random).starts("glpat-|gldt-|glptt-|glrt-|glcbt-|glft-|glimt-|gloas-|glsoat-|glffct-|glagent-"),
    key("GitLab token", r"GR1348941", r"[A-Za-z0-9_\-]{20,}", Check::Random),
    key("Slack token", r"(?:xox[abeoprs]|xoxe\.xox[bp])-", r"[A-Za-z0-9\-]{10,}", Check::Random).starts("xoxa-|xoxb-|xoxe-|xoxo-|xoxp-|xoxr-|xoxs-|xoxe.xox"),
    key("Slack token", r"xapp-\d-", r"[A-Za-z0-9\-]{20,}", Check::Random).starts("xapp-"),
    key("Slack token", r"xoxc-", r"[0-9]{6,}-[0-9]{6,}-[0-9]{6,}-[a-f0-9]{32,}(?-u:\b)", Check::None),
    key("Slack token", r"xoxd-", r"[A-Za-z0-9%/+=_\-]{40,}", Check::Random),
    after("Slack webhook", r"hooks\.slack\.com/(?:services|workflows|triggers)/", r"[A-Za-z0-9_+/\-]{20,}").starts("hooks.slack.com/"),
    key("Stripe key", r"(?:sk|rk)_(?:live|test|prod)_", r"[A-Za-z0-9]{10,247}(?-u:\b)", Check::Random).starts("sk_live_|sk_test_|sk_prod_|rk_live_|rk_test_|rk_prod_"),
    key("Stripe webhook secret", r"whsec_", r"[A-Za-z0-9+/]{24,}", Check::Random),
    key("Google API key", r"AIza", r"[A-Za-z0-9_\-]{35}", Check::None),
    key("Google OAuth client secret", r"GOCSPX-", r"[A-Za-z0-9_\-]{28}", Check::None),
    key("Google OAuth token", r"ya29\.", r"[A-Za-z0-9_\-]{30,}", Check::Random),
    after("Azure storage key", r"(?i:AccountKey|SharedAccessKey)=", r"[A-Za-z0-9+/]{20,}={0,2}").starts("AccountKey=|accountkey=|ACCOUNTKEY=|SharedAccessKey=|sharedaccesskey=|SHAREDACCESSKEY="),
    key("Anthropic key", r"sk-ant-(?:api|admin|sid|oat|ort)\d\d-", r"[A-Za-z0-9_\-]{20,}", Check::Random).starts("sk-ant-"),
    key("OpenAI key", r"sk-", r"[A-Za-z0-9_\-]{20,}(?-u:\b)", Check::LongRun),
    key("Hugging Face token", r"(?:hf_|api_org_)", r"[A-Za-z]{34}(?-u:\b)", Check::MixedCase).starts("hf_|api_org_"),
    key("npm token", r"npm_", r"[A-Za-z0-9]{36}(?-u:\b)", Check::Random),
    key("PyPI token", r"pypi-AgEIcHlwaS5vcmc", r"[A-Za-z0-9_\-]{50,}", Check::None),
    key("Docker Hub token", r"dckr_(?:pat|oat)_", r"[A-Za-z0-9_\-]{27,}", Check::Random).starts("dckr_pat_|dckr_oat_"),
    key("SendGrid key", r"SG\.", r"[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}", Check::None),
    key("Twilio key", r"SK", r"[0-9a-fA-F]{32}(?-u:\b)", Check::Random),
    key("Mailgun key", r"key-", r"[0-9a-f]{32}(?-u:\b)", Check::Random),
    key("Shopify token", r"shp(?:at|ca|pa|ss)_", r"[a-fA-F0-9]{32}(?-u:\b)", Check::Random).starts("shpat_|shpca_|shppa_|shpss_"),
    key("DigitalOcean token", r"do[opr]_v1_", r"[a-f0-9]{64}(?-u:\b)", Check::None).starts("dop_v1_|doo_v1_|dor_v1_"),
    key("Heroku key", r"HRKU-", r"[A-Za-z0-9_\-]{60}", Check::Random),
    after("Discord webhook", r"discord(?:app)?\.com/api/webhooks/", r"[0-9]{17,20}/[A-Za-z0-9_\-]{60,68}").starts("discord.com/api/webhooks/|discordapp.com/api/webhooks/"),
    key("Linear key", r"lin_(?:api|oauth)_", r"[A-Za-z0-9]{40}(?-u:\b)", Check::Random).starts("lin_api_|lin_oauth_"),
    key("Notion token", r"ntn_", r"[0-9]{11}[A-Za-z0-9]{35}(?-u:\b)", Check::None),
    key("Notion token", r"secret_", r"[A-Za-z0-9]{43}(?-u:\b)", Check::Random),
    key("Atlassian token", r"AT(?:ATT|CTT)3", r"[A-Za-z0-9_\-=]{150,}", Check::None).starts("ATATT3|ATCTT3"),
    key("Databricks token", r"dapi", r"[a-f0-9]{32}(?:-[0-9])?(?-u:\b)", Check::Random),
    key("Doppler token", r"dp\.(?:pt|st|sa|ct|scim|audit)\.", r"[A-Za-z0-9]{40,44}(?-u:\b)", Check::Random).starts("dp."),
    key("Postman key", r"PMAK-", r"[a-fA-F0-9]{24}-[a-fA-F0-9]{34}(?-u:\b)", Check::None),
    key("Grafana token", r"glsa_", r"[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}(?-u:\b)", Check::None),
    key("Grafana token", r"glc_", r"[A-Za-z0-9+/]{32,400}={0,2}", Check::Random),
    key("HashiCorp Vault token", r"hv[sb]\.", r"[A-Za-z0-9_\-]{90,}", Check::Random).starts("hvs.|hvb."),
    key("Sentry token", r"sntry[us]_", r"[A-Za-z0-9+/=_]{60,}", Check::Random).starts("sntrys_|sntryu_"),
    key("age secret key", r"AGE-SECRET-KEY-1", r"[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", Check::None),
    key("Supabase token", r"sb(?:p|_secret)_", r"[A-Za-z0-9_\-]{32,}", Check::Random).starts("sbp_|sb_secret_"),
    key("Square token", r"(?:EAAA|sq0atp-|sq0csp-)", r"[A-Za-z0-9_\-]{22,60}(?-u:\b)", Check::Random).starts("EAAA|sq0atp-|sq0csp-"),
    key("Airtable token", r"pat", r"[A-Za-z0-9]{14}\.[a-f0-9]{64}(?-u:\b)", Check::None),
    key("PlanetScale token", r"pscale_(?:tkn|pw|oauth)_", r"[A-Za-z0-9_.=\-]{32,64}", Check::Random).starts("pscale_"),
    key("Pulumi token", r"pul-", r"[a-f0-9]{40}(?-u:\b)", Check::None),
    key("Replicate token", r"r8_", r"[A-Za-z0-9]{37}(?-u:\b)", Check::Random),
    key("Groq key", r"gsk_", r"[A-Za-z0-9]{52}(?-u:\b)", Check::Random),
    key("xAI key", r"xai-", r"[A-Za-z0-9]{80}(?-u:\b)", Check::Random),
    key("Perplexity key", r"pplx-", r"[A-Za-z0-9]{48}(?-u:\b)", Check::Random),
    key("New Relic key", r"NR(?:AK|II)-", r"[A-Za-z0-9\-]{27,32}(?-u:\b)", Check::Random).starts("NRAK-|NRII-"),
    key("Figma token", r"figd_", r"[A-Za-z0-9_\-]{40}", Check::Random),
    key("Alibaba Cloud key", r"LTAI", r"[A-Za-z0-9]{20}(?-u:\b)", Check::Random),
    key("Cloudflare origin CA key", r"v1\.0-", r"[a-f0-9]{24}-[a-f0-9]{146}(?-u:\b)", Check::None),
    key("LangSmith key", r"lsv2_(?:pt|sk)_", r"[a-f0-9]{32}_[a-f0-9]{10}(?-u:\b)", Check::None).starts("lsv2_"),
    key("Tailscale key", r"tskey-(?:api|auth|client|webhook|scim)-", r"[A-Za-z0-9]{6,}-[A-Za-z0-9]{20,}(?-u:\b)", Check::Random).starts("tskey-"),
    key("Fly.io token", r"(?:fo1_|fm[12][ar]?_)", r"[A-Za-z0-9_+/\-]{43,}={0,3}", Check::Random).starts("fo1_|fm1_|fm2_|fm1a_|fm1r_|fm2a_|fm2r_"),
    key("base64 PEM private key", crate::redact::pem::BASE64_BEGIN, r"[A-Za-z0-9+/]{40,}={0,2}", Check::PemBase64),
    key("1Password token", r"ops_eyJ", r"[A-Za-z0-9+/]{250,}={0,3}", Check::None),
    key("RubyGems key", r"rubygems_", r"[a-f0-9]{48}(?-u:\b)", Check::None),
    key("Dynatrace token", r"dt0c01\.", r"[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}(?-u:\b)", Check::None),
    key("Brevo key", r"xkeysib-", r"[a-f0-9]{64}-[A-Za-z0-9]{16}(?-u:\b)", Check::None),
    key("Artifactory key", r"AKCp", r"[A-Za-z0-9]{69}(?-u:\b)", Check::Random),
    inner("Telegram bot token", ":AA", r"[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}", Check::None),
    inner("Azure AD client secret", "Q~", r"[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}", Check::Random),
    inner("Discord bot token", ".", r"[MNO][A-Za-z0-9_\-]{23,25}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}(?-u:\b)", Check::Random),
    inner("Terraform Cloud token", ".atlasv1.", r"[a-z0-9]{14}\.atlasv1\.[a-z0-9_=\-]{60,70}", Check::Random),
    inner("Mailchimp key", "-us", r"[0-9a-f]{32}-us[0-9]{1,2}(?-u:\b)", Check::Random),
];

/// A compiled generic shape and the capture group holding the secret (0: the whole match).
struct Shape {
    rule: Rule,
    re: Regex,
    group: usize,
}

fn compile(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a valid built-in pattern")
}

fn shape(rule: Rule, pattern: &str, group: usize) -> Shape {
    Shape {
        rule,
        re: compile(pattern),
        group,
    }
}

/// The generic shapes, each a pattern of its own.
static SHAPES: LazyLock<Vec<Shape>> = LazyLock::new(|| {
    vec![
        shape(
            Rule::Bearer,
            r"(?i)\bbearer[ \t]+([A-Za-z0-9\-._~+/]{16,}=*)",
            1,
        ),
        shape(
            Rule::Basic,
            r"(?i)\bbasic[ \t]+([A-Za-z0-9+/]{12,}={0,2})(?:[^A-Za-z0-9+/=.\-]|$)",
            1,
        ),
        shape(
            Rule::Jwt,
            r"\beyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*",
            0,
        ),
        shape(
            Rule::UrlUserInfo,
            r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://([^/\s:@\x22']*:[^/\s\x22']*)@",
            1,
        ),
        shape(
            Rule::PemPrivateKey,
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----",
            0,
        ),
    ]
});

/// How many literals one search takes: past 64, the `regex` crate's Teddy (its fastest
/// multi-literal search) gives way to a slower Aho-Corasick automaton.
const LITERALS_PER_SEARCH: usize = 60;

/// The literals the key formats with a prefix start with, as alternations of at most
/// [`LITERALS_PER_SEARCH`]: the `regex` crate searches for them with Teddy, and a
/// format's pattern runs only where one of them stands on a word boundary.
static STARTS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    let mut all: Vec<String> = LITERALS.iter().flatten().cloned().collect();
    all.sort_unstable();
    all.dedup();
    all.chunks(LITERALS_PER_SEARCH)
        .map(|chunk| {
            let escaped: Vec<String> = chunk.iter().map(|l| regex::escape(l)).collect();
            compile(&escaped.join("|"))
        })
        .collect()
});

/// Per key format (in [`KEY_FORMATS`]' order), the literals its matches start with
/// (none for the formats with an inner literal).
static LITERALS: LazyLock<Vec<Vec<String>>> = LazyLock::new(|| {
    KEY_FORMATS
        .iter()
        .map(|k| match k.inner {
            None => k.literals(),
            Some(_) => Vec::new(),
        })
        .collect()
});

/// Each key format alone with its body as group 1: anchored at a literal's position for
/// the formats with a prefix, searched for where the inner literal is for the others.
static EACH: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    KEY_FORMATS
        .iter()
        .map(|k| match k.inner {
            None => compile(&format!("^(?:{})({})", k.prefix, k.body)),
            Some(_) => compile(&format!("{B}({})", k.body)),
        })
        .collect()
});

/// True when a byte is a word character for the ASCII word boundaries of the formats.
fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// A bearer or basic token must look like one — a digit or a capital inside it — so that
/// "Basic information" stays prose.
fn plausible(rule: Rule, s: &str) -> bool {
    match rule {
        Rule::Bearer | Rule::Basic => {
            s.chars().any(|c| c.is_ascii_digit())
                || s.chars().skip(1).any(|c| c.is_ascii_uppercase())
        }
        _ => true,
    }
}

/// Appends the byte spans of `s` that the shape rules (generic and provider) call
/// secrets, each with its rule's name. Spans may overlap; the caller merges them.
pub fn shape_spans(s: &str, spans: &mut Vec<(usize, usize, Rule)>) {
    for shape in SHAPES.iter() {
        for caps in shape.re.captures_iter(s) {
            if let Some(m) = caps.get(shape.group)
                && plausible(shape.rule, m.as_str())
            {
                spans.push((m.start(), m.end(), shape.rule));
            }
        }
    }
    // Where a literal starts on a word boundary, the first format (in table order) that
    // matches there wins; literals inside a key found are not looked at again.
    let bytes = s.as_bytes();
    let mut starts: Vec<usize> = Vec::new();
    for re in STARTS.iter() {
        starts.extend(
            re.find_iter(s)
                .map(|m| m.start())
                .filter(|&at| at == 0 || !is_word(bytes[at - 1])),
        );
    }
    if STARTS.len() > 1 {
        starts.sort_unstable();
        starts.dedup();
    }
    let mut read_to = 0;
    for at in starts {
        if at < read_to {
            continue;
        }
        let rest = &s[at..];
        // A plain search rejects most candidates; the groups are read only for a match.
        let found = KEY_FORMATS
            .iter()
            .zip(EACH.iter())
            .zip(LITERALS.iter())
            .filter(|(_, literals)| literals.iter().any(|l| rest.starts_with(l.as_str())))
            .find(|((_, re), _)| re.is_match(rest))
            .and_then(|((k, re), _)| re.captures(rest).map(|c| (k, c)));
        let Some((k, caps)) = found else { continue };
        let (Some(whole), Some(body)) = (caps.get(0), caps.get(1)) else {
            continue;
        };
        if k.check.passes(whole.as_str(), body.as_str()) {
            let start = match k.part {
                Part::Whole => at,
                Part::Body => at + body.start(),
            };
            spans.push((start, at + whole.end(), Rule::Key(k.provider)));
            read_to = at + whole.end();
        }
    }
    for (k, re) in KEY_FORMATS.iter().zip(EACH.iter()) {
        let Some(needle) = k.inner else { continue };
        if memchr::memmem::find(s.as_bytes(), needle.as_bytes()).is_none() {
            continue;
        }
        for m in re.find_iter(s) {
            if k.check.passes(m.as_str(), m.as_str()) {
                spans.push((m.start(), m.end(), Rule::Key(k.provider)));
            }
        }
    }
}

/// The distinct providers the key formats cover.
pub fn key_providers() -> Vec<Provider> {
    let mut all: Vec<Provider> = KEY_FORMATS.iter().map(|k| k.provider).collect();
    all.sort_unstable();
    all.dedup();
    all
}

/// The distinct provider names the key formats cover (for docs and tests).
#[cfg(test)]
pub fn providers() -> Vec<&'static str> {
    key_providers().into_iter().map(Provider::name).collect()
}

#[cfg(test)]
pub(crate) mod tests;
