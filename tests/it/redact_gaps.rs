//! The redaction gaps a hostile tester found, end to end through the real writer and
//! `redact --check --strict`: ODBC/ADO.NET passwords, signed-URL signatures, Slack
//! `xoxc-`/`xoxd-` tokens and base64 PEM private keys are redacted; a certificate (and
//! its base64) is public and passes `--check --strict`.

use crate::support::*;

const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const HEX: &str = "0123456789abcdef";

fn base64(bytes: &[u8]) -> String {
    let a = B64.as_bytes();
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &c)| n | u32::from(c) << (16 - 8 * i));
        for i in 0..4 {
            out.push(match i <= chunk.len() {
                true => char::from(a[(n >> (18 - 6 * i) & 63) as usize]),
                false => '=',
            });
        }
    }
    out
}

/// A PEM block of `label` with four random 64-character base64 lines.
fn pem(label: &str, seed: u64) -> String {
    let lines: Vec<String> = (0..4).map(|i| fake(B64, 64, seed + i)).collect();
    format!(
        "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
        lines.join("\n")
    )
}

fn record(env: &Env, session: &str, message: &str, redact: bool) {
    let mut cmd = env.mcptape(["record", session]);
    if !redact {
        cmd.arg("--no-redact");
    }
    cmd.arg("--")
        .args([
            python(),
            peer("py_client.py"),
            "echo".into(),
            "--message".into(),
        ])
        .arg(message)
        .arg("--")
        .args(proxy_argv("everything", &everything_server()));
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn redact_gaps_are_closed_and_certificates_pass_check_strict() {
    let env = Env::new();
    let odbc_pwd = format!("Secr3t{}!", fake(B64, 12, 1));
    let goog_sig = fake(HEX, 256, 2);
    let amz_sig = fake(HEX, 64, 3);
    let xoxc = format!(
        "xoxc-{}-{}-{}-{}",
        fake("0123456789", 12, 4),
        fake("0123456789", 12, 5),
        fake("0123456789", 13, 6),
        fake(HEX, 64, 7)
    );
    let xoxd = format!(
        "xoxd-{}%2F{}%3D",
        fake(B64, 60, 8).replace(['+', '/'], "A"),
        fake(B64, 90, 9).replace(['+', '/'], "B")
    );
    let key_b64 = base64(pem("RSA PRIVATE KEY", 10).as_bytes());
    let secrets = [
        format!("DRIVER={{ODBC Driver 18}};SERVER=db;UID=sa;PWD={odbc_pwd};Encrypt=yes"),
        format!(
            "https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Signature={goog_sig}"
        ),
        format!("https://b.s3.amazonaws.com/k?X-Amz-Expires=900&X-Amz-Signature={amz_sig}"),
        xoxc.clone(),
        xoxd.clone(),
        format!("{{\"tls.key\": \"{key_b64}\"}}"),
    ];
    let cert = pem("CERTIFICATE", 20);
    let cert_b64 = base64(cert.as_bytes());
    let message = format!(
        "{} cert: {cert} and tls.crt {cert_b64} end",
        secrets.join(" and ")
    );

    record(&env, "s", &message, true);
    let tape = std::fs::read_to_string(env.tape("s")).expect("tape");
    for secret in [
        &odbc_pwd[..],
        &goog_sig,
        &amz_sig,
        &xoxc,
        &xoxd,
        &key_b64[..60],
    ] {
        assert!(!tape.contains(secret), "{secret} reached the tape: {tape}");
    }
    assert!(tape.contains("PWD=[REDACTED];Encrypt=yes"), "{tape}");
    let cert_line = cert.lines().nth(1).expect("a base64 line");
    assert!(
        tape.contains(cert_line) && tape.contains(&cert_b64),
        "{tape}"
    );
    let out = run(&mut env.mcptape(["redact", "--check", "--strict", "s"]));
    assert!(
        out.status.success(),
        "a certificate is public: {}",
        text(&out)
    );

    // Without the writer, `redact --check` names the rules and `redact` closes them.
    record(&env, "raw", &message, false);
    let out = run(&mut env.mcptape(["redact", "--check", "raw"]));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let out = run(&mut env.mcptape(["redact", "raw"]));
    assert!(out.status.success(), "{}", text(&out));
    let after = std::fs::read_to_string(env.tape("raw")).expect("tape");
    for secret in [
        &odbc_pwd[..],
        &goog_sig,
        &amz_sig,
        &xoxc,
        &xoxd,
        &key_b64[..60],
    ] {
        assert!(!after.contains(secret), "{secret} survived `redact`");
    }
    let out = run(&mut env.mcptape(["redact", "--check", "--strict", "raw"]));
    assert!(out.status.success(), "{}", text(&out));
}
