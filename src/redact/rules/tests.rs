//! Table tests of the redaction rules: every provider format both ways (a realistic fake
//! is redacted, its near miss is not), through the writer (`Redactor::message`) and
//! through `redact --check` (`Redactor::findings`). The fakes are generated, so this file
//! holds no secret-shaped literal for scanners to trip on.

use std::borrow::Cow;

use super::*;
use crate::redact::Redactor;

const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER: &str = "abcdefghijklmnopqrstuvwxyz";
const DIGITS: &str = "0123456789";
const HEX: &str = "0123456789abcdef";

fn alnum() -> String {
    format!("{UPPER}{LOWER}{DIGITS}")
}
fn b64url() -> String {
    format!("{}_-", alnum())
}
fn b64() -> String {
    format!("{}+/", alnum())
}

/// `n` characters of `charset`, pseudo-random from `seed` (the same every run).
pub(crate) fn fake(charset: &str, n: usize, seed: u64) -> String {
    let cs = charset.as_bytes();
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            char::from(cs[(x % cs.len() as u64) as usize])
        })
        .collect()
}

/// One provider: its rule name, a fake secret, and a near miss that must survive.
struct Case {
    rule: &'static str,
    secret: String,
    near: String,
    /// What a redacted `secret` reads as (`[REDACTED]` unless the rule keeps a prefix).
    redacted: String,
}

fn case(rule: &'static str, secret: String, near: impl Into<String>) -> Case {
    Case {
        rule,
        secret,
        near: near.into(),
        redacted: "[REDACTED]".into(),
    }
}

fn keeping(rule: &'static str, kept: &str, body: String, near: impl Into<String>) -> Case {
    Case {
        rule,
        secret: format!("{kept}{body}"),
        near: near.into(),
        redacted: format!("{kept}[REDACTED]"),
    }
}

#[rustfmt::skip]
fn cases() -> Vec<Case> {
    let (an, bu, b6) = (alnum(), b64url(), b64());
    let updig = format!("{UPPER}{DIGITS}");
    let lowdig = format!("{LOWER}{DIGITS}");
    let f = |cs: &str, n: usize| fake(cs, n, n as u64 + cs.len() as u64);
    vec![
        case("AWS access key", format!("AKIA{}", f(&updig, 16)), format!("AKIA{}", f(UPPER, 12))),
        case("AWS access key", format!("ASIA{}", f(&updig, 16)), "ASIAN-FUSION-RESTAURANTS"),
        case("GitHub token", format!("ghp_{}", f(&an, 36)), format!("ghp_{}", f(&an, 20))),
        case("GitHub token", format!("ghs_{}", f(&an, 36)), "ghs_pages_deploy"),
        case("GitHub token", format!("github_pat_{}_{}", f(&an, 22), f(&an, 59)), "github_pat_example"),
        case("GitLab token", format!("glpat-{}", f(&bu, 20)), "glpat-personal-access-token"),
        case("GitLab token", format!("glrt-{}", f(&bu, 20)), "glrt-runner-registration"),
        case("Slack token", format!("xoxb-{}-{}-{}", f(DIGITS, 12), f(DIGITS, 13), f(&an, 24)), "xoxb-not-a-token"),
        case("Slack token", format!("xapp-1-{}-{}-{}", f(&updig, 11), f(DIGITS, 13), f(&lowdig, 64)), "xapp-1-demo"),
        keeping("Slack webhook", "https://hooks.slack.com/services/", format!("T{}/B{}/{}", f(&updig, 8), f(&updig, 10), f(&an, 24)), "https://hooks.slack.com/services/"),
        case("Stripe key", format!("sk_live_{}", f(&an, 24)), "sk_live_documentation"),
        case("Stripe key", format!("rk_live_{}", f(&an, 99)), "rk_live_mode"),
        case("Stripe key", format!("sk_test_{}", f(&an, 24)), "sk_test_fixtures_folder"),
        case("Stripe webhook secret", format!("whsec_{}", f(&an, 32)), "whsec_example"),
        case("Google API key", format!("AIza{}", f(&bu, 35)), format!("AIza{}", f(&an, 20))),
        case("Google OAuth client secret", format!("GOCSPX-{}", f(&bu, 28)), "GOCSPX-short"),
        case("Google OAuth token", format!("ya29.{}", f(&bu, 60)), "ya29.example-token-value-for-docs"),
        keeping("Azure storage key", "AccountName=acct;AccountKey=", format!("{}==", f(&b6, 86)), "AccountName=acct;EndpointSuffix=core.windows.net"),
        case("Anthropic key", format!("sk-ant-api03-{}AA", f(&bu, 93)), "sk-ant-docs"),
        case("OpenAI key", format!("sk-proj-{}", f(&an, 48)), "sk-learn"),
        case("OpenAI key", format!("sk-{}", f(&an, 48)), "sk-hynix-quarterly-report-2024.pdf"),
        case("Hugging Face token", format!("hf_{}", f(&format!("{UPPER}{LOWER}"), 34)), format!("hf_{}", f(LOWER, 34))),
        case("npm token", format!("npm_{}", f(&an, 36)), format!("npm_{}", f(LOWER, 36))),
        case("PyPI token", format!("pypi-AgEIcHlwaS5vcmc{}", f(&bu, 70)), "pypi-AgEIcHlwaS5vcmc"),
        case("Docker Hub token", format!("dckr_pat_{}", f(&bu, 27)), "dckr_pat_example"),
        case("SendGrid key", format!("SG.{}.{}", f(&bu, 22), f(&bu, 43)), format!("SG.{}", f(&bu, 22))),
        case("Twilio key", format!("SK{}", f(HEX, 32)), format!("SK{}", f(HEX, 31))),
        case("Mailgun key", format!("key-{}", f(HEX, 32)), format!("key-{}", f(HEX, 16))),
        case("Shopify token", format!("shpat_{}", f(HEX, 32)), format!("shpat_{}", f(HEX, 31))),
        case("DigitalOcean token", format!("dop_v1_{}", f(HEX, 64)), format!("dop_v1_{}", f(HEX, 63))),
        case("Heroku key", format!("HRKU-AA{}", f(&bu, 58)), "HRKU-docs"),
        keeping("Discord webhook", "https://discord.com/api/webhooks/", format!("{}/{}", f(DIGITS, 18), f(&bu, 68)), "https://discord.com/api/webhooks/"),
        case("Discord bot token", format!("M{}.{}.{}", f(&an, 25), f(&an, 6), f(&an, 38)), "MyApplicationServiceWorker.js.map"),
        case("Telegram bot token", format!("{}:AA{}", f(DIGITS, 10), f(&an, 33)), "1234567890:AAbc"),
        case("Linear key", format!("lin_api_{}", f(&an, 40)), format!("lin_api_{}", f(LOWER, 40))),
        case("Notion token", format!("ntn_{}{}", f(DIGITS, 11), f(&an, 35)), "ntn_workspace"),
        case("Notion token", format!("secret_{}", f(&an, 43)), "secret_sauce"),
        case("Atlassian token", format!("ATATT3{}", f(&bu, 186)), "ATATT3xFfGF0"),
        case("Databricks token", format!("dapi{}", f(HEX, 32)), format!("dapi{}", f(HEX, 20))),
        case("Doppler token", format!("dp.pt.{}", f(&an, 43)), "dp.pt.example"),
        case("Postman key", format!("PMAK-{}-{}", f(HEX, 24), f(HEX, 34)), format!("PMAK-{}", f(HEX, 24))),
        case("Grafana token", format!("glsa_{}_{}", f(&an, 32), f(HEX, 8)), format!("glsa_{}", f(&an, 10))),
        case("Grafana token", format!("glc_{}", f(&b6, 60)), "glc_example"),
        case("HashiCorp Vault token", format!("hvs.{}", f(&bu, 95)), "hvs.example"),
        case("Sentry token", format!("sntryu_{}", f(HEX, 64)), "sntryu_short"),
        case("age secret key", format!("AGE-SECRET-KEY-1{}", f("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)), "AGE-SECRET-KEY-1EXAMPLE"),
        case("Supabase token", format!("sbp_{}", f(HEX, 40)), format!("sbp_{}", f(HEX, 8))),
        case("Square token", format!("EAAA{}", f(&an, 60)), "EAAAexample"),
        case("Airtable token", format!("pat{}.{}", f(&an, 14), f(HEX, 64)), "pattern.matching"),
        case("PlanetScale token", format!("pscale_tkn_{}", f(&an, 43)), "pscale_tkn_short"),
        case("Pulumi token", format!("pul-{}", f(HEX, 40)), format!("pul-{}", f(HEX, 39))),
        case("Replicate token", format!("r8_{}", f(&an, 37)), format!("r8_{}", f(&an, 10))),
        case("Groq key", format!("gsk_{}", f(&an, 52)), "gsk_example"),
        case("xAI key", format!("xai-{}", f(&an, 80)), "xai-grok-model-card"),
        case("Perplexity key", format!("pplx-{}", f(&an, 48)), "pplx-online-model"),
        case("New Relic key", format!("NRAK-{}", f(&updig, 27)), "NRAK-short"),
        case("Figma token", format!("figd_{}", f(&bu, 40)), "figd_example"),
        case("Alibaba Cloud key", format!("LTAI{}", f(&an, 20)), format!("LTAI{}", f(&an, 19))),
        case("Cloudflare origin CA key", format!("v1.0-{}-{}", f(HEX, 24), f(HEX, 146)), "v1.0-beta"),
        case("LangSmith key", format!("lsv2_pt_{}_{}", f(HEX, 32), f(HEX, 10)), format!("lsv2_pt_{}", f(HEX, 32))),
        case("Tailscale key", format!("tskey-auth-{}-{}", f(&an, 10), f(&an, 30)), "tskey-auth-docs"),
        case("Fly.io token", format!("fo1_{}", f(&bu, 43)), "fo1_x"),
        case("1Password token", format!("ops_eyJ{}", f(&b6, 260)), "ops_eyJshort"),
        case("RubyGems key", format!("rubygems_{}", f(HEX, 48)), format!("rubygems_{}", f(HEX, 47))),
        case("Dynatrace token", format!("dt0c01.{}.{}", f(&an, 24), f(&an, 64)), "dt0c01.example"),
        case("Brevo key", format!("xkeysib-{}-{}", f(HEX, 64), f(&an, 16)), format!("xkeysib-{}", f(HEX, 64))),
        case("Artifactory key", format!("AKCp{}", f(&an, 69)), format!("AKCp{}", f(&an, 20))),
        case("Azure AD client secret", format!("{}8Q~{}", f(&an, 3), f(&an, 34)), "abc8Q~short"),
        case("Terraform Cloud token", format!("{}.atlasv1.{}", f(&lowdig, 14), f(&lowdig, 64)), "terraform.atlasv1.docs"),
        case("Mailchimp key", format!("{}-us6", f(HEX, 32)), format!("{}-us6", f(HEX, 31))),
        case("PEM private key", format!("-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n-----END OPENSSH PRIVATE KEY-----", f(&b6, 64)), "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----"),
        case("PEM private key", format!("-----BEGIN PGP PRIVATE KEY BLOCK-----\n{}\n-----END PGP PRIVATE KEY BLOCK-----", f(&b6, 64)), "-----BEGIN PGP PUBLIC KEY BLOCK-----"),
        keeping("credential assignment", "DD_API_KEY=", f(HEX, 32), "DD_SITE=datadoghq.com"),
        keeping("credential assignment", "DD-APPLICATION-KEY: ", f(HEX, 40), "DD-TRACE-ID: 12345"),
        keeping("credential URL parameter", "https://db.example/login?user=bob&pass=", f(&an, 12), "https://ci.example/run?passed=12&bypass=1&compass=n"),
        keeping("credential URL parameter", "https://h.example/x?pwd=", f(&an, 12), "https://h.example/x?pwdHint=1"),
        Case { rule: "credential URL parameter", secret: "DRIVER={ODBC Driver 18};SERVER=db;UID=sa;PWD=Secr3tPassw0rd!;Encrypt=yes".into(), near: "pwd: /home/bob; cd /tmp".into(), redacted: "DRIVER={ODBC Driver 18};SERVER=db;UID=sa;PWD=[REDACTED];Encrypt=yes".into() },
        Case { rule: "credential URL parameter", secret: "Server=tcp:db,1433;Uid=sa;Pwd={Secr;et 1};Encrypt=True".into(), near: "Server=tcp:db,1433;Uid=sa;PwdHint=x".into(), redacted: "Server=tcp:db,1433;Uid=sa;Pwd=[REDACTED];Encrypt=True".into() },
        keeping("credential URL parameter", "https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Signature=", f(HEX, 512), "https://storage.googleapis.com/b/o?X-Goog-SignedHeaders=host"),
        keeping("credential URL parameter", "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=", f(HEX, 64), "https://b.s3.amazonaws.com/k?X-Amz-SignedHeaders=host&X-Amz-Expires=900"),
        keeping("credential URL parameter", "https://b.s3.amazonaws.com/k?X-Amz-Security-Token=", format!("{}%2F{}%3D", f(&an, 100), f(&an, 200)), "https://b.s3.amazonaws.com/k?X-Amz-Date=20240101T000000Z"),
        case("Slack token", format!("xoxc-{}-{}-{}-{}", f(DIGITS, 12), f(DIGITS, 12), f(DIGITS, 13), f(HEX, 64)), "xoxc-not-a-token"),
        case("Slack token", format!("xoxd-{}%2F{}%3D", f(&an, 60), f(&an, 90)), "xoxd-example-cookie-name"),
        case("base64 PEM private key", crate::redact::pem::tests::encode(format!("-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----\n", f(&b6, 64)).as_bytes()), crate::redact::pem::tests::encode(format!("-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n", f(&b6, 64)).as_bytes())),
        case("base64 PEM private key", crate::redact::pem::tests::encode(format!("-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n-----END OPENSSH PRIVATE KEY-----\n", f(&b6, 64)).as_bytes()), crate::redact::pem::tests::encode(b"-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----\n")),
    ]
}

fn text_message(text: &str) -> String {
    serde_json::json!({"result": {"text": format!("before {text} after")}}).to_string()
}

#[test]
fn every_provider_format_is_redacted_and_its_near_miss_is_not() {
    let r = Redactor::new(&[]);
    for c in cases() {
        let msg = text_message(&c.secret);
        let got: serde_json::Value = serde_json::from_str(&r.message(&msg)).expect("redacted JSON");
        assert_eq!(
            got["result"]["text"],
            format!("before {} after", c.redacted),
            "{}: {}",
            c.rule,
            c.secret
        );
        let found = r.findings(&msg);
        assert_eq!(found.len(), 1, "{}: {found:?}", c.rule);
        assert_eq!(found[0].rule, c.rule, "{}", c.secret);
        assert_eq!(found[0].path, "result.text");

        let near = text_message(&c.near);
        assert!(
            matches!(r.message(&near), Cow::Borrowed(_)),
            "{}: near miss {} was changed: {}",
            c.rule,
            c.near,
            r.message(&near)
        );
        assert!(r.findings(&near).is_empty(), "{}: {}", c.rule, c.near);
    }
}

#[test]
fn at_least_thirty_providers() {
    let names = providers();
    assert!(names.len() >= 50, "{} formats: {names:?}", names.len());
    // The rule names of the table above, minus the generic ones, are the providers.
    let mut tested: Vec<&str> = cases().iter().map(|c| c.rule).collect();
    tested.dedup();
    for name in &names {
        assert!(tested.contains(name), "{name} has no table test");
    }
}

#[test]
fn keys_inside_json_text_and_next_to_punctuation() {
    let r = Redactor::new(&[]);
    let key = format!("sk_live_{}", fake(&alnum(), 24, 7));
    for text in [
        format!("({key})"),
        format!("\"{key}\","),
        format!("key={key};"),
        format!("é{key}é"),
    ] {
        let msg = serde_json::json!({ "t": text }).to_string();
        assert!(!r.message(&msg).contains(&key), "{text}");
    }
    // A key glued to more letters is not that key.
    let glued = serde_json::json!({ "t": format!("x{key}") }).to_string();
    assert!(matches!(r.message(&glued), Cow::Borrowed(_)));
}

#[test]
fn new_credential_names() {
    for secret in [
        "pwd",
        "pass",
        "db_pass",
        "userPwd",
        "SMTP_PASS",
        "passphrase",
        "clientKey",
        "client_key",
        "privateKey",
        "AccountKey",
        "accountkey",
        "SharedAccessKey",
        "appKey",
        "DD_APP_KEY",
        "DD-APPLICATION-KEY",
        "Ocp-Apim-Subscription-Key",
        "creds",
    ] {
        assert!(is_secret_name(secret), "{secret} is a credential name");
    }
    for data in [
        "maxTokens",
        "progressToken",
        "nextCursor",
        "passed",
        "passive",
        "compass",
        "bypass",
        "passCount",
        "pass_rate",
        "firstPass",
        "passthrough",
        "keyPass_count",
    ] {
        assert!(!is_secret_name(data), "{data} is data");
    }
    // In prose, the shorthands are not assignments.
    assert!(is_secret_assignment_name("password"));
    assert!(!is_secret_assignment_name("pass"));
    assert!(!is_secret_assignment_name("pwd"));
}

#[test]
fn new_names_through_the_writer() {
    let r = Redactor::new(&[]);
    let msg = r#"{"params":{"pwd":"hunter22","pass":"x1","passphrase":"a b","clientKey":"k","privateKey":"p","AccountKey":"a==","passed":3,"compass":"n","bypass":true,"maxTokens":5,"note":"pwd: /home/bob, pass: 3 tests"}}"#;
    assert_eq!(
        r.message(msg),
        r#"{"params":{"pwd":"[REDACTED]","pass":"[REDACTED]","passphrase":"[REDACTED]","clientKey":"[REDACTED]","privateKey":"[REDACTED]","AccountKey":"[REDACTED]","passed":3,"compass":"n","bypass":true,"maxTokens":5,"note":"pwd: /home/bob, pass: 3 tests"}}"#
    );
    let conn = r#"{"t":"DefaultEndpointsProtocol=https;AccountName=a;AccountKey=c2VjcmV0LWtleS1ieXRlcw==;EndpointSuffix=core.windows.net"}"#;
    assert_eq!(
        r.message(conn),
        r#"{"t":"DefaultEndpointsProtocol=https;AccountName=a;AccountKey=[REDACTED];EndpointSuffix=core.windows.net"}"#
    );
}

#[test]
fn look_alikes_pass_writer_and_check() {
    let r = Redactor::new(&[]);
    for text in [
        "sk-learn",
        "scikit-learn (sk-learn) 1.5",
        "0b1d2c3e-4f50-6789-abcd-ef0123456789",
        "sha256:4b825dc642cb6eb9a060e54bf8d69288fbee4904a1b2c3d4e5f60718293a4b5c",
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
        "maxTokens progressToken nextCursor",
        "the key-value store",
        "SKU-12345",
        "pattern matching with patterns",
        "See https://api.slack.com/messaging/webhooks",
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36",
        "10:AA meeting",
    ] {
        let msg = serde_json::json!({"result": {"text": text}}).to_string();
        assert!(
            matches!(r.message(&msg), Cow::Borrowed(_)),
            "{text} was changed: {}",
            r.message(&msg)
        );
        assert!(r.findings(&msg).is_empty(), "{text}");
    }
}

#[test]
fn signed_url_parameters() {
    for secret in [
        "X-Amz-Signature",
        "X-Goog-Signature",
        "x-amz-signature",
        "X-Amz-Security-Token",
        "X-Amz-Credential",
        "X-Goog-Credential",
        "sig",
        "signature",
        "key",
        "PWD",
        "Pwd",
        "Password",
    ] {
        assert!(is_secret_param(secret), "{secret}");
    }
    for data in [
        "X-Amz-Algorithm",
        "X-Amz-SignedHeaders",
        "X-Goog-Date",
        "X-Amz-Expires",
        "signatureVersion",
        "UID",
        "SERVER",
    ] {
        assert!(!is_secret_param(data), "{data}");
    }
}
